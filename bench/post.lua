-- wrk script: every request is POST /banner/next without a body.
wrk.method = "POST"
