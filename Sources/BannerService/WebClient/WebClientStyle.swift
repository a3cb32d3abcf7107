// The web client's app.css, compiled into the binary (no files to ship, no build step).
// Edit it here as the app.css it is.

extension WebClient {
    /// `/app.css`.
    static let style = #"""
        :root {
            color-scheme: light;
            --ink: #1d2330;
            --muted: #5b6475;
            --accent: #2457d6;
            --surface: #ffffff;
            --page: #f3f4f7;
            --radius: 14px;
            font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
        }

        * { box-sizing: border-box; }

        body {
            margin: 0;
            background: var(--page);
            color: var(--ink);
        }

        .carousel {
            max-width: 1200px;
            margin: 0 auto;
            padding: clamp(8px, 2vw, 24px);
        }

        .stage {
            position: relative;
            overflow: hidden;
            border-radius: var(--radius);
            background: var(--surface);
            box-shadow: 0 10px 30px rgba(29, 35, 48, 0.12);
        }

        .slide {
            --placeholder-hue: 220;
            position: relative;
            margin: 0;
            aspect-ratio: 8 / 3;
            background: linear-gradient(135deg, hsl(var(--placeholder-hue) 70% 45%), hsl(calc(var(--placeholder-hue) + 40) 70% 35%));
        }

        .slide-link { display: block; width: 100%; height: 100%; }
        .slide-link:not([href]) { cursor: default; }

        .slide-image {
            display: block;
            width: 100%;
            height: 100%;
            object-fit: cover;
        }

        .slide.missing-image .slide-image { visibility: hidden; }

        .slide-caption {
            position: absolute;
            left: 0;
            right: 0;
            bottom: 0;
            padding: clamp(12px, 3vw, 28px) clamp(16px, 4vw, 40px);
            color: #fff;
            font-size: clamp(1.1rem, 2.6vw, 2rem);
            font-weight: 650;
            line-height: 1.25;
            text-shadow: 0 1px 3px rgba(0, 0, 0, 0.45);
            background: linear-gradient(to top, rgba(0, 0, 0, 0.55), rgba(0, 0, 0, 0));
            pointer-events: none;
        }

        .slide.missing-image .slide-caption {
            top: 0;
            display: flex;
            align-items: center;
            justify-content: center;
            text-align: center;
            background: none;
            font-size: clamp(1.4rem, 4vw, 3rem);
        }

        .enter-forward { animation: enter-forward 420ms cubic-bezier(0.2, 0.8, 0.2, 1); }
        .enter-backward { animation: enter-backward 420ms cubic-bezier(0.2, 0.8, 0.2, 1); }
        .enter-jump { animation: enter-jump 300ms ease-out; }

        @keyframes enter-forward { from { transform: translateX(12%); opacity: 0.2; } to { transform: none; opacity: 1; } }
        @keyframes enter-backward { from { transform: translateX(-12%); opacity: 0.2; } to { transform: none; opacity: 1; } }
        @keyframes enter-jump { from { opacity: 0; } to { opacity: 1; } }

        .progress {
            position: absolute;
            left: 0;
            right: 0;
            bottom: 0;
            height: 4px;
            background: rgba(255, 255, 255, 0.25);
        }

        .progress-bar {
            height: 100%;
            background: #fff;
            transform: scaleX(0);
            transform-origin: left;
        }

        .controls {
            display: flex;
            align-items: center;
            justify-content: center;
            gap: 12px;
            margin-top: 14px;
            flex-wrap: wrap;
        }

        button {
            font: inherit;
            color: var(--ink);
            background: var(--surface);
            border: 1px solid #cfd4de;
            border-radius: 999px;
            min-height: 40px;
            min-width: 40px;
            padding: 0 14px;
            cursor: pointer;
        }

        button:hover:not(:disabled) { border-color: var(--accent); }
        button:disabled { opacity: 0.4; cursor: default; }
        button:focus-visible, .slide-link:focus-visible, .token-input:focus-visible {
            outline: 3px solid var(--accent);
            outline-offset: 3px;
        }

        .previous-button, .next-button { font-size: 1.6rem; line-height: 1; padding: 0; }
        .pause-button { min-width: 96px; }
        .pause-button[aria-pressed="true"] { background: var(--ink); color: #fff; border-color: var(--ink); }

        .dots {
            display: flex;
            gap: 4px;
            list-style: none;
            margin: 0;
            padding: 0;
        }

        .dot {
            min-width: 24px;
            min-height: 24px;
            padding: 0;
            border: none;
            background: none;
            display: grid;
            place-items: center;
        }

        .dot::before {
            content: "";
            width: 10px;
            height: 10px;
            border-radius: 50%;
            background: #b9c0cd;
            transition: transform 150ms, background 150ms;
        }

        .dot[aria-current="true"]::before { background: var(--accent); transform: scale(1.3); }

        .status, .error, .empty {
            margin: 0 0 12px;
            padding: 10px 14px;
            border-radius: 10px;
            text-align: center;
        }

        .status { background: #fff4d6; color: #6b4e00; }
        .error { margin: 12px 0 0; background: #fde4e4; color: #8a1c1c; }
        .empty { padding: 48px 16px; background: var(--surface); color: var(--muted); font-size: 1.2rem; }
        .offline .stage { filter: grayscale(0.6); }

        .token-dialog {
            border: none;
            border-radius: var(--radius);
            padding: 24px;
            max-width: 420px;
            box-shadow: 0 20px 50px rgba(0, 0, 0, 0.3);
        }

        .token-dialog::backdrop { background: rgba(20, 24, 33, 0.5); }
        .token-dialog h2 { margin: 0 0 8px; font-size: 1.25rem; }
        .token-message { color: var(--muted); }
        .token-input { display: block; width: 100%; margin-top: 6px; padding: 10px; font: inherit; border: 1px solid #cfd4de; border-radius: 8px; }
        .token-actions { display: flex; justify-content: flex-end; gap: 8px; margin-top: 16px; }
        .token-save { background: var(--accent); color: #fff; border-color: var(--accent); }

        @media (prefers-reduced-motion: reduce) {
            .enter-forward, .enter-backward, .enter-jump { animation: none; }
            .dot::before { transition: none; }
        }
        """#
}
