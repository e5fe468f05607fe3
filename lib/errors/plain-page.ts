/**
 * The error page outside debug mode: status only, nothing about the code, the request or the error,
 * like Symfony's error.html.php.
 */
import { nonceAttribute } from './csp-nonce.js';
import { html, unsafeRaw } from './html.js';
import { statusText } from './status-text.js';

/**
 * The Content-Security-Policy the plain page is sent with: its `<style>` by nonce and its empty
 * `data:` icon, nothing else (the icon is declared so that a browser does not ask for
 * `/favicon.ico`, whose 404 would be one more logged error). Whether the page may be framed stays
 * the application's choice (no `frame-ancestors`): it is the public error page of the
 * application's own URLs.
 */
export function plainPagePolicy(nonce: string): string {
  return `default-src 'none'; style-src 'nonce-${nonce}'; img-src data:; base-uri 'none'; form-action 'none'`;
}

/** Renders the minimal public error page for a status; `nonce` is the response's CSP nonce (see plainPagePolicy). */
export function renderPlainPage(status: number, charset = 'UTF-8', nonce?: string): string {
  const reason = statusText(status);
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="${charset}">
<meta name="robots" content="noindex,nofollow,noarchive">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>An Error Occurred: ${reason}</title>
<link rel="icon" href="data:,">
<style${nonceAttribute(nonce)}>${unsafeRaw(STYLE)}</style>
</head>
<body>
<main class="container">
<h1>Oops! An Error Occurred</h1>
<h2>The server returned a "${status} ${reason}".</h2>
<p>Something went wrong while handling your request. If you were in the middle of something, please try again in a moment; if the problem stays, let us know what you were doing when it happened.</p>
</main>
</body>
</html>
`.toString();
}

// Our own constant CSS, the text of the page's `<style>`.
const STYLE = `
:root { color-scheme: light dark; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; background: #f5f6f8; color: #1d2330; }
@media (prefers-color-scheme: dark) { body { background: #0e1116; color: #e3e7ee; } }
.container { max-width: 720px; margin: 12vh auto 0; padding: 0 20px; }
h1 { font-size: 28px; margin: 0 0 8px; }
h2 { font-size: 18px; font-weight: 500; margin: 0 0 16px; }
`;
