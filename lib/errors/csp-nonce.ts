import { randomBytes } from 'node:crypto';
import { html, type SafeHtml } from './html.js';

/**
 * A fresh nonce for one response's Content-Security-Policy: 128 random bits in base64, the form
 * CSP's `'nonce-...'` source reads. One per response, never reused: a nonce a client has seen once
 * would let its own script run on the next page.
 */
export function createCspNonce(): string {
  return randomBytes(16).toString('base64');
}

/** The ` nonce="..."` attribute of an inline `<script>` or `<style>`, or nothing without a nonce. */
export function nonceAttribute(nonce: string | undefined): SafeHtml {
  return nonce === undefined ? html`` : html` nonce="${nonce}"`;
}
