#!/usr/bin/env python3
"""Holds the service to its OpenAPI document with schemathesis, a third party.

Starts the debug `banner-server` on 127.0.0.1 and a free port with a sample carousel, runs
`schemathesis run` with every check against `/openapi.json`, with a fixed seed so that a finding
can be replayed, and fails on any finding. The event stream is left out: it never ends, which
schemathesis cannot read (Tests/BannerServiceTests cover it).

Usage: test_openapi.py SCHEMATHESIS [BANNER_SERVER]
"""
import json
import os
import subprocess
import sys
import tempfile
import threading

SEED = 20261201
# With a fixed seed a run explores the same cases each time: more examples make one run longer, not
# later runs wiser. 50 of each operation, beside the coverage phase's boundary cases, fit CI's time
# (EXAMPLES_PER_OPERATION=500 make test-openapi explores further, by hand).
EXAMPLES_PER_OPERATION = int(os.environ.get("EXAMPLES_PER_OPERATION", "50"))
# The control token changes what commands answer (401, the same operations authorized) and nothing
# else (admin requests come from this host either way): the run behind it takes the commands only.
COMMANDS = r"/banner/(next|previous|pause|resume|index)$"
CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemathesis.toml")


def start_service(executable, config_path, store_path, token=None):
    """The service as a child, on a fresh SQLite store, and its port once it printed `listening on`."""
    env = {"PATH": "/usr/bin:/bin"}
    if token:
        env["CAROUSEL_CONTROL_TOKEN"] = token
    # The default 16 KiB per connection: schemathesis sends queries of hundreds of parameters, which
    # libmicrohttpd once left unanswered until the timeout (docs/ARCHITECTURE.md, "Query strings").
    process = subprocess.Popen(
        [executable, "--config", config_path, "--store", store_path, "--host", "127.0.0.1", "--port", "0",
         "--log-level", "warning"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    errors = []
    stderr_reader = threading.Thread(target=lambda: errors.extend(process.stderr), daemon=True)
    stderr_reader.start()
    line = process.stdout.readline()  # blocks until the line, or EOF if the service failed
    if not line.startswith("listening on http://"):
        process.wait(timeout=30)
        stderr_reader.join(timeout=30)
        raise SystemExit(f"banner-server did not start: {line!r} {''.join(errors)}")
    return process, int(line.strip().rsplit(":", 1)[1]), stderr_reader, errors


def main():
    schemathesis = sys.argv[1]
    executable = sys.argv[2] if len(sys.argv) > 2 else ".build/debug/banner-server"
    banners = [
        {"id": f"b{n}", "image": f"https://cdn.example.com/{n}.png", "caption": f"Banner {n}",
         "link": "https://shop.example.com/" if n % 2 == 0 else None, "duration": 2.5 if n == 1 else None}
        for n in range(5)
    ]
    failures = 0
    with tempfile.TemporaryDirectory() as directory:
        config_path = os.path.join(directory, "carousel.json")
        with open(config_path, "w") as config:
            json.dump({"interval": 4.0, "banners": banners}, config)
        # Open (a carousel's operations, and the service's), and commands behind a token (the 401s
        # must conform as well): all at once, each schemathesis against a service of its own (the
        # cores share them), their outputs in turn.
        runs = []
        for name, token, paths in (("carousels", None, ["--include-path-regex", "^/carousels"]),
                                   ("service", None, ["--exclude-path-regex", "^/carousels"]),
                                   ("token", "openapi-test-token", ["--include-path-regex", COMMANDS])):
            store_path = os.path.join(directory, f"store-{name}", "carousel.db")
            process, port, stderr_reader, errors = start_service(executable, config_path, store_path, token)
            command = [
                schemathesis, "--config-file", CONFIG, "run", f"http://127.0.0.1:{port}/openapi.json",
                # Every check runs by default; naming them here (`--checks all`) would also
                # override the per-operation exceptions of schemathesis.toml.
                "--seed", str(SEED), "--max-examples", str(EXAMPLES_PER_OPERATION),
                "--no-color", "--workers", "1", "--request-timeout", "10",
                # Hypothesis gives up an operation whose generated values it mostly filters out (the
                # preview's `at`, a date-time and an audience name together): that says something
                # of the generator, not of the service, and which operation trips it moved with
                # how the operations are shared out between the runs.
                "--suppress-health-check", "filter_too_much",
                "--exclude-path", "/banner/events", "--exclude-path", "/carousels/{name}/banner/events",
            ] + paths
            if token:
                command += ["--header", f"Authorization: Bearer {token}"]
            output = tempfile.TemporaryFile(mode="w+")
            runs.append((command, subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT), output,
                         process, stderr_reader, errors))
        for command, run, output, process, stderr_reader, errors in runs:
            try:
                returncode = run.wait()
                output.seek(0)
                print("$", " ".join(command), flush=True)
                print(output.read(), flush=True)
                failures += returncode != 0
            finally:
                process.terminate()
                status = process.wait(timeout=60)
                stderr_reader.join(timeout=60)
                if status != 0:
                    print(f"banner-server exited {status}: {''.join(errors)}")
                    failures += 1
    print(f"{3 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
