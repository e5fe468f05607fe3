// The exception panel shows the source lines around an error's first application frames, as the
// debug error page does, read when the panel is shown; a file changed since the request says so.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearSourceCache } from '../../../../lib/errors/stack-frames.js';
import type { Profile } from '../../../../lib/profiler/profile.js';
import { renderProfilePage } from '../../../../lib/profiler/ui/index.js';
import { declarationsFor } from '../../../css-rules.js';
import { urls } from './fixtures.js';

const TIME = Date.UTC(2026, 10, 21, 21, 40, 54);
let dir = '';

test.before.each(() => {
  dir = mkdtempSync(join(tmpdir(), 'http-kernel-panel-excerpts-'));
  clearSourceCache();
});

test.after.each(() => {
  rmSync(dir, { recursive: true, force: true });
  clearSourceCache();
});

/** A source file of `count` numbered lines (`line N;`), last modified at `modified` (epoch ms). */
function source(name: string, count: number, modified = TIME - 60_000, lineText = (n: number) => `line ${n};`): string {
  const file = join(dir, name);
  writeFileSync(file, Array.from({ length: count }, (_, i) => lineText(i + 1)).join('\n'));
  utimesSync(file, modified / 1000, modified / 1000);
  return file;
}

type Frame = { function: string; file: string | null; line: number | null; column: number | null; internal: boolean };

function frame(file: string | null, line: number | null, internal = false): Frame {
  return { function: 'handler', file, line, column: 3, internal };
}

function panel(frames: Frame[], handled: Frame[] = []): string {
  const exception = { exceptions: [{ class: 'Error', message: 'boom', status: 500, frames, stack: 'Error: boom' }], ...(handled.length > 0 ? { handled: [{ class: 'TypeError', message: 'again', status: 500, frames: handled, stack: 'TypeError: again' }] } : {}) };
  const profile: Profile = { token: 'a1b2c3', parent: null, ip: '127.0.0.1', method: 'GET', url: 'http://127.0.0.1:8000/', time: TIME, status: 500, children: [], collectors: { exception } };
  const html = renderProfilePage({ profile, panel: 'exception', parent: null, children: [], urls, timeZone: 'UTC' });
  const match = /<main class="panel" id="panel-exception">([\s\S]*)<\/main>/.exec(html);
  assert.ok(match, 'the page has the exception panel');
  return match![1]!;
}

/** The excerpts of a panel, each as the numbers of its lines and the highlighted one. */
function excerptsOf(html: string): Array<{ numbers: number[]; highlight: number | null }> {
  return [...html.matchAll(/<pre class="excerpt" tabindex="0"><code>([\s\S]*?)<\/code><\/pre>/g)].map(([, code]) => ({
    numbers: [...code!.matchAll(/<span class="number">(\d+)<\/span>/g)].map((m) => Number(m[1])),
    highlight: Number(/<span class="line highlight"><span class="number">(\d+)<\/span>/.exec(code!)?.[1] ?? NaN) || null,
  }));
}

test('a frame in a source file shows the five lines either side of its own, its own highlighted', () => {
  const file = source('handler.ts', 40);
  const html = panel([frame(file, 20)]);
  assert.equal(excerptsOf(html), [{ numbers: [15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25], highlight: 20 }]);
  assert.match(html, '<span class="line highlight"><span class="number">20</span>line 20;</span>');
  assert.not.match(html, 'has changed since the request');
});

test('only the first three application frames of each error that can be read get one; internal frames none', () => {
  const file = source('app.ts', 100);
  const missing = join(dir, 'gone.ts');
  const html = panel(
    [frame(file, 10, true), frame(missing, 3), frame(file, 30), frame(null, null), frame(file, 50), frame(file, 70), frame(file, 90)],
    [frame(file, 5)],
  );
  // The internal frame and the missing file take no excerpt from the three; the fourth readable frame gets none; the handled chain has its own three.
  assert.equal(excerptsOf(html).map((excerpt) => excerpt.highlight), [30, 50, 70, 5]);
});

test('a file changed after the request was made is shown with a note that its lines may have moved', () => {
  const file = source('edited.ts', 12, TIME + 5_000);
  const html = panel([frame(file, 6)]);
  assert.match(html, /<p class="excerpt-changed">This file has changed since the request: these may not be the lines it ran.<\/p><pre class="excerpt" tabindex="0">/);
  assert.equal(excerptsOf(html).length, 1);
});

test('source text is escaped, and a frame naming a file that is no source shows nothing of it', () => {
  const file = source('page.ts', 3, TIME - 1, (n) => `const s${n} = '</code><script>alert(${n})</script>';`);
  const secret = join(dir, '.env');
  writeFileSync(secret, 'API_KEY=hunter2\n');
  const html = panel([frame(secret, 1), frame(file, 2)]);
  assert.not.match(html, '<script>alert');
  assert.match(html, 'const s2 = &#39;&lt;/code&gt;&lt;script&gt;alert(2)&lt;/script&gt;&#39;;');
  assert.not.match(html, 'hunter2');
  assert.equal(excerptsOf(html).map((excerpt) => excerpt.highlight), [2]);
});

test('the excerpt and its highlighted line have their own look, in light and dark', () => {
  const html = renderProfilePage({ profile: { token: 'a1b2c3', parent: null, ip: '127.0.0.1', method: 'GET', url: 'http://127.0.0.1:8000/', time: TIME, status: 200, children: [], collectors: {} }, panel: 'exception', parent: null, children: [], urls, timeZone: 'UTC' });
  assert.is(declarationsFor(html, '.excerpt .highlight').get('background'), 'var(--highlight)');
  assert.is(declarationsFor(html, '.excerpt .line').get('white-space'), 'pre');
  assert.match(html, /:root \{[^}]*--highlight: #[0-9a-f]{6}/);
  assert.match(html, /@media \(prefers-color-scheme: dark\) \{\s*:root \{[^}]*--highlight: #[0-9a-f]{6}/);
});

test.run();
