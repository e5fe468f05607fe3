// Internal: lets the debug toolbar run on a page whose Content-Security-Policy would block it, as
// Symfony's ContentSecurityPolicyHandler does (with hashes here rather than nonces: the toolbar's
// inline scripts and style are constants, see TOOLBAR_CSP_HASHES).
import { TOOLBAR_CSP_HASHES } from './ui/index.js';

/** CSP response headers, whose policies all apply (a report-only one reports what it would block). */
export const CSP_HEADERS = ['content-security-policy', 'content-security-policy-report-only'] as const;

/**
 * `policy` with the toolbar's hashes added where its inline `<script>` or `<style>` elements
 * would be blocked: to the directive that governs them (`script-src-elem`, else `script-src`,
 * else `default-src`, whose sources a new `script-src` then starts from, so that nothing else is
 * allowed more). A directive that allows inline elements already (`'unsafe-inline'` with no hash
 * or nonce, which a hash would turn off) is left alone, and so is a policy governing neither.
 */
export function allowToolbarInPolicy(policy: string): string {
  if (policy.indexOf(',') === -1) return allowToolbarInOnePolicy(policy);
  // A header value with commas is several policies (CSP 3's serialized list), each enforced: each
  // needs the hashes, and the sources of one are never another's (a `'none'` of the next dropped).
  const policies = policy.split(',');
  const allowed = policies.map(allowToolbarInOnePolicy);
  return allowed.some((text, i) => text !== policies[i]) ? allowed.map((text) => text.trim()).filter((text) => text !== '').join(', ') : policy;
}

/** allowToolbarInPolicy for a header value that holds one policy. */
function allowToolbarInOnePolicy(policy: string): string {
  const directives = policy.split(';').map((text) => text.trim().split(/\s+/).filter((token) => token !== ''));
  const named = (name: string): string[] | undefined => directives.find((tokens) => tokens[0]?.toLowerCase() === name);
  let changed = false;
  for (const [kind, hashes] of [['script', TOOLBAR_CSP_HASHES.script], ['style', TOOLBAR_CSP_HASHES.style]] as const) {
    let directive = named(`${kind}-src-elem`) ?? named(`${kind}-src`);
    if (directive === undefined) {
      const fallback = named('default-src');
      if (fallback === undefined) continue;
      directive = [`${kind}-src`, ...fallback.slice(1)];
      if (allowsInline(directive)) continue;
      directives.push(directive);
    } else if (allowsInline(directive)) continue;
    // 'none' with other sources would be ignored by browsers anyway; dropped so the list stays valid.
    const none = directive.findIndex((token) => token.toLowerCase() === "'none'");
    if (none !== -1) directive.splice(none, 1);
    for (const hash of hashes) if (!directive.includes(hash)) directive.push(hash);
    changed = true;
  }
  return changed ? directives.filter((tokens) => tokens.length > 0).map((tokens) => tokens.join(' ')).join('; ') : policy;
}

/** Whether a source list lets every inline element run: 'unsafe-inline' counts only without hashes and nonces. */
function allowsInline(directive: readonly string[]): boolean {
  let unsafeInline = false;
  for (const token of directive.slice(1)) {
    const source = token.toLowerCase();
    if (source === "'unsafe-inline'") unsafeInline = true;
    else if (source.startsWith("'nonce-") || source.startsWith("'sha256-") || source.startsWith("'sha384-") || source.startsWith("'sha512-") || source === "'strict-dynamic'") return false;
  }
  return unsafeInline;
}
