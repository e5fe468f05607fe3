// Reads our own stylesheets the way a test needs them: the declarations a selector gets from the
// rules that name it. For layout properties a browser-free test can check (does a flex item
// shrink, does a long word wrap), not a general CSS parser: no specificity, no inheritance.

/** A style rule: its comma-separated selectors, its declarations, and the media query it sits in ('' at top level). */
export interface CssRule {
  selectors: string[];
  declarations: Map<string, string>;
  media: string;
}

/** The style rules of `css` in source order, those inside `@media` blocks with their query. */
export function cssRules(css: string, media = ''): CssRule[] {
  const rules: CssRule[] = [];
  const text = css.replace(/\/\*[\s\S]*?\*\//g, '');
  let at = 0;
  while (at < text.length) {
    const open = text.indexOf('{', at);
    if (open === -1) break;
    const prelude = text.slice(at, open).trim();
    const close = matchingBrace(text, open);
    const block = text.slice(open + 1, close);
    if (prelude.startsWith('@media')) rules.push(...cssRules(block, prelude.slice('@media'.length).trim()));
    else if (!prelude.startsWith('@')) rules.push({ selectors: prelude.split(',').map(normalize), declarations: declarationsOf(block), media });
    at = close + 1;
  }
  return rules;
}

/**
 * What the rules naming exactly `selector` (one of their comma-separated selectors) declare,
 * later rules winning, as the cascade does between rules of equal specificity; only top-level
 * rules unless `media` is given.
 */
export function declarationsFor(css: string, selector: string, media = ''): Map<string, string> {
  const wanted = normalize(selector);
  const result = new Map<string, string>();
  for (const rule of cssRules(css)) {
    if (rule.media !== media && rule.media !== '') continue;
    if (!rule.selectors.includes(wanted)) continue;
    for (const [name, value] of rule.declarations) result.set(name, value);
  }
  return result;
}

function matchingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return i;
  }
  return text.length;
}

function declarationsOf(block: string): Map<string, string> {
  const declarations = new Map<string, string>();
  for (const part of block.split(';')) {
    const colon = part.indexOf(':');
    if (colon === -1) continue;
    declarations.set(part.slice(0, colon).trim().toLowerCase(), part.slice(colon + 1).trim());
  }
  return declarations;
}

function normalize(selector: string): string {
  return selector.trim().replace(/\s+/g, ' ');
}
