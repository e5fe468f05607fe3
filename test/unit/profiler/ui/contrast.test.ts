// The profiler's text is readable in both schemes: WCAG AA, 4.5:1, for each text colour on the backgrounds it is drawn on.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderSearchPage } from '../../../../lib/profiler/ui/index.js';
import { colorsOf, contrastRatio, DARK } from '../../../contrast.js';
import { inlineElements } from '../../../csp-check.js';
import { urls } from './fixtures.js';

/** Text colour on background, by custom property, where the pages draw one on the other. */
const PAIRS = [
  ['ok', 'ok-bg'], // .status-2xx, .badge.ok, .verdict-match
  ['redirect', 'redirect-bg'],
  ['warn', 'warn-bg'],
  ['error', 'error-bg'],
  ['muted', 'none-bg'], // .status-none, .verdict-mismatch
  ['muted', 'card'],
  ['muted', 'bg'],
  ['muted', 'selected'],
  ['muted', 'code-bg'],
  ['muted', 'highlight'], // an excerpt's line number on its highlighted line
  ['fg', 'card'],
  ['fg', 'none-bg'],
  ['fg', 'warn-bg'],
  ['fg', 'selected'],
  ['fg', 'highlight'],
  ['link', 'card'],
  ['link', 'bg'],
  ['head-fg', 'head'],
  ['error', 'card'],
  ['warn', 'card'],
  ['info', 'card'],
  ['debug', 'card'],
] as const;

const css = inlineElements(renderSearchPage({ results: [], criteria: {}, urls, timeZone: 'UTC' })).find((element) => element.tag === 'style')!.text;

for (const [scheme, media] of [['light', ''], ['dark', DARK]] as const) {
  test(`every text colour of the profiler's pages has a contrast of at least 4.5:1 on its background (${scheme})`, () => {
    const colors = colorsOf(css, ':root', media);
    const low = PAIRS.map(([fg, bg]) => ({ pair: `--${fg} ${colors.get(fg)} on --${bg} ${colors.get(bg)}`, ratio: contrastRatio(colors.get(fg)!, colors.get(bg)!) }))
      .filter(({ ratio }) => ratio < 4.5)
      .map(({ pair, ratio }) => `${pair}: ${ratio.toFixed(2)}`);
    assert.equal(low, []);
  });
}

test.run();
