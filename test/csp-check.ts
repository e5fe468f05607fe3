// Reads a page the way a browser applies a Content-Security-Policy to it, for what our pages hold:
// inline <script> and <style> elements (allowed by nonce or hash), attributes (inline event
// handlers, `javascript:` URLs and `style=` that a strict policy blocks), and the sources a
// directive allows. A small reader for our own escaped HTML, not a general HTML parser.
import { createHash } from 'node:crypto';

/** An inline `<script>` or `<style>` element: its attributes and text. */
export interface InlineElement {
  tag: 'script' | 'style';
  attributes: Map<string, string>;
  text: string;
}

/** The directives of a policy, by lower-case name, with their sources. */
export function parsePolicy(policy: string): Map<string, string[]> {
  const directives = new Map<string, string[]>();
  for (const part of policy.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/).filter((token) => token !== '');
    // As browsers do, a repeated directive is ignored.
    if (name !== undefined && !directives.has(name.toLowerCase())) directives.set(name.toLowerCase(), sources);
  }
  return directives;
}

/** The sources governing `directive` (`script-src-elem` and `-attr` fall back to `script-src`, then `default-src`). */
export function sourcesFor(policy: string, directive: string): string[] | undefined {
  const directives = parsePolicy(policy);
  const chain = /-(elem|attr)$/.test(directive) ? [directive, directive.replace(/-(elem|attr)$/, ''), 'default-src'] : [directive, 'default-src'];
  const fetchDirective = /^(script|style|img|connect|font|media|object|frame|child|worker|manifest)-src/.test(directive);
  for (const name of fetchDirective ? chain : [directive]) {
    const sources = directives.get(name);
    if (sources !== undefined) return sources;
  }
  return undefined;
}

/** Whether a browser runs (applies) this inline element under `policy`. */
export function allowsInline(policy: string, element: InlineElement): boolean {
  const sources = sourcesFor(policy, `${element.tag}-src-elem`);
  if (sources === undefined) return true;
  const nonce = element.attributes.get('nonce');
  const hash = `'sha256-${createHash('sha256').update(element.text, 'utf8').digest('base64')}'`;
  if (nonce !== undefined && nonce !== '' && sources.includes(`'nonce-${nonce}'`)) return true;
  if (sources.includes(hash)) return true;
  const hasNonceOrHash = sources.some((source) => /^'(nonce|sha256|sha384|sha512)-/i.test(source) || source === "'strict-dynamic'");
  return !hasNonceOrHash && sources.includes("'unsafe-inline'");
}

/** The inline `<script>` and `<style>` elements of a page, in order. */
export function inlineElements(page: string): InlineElement[] {
  const elements: InlineElement[] = [];
  for (const match of page.matchAll(/<(script|style)(\s[^>]*)?>([\s\S]*?)<\/\1\s*>/gi)) {
    elements.push({ tag: match[1]!.toLowerCase() as 'script' | 'style', attributes: attributesOf(match[2] ?? ''), text: match[3]! });
  }
  return elements;
}

/** Every start tag outside `<script>`/`<style>` text and comments: its name and attributes. */
export function startTags(page: string): Array<{ name: string; attributes: Map<string, string>; source: string }> {
  const markup = page.replace(/<!--[\s\S]*?-->/g, '').replace(/(<(script|style)(?:\s[^>]*)?>)[\s\S]*?(<\/\2\s*>)/gi, '$1$3');
  const tags: Array<{ name: string; attributes: Map<string, string>; source: string }> = [];
  for (const match of markup.matchAll(/<([a-zA-Z][a-zA-Z0-9-]*)(\s[^>]*)?>/g)) {
    tags.push({ name: match[1]!.toLowerCase(), attributes: attributesOf(match[2] ?? ''), source: match[0] });
  }
  return tags;
}

/** What a strict policy blocks or a page must not hold: inline event handlers, `javascript:` URLs, `style=` attributes. */
export function inlineCode(page: string): string[] {
  const found: string[] = [];
  for (const tag of startTags(page)) {
    for (const [name, value] of tag.attributes) {
      if (name.startsWith('on')) found.push(`${name}= in ${tag.source}`);
      if (name === 'style') found.push(`style= in ${tag.source}`);
      // A browser drops tabs, newlines and leading controls and spaces before reading the scheme.
      const url = decodeEntities(value).replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+/, '');
      if (URL_ATTRIBUTES.has(name) && /^(javascript|vbscript):/i.test(url)) found.push(`${name}="${value}" in ${tag.source}`);
    }
  }
  return found;
}

const URL_ATTRIBUTES = new Set(['href', 'src', 'action', 'formaction', 'data', 'xlink:href', 'poster', 'background', 'srcdoc']);

function attributesOf(text: string): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const match of text.matchAll(/([^\s"'>\/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g)) {
    const name = match[1]!.toLowerCase();
    if (!attributes.has(name)) attributes.set(name, match[2] ?? match[3] ?? match[4] ?? '');
  }
  return attributes;
}

function decodeEntities(text: string): string {
  return text
    .replace(/&#(\d+);?/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x([0-9a-f]+);?/gi, (_, code: string) => String.fromCodePoint(parseInt(code, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&colon;/gi, ':')
    .replace(/&amp;/g, '&');
}
