// WCAG 2 contrast between the colours of our own stylesheets, read from their custom properties:
// a browser-free check that text stays readable in both schemes.
import { declarationsFor } from './css-rules.js';

/** The media query of the dark scheme, as our stylesheets write it. */
export const DARK = '(prefers-color-scheme: dark)';

/** The custom properties (`--name` without its dashes) of `selector` in the light scheme, or in the dark one with `DARK`. */
export function colorsOf(css: string, selector: string, media = ''): Map<string, string> {
  const colors = new Map<string, string>();
  for (const [name, value] of declarationsFor(css, selector, media)) if (name.startsWith('--')) colors.set(name.slice(2), value);
  return colors;
}

/** The WCAG 2 contrast ratio of two `#rgb` or `#rrggbb` colours, from 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [lighter, darker] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (lighter + 0.05) / (darker + 0.05);
}

function luminance(color: string): number {
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(color.trim())?.[1];
  if (hex === undefined) throw new Error(`not a #hex colour: ${color}`);
  const full = hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex;
  const [r, g, b] = [0, 2, 4].map((i) => {
    const channel = parseInt(full.slice(i, i + 2), 16) / 255;
    return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
