// The web client's index.html, compiled into the binary (no files to ship, no build step).
// Edit it here as the index.html it is.

extension WebClient {
    /// The page at `/`: markup only; behaviour and looks come from `/app.js` and `/app.css` (the
    /// Content-Security-Policy allows no inline script or style).
    static let page = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Banner carousel</title>
        <link rel="icon" href="/favicon.svg" type="image/svg+xml">
        <link rel="stylesheet" href="/app.css">
        <script src="/app.js" defer></script>
        </head>
        <body>
        <main class="carousel" aria-roledescription="carousel" aria-label="Banners">
          <p class="status" role="status" hidden></p>
          <div class="stage" hidden>
            <figure class="slide" aria-roledescription="slide" aria-live="polite">
              <a class="slide-link" target="_top" rel="noopener">
                <img class="slide-image" alt="" decoding="async">
              </a>
              <figcaption class="slide-caption"></figcaption>
            </figure>
            <div class="progress" aria-hidden="true"><div class="progress-bar"></div></div>
          </div>
          <p class="empty" hidden>No banners to show yet.</p>
          <div class="controls">
            <button class="previous-button" type="button" aria-label="Previous banner">&#8249;</button>
            <ol class="dots" aria-label="Banners"></ol>
            <button class="next-button" type="button" aria-label="Next banner">&#8250;</button>
            <button class="pause-button" type="button" aria-pressed="false">Pause</button>
          </div>
          <p class="error" role="alert" hidden></p>
          <dialog class="token-dialog" aria-labelledby="token-title">
            <form class="token-form">
              <h2 id="token-title">Control token</h2>
              <p class="token-message"></p>
              <label>Token <input class="token-input" type="password" autocomplete="off" spellcheck="false"></label>
              <div class="token-actions">
                <button class="token-cancel" type="button">Cancel</button>
                <button class="token-save" type="submit">Use token</button>
              </div>
            </form>
          </dialog>
        </main>
        </body>
        </html>
        """#
}
