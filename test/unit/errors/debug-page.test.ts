import { runInNewContext } from 'node:vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderDebugPage, type DebugPageInput } from '../../../lib/errors/debug-page.js';
import { createFileLinker } from '../../../lib/errors/file-link.js';
import { flattenError, type FlatError } from '../../../lib/errors/flatten-error.js';
import type { LogRecord } from '../../../lib/log/log-record.js';
import { colorsOf, contrastRatio, DARK } from '../../contrast.js';
import { inTimeZone } from '../helpers.js';
import { inlineElements } from '../../csp-check.js';

const robots = 'No route found for "GET http://127.0.0.1:8000/robots.txt"';

function notFound(message = robots): FlatError[] {
  class NotFoundHttpError extends Error {
    readonly status = 404;
  }
  class ResourceNotFoundError extends Error {}
  const cause = new ResourceNotFoundError('No routes found for "/robots.txt/".');
  const errors = flattenError(new NotFoundHttpError(message, { cause }));
  // Frames into this file would put its own source (and so every string these tests look for) into excerpts.
  for (const error of errors) error.frames = [{ function: 'match', file: '/nowhere/router.ts', line: 7, column: 3, native: false, internal: false }];
  return errors;
}

function record(overrides: Partial<LogRecord> = {}): LogRecord {
  return {
    time: Date.UTC(2026, 10, 21, 21, 40, 54, 123),
    level: 3,
    levelName: 'ERROR',
    channel: 'request',
    message: 'Uncaught PHP Exception',
    context: {},
    ...overrides,
  };
}

function page(overrides: Partial<DebugPageInput> = {}): string {
  return renderDebugPage({
    errors: notFound(),
    logs: [],
    request: { method: 'GET', uri: 'http://127.0.0.1:8000/robots.txt' },
    status: 404,
    ...overrides,
  });
}

function titleOf(document: string): string {
  return /<title>([\s\S]*?)<\/title>/.exec(document)![1]!;
}

test('is a complete HTML5 document with the charset', () => {
  const document = page({ charset: 'ISO-8859-1' });
  assert.ok(document.includes('<!DOCTYPE html>'));
  assert.ok(document.includes('<meta charset="ISO-8859-1">'));
  assert.ok(document.trimEnd().endsWith('-->'));
  assert.ok(document.includes('</html>'));
  assert.ok(page().includes('<meta charset="UTF-8">'));
});

test('titles the page "<message> (<status> <status text>)" of the outermost error', () => {
  assert.is(titleOf(page()), 'No route found for &quot;GET http://127.0.0.1:8000/robots.txt&quot; (404 Not Found)');
});

test('shows the class chain, the HTTP status and the message in the header', () => {
  const document = page();
  // The arrow is for the eye; screen readers read "caused by" instead.
  assert.match(document, /<a href="#error-1">NotFoundHttpError<\/a>\s*<span class="arrow" aria-hidden="true">←<\/span><span class="visually-hidden">caused by<\/span>\s*<a href="#error-2">ResourceNotFoundError<\/a>/);
  assert.match(document, /HTTP 404 <small>Not Found<\/small>/);
  assert.match(document, /<h1 class="message">No route found for &quot;GET http:\/\/127\.0\.0\.1:8000\/robots\.txt&quot;<\/h1>/);
});

test('a long message is cut in its middle in the page title and the HTML comments, keeping "<message> (<status> <status text>)"', () => {
  const message = `No route found for "GET http://127.0.0.1:8000/search/${'A'.repeat(2000)}?q=end"`;
  const document = page({ errors: notFound(message) });
  const title = titleOf(document);
  assert.ok(title.length < 200, `${title.length} characters of title`);
  assert.ok(title.startsWith('No route found for &quot;GET http://127.0.0.1:8000/search/AAA'), title);
  assert.match(title, /A…A+\?q=end&quot; \(404 Not Found\)$/);
  const comments = document.match(/<!--[\s\S]*?-->/g)!;
  assert.is(comments.length, 2);
  for (const comment of comments) assert.is(comment, `<!-- ${title} -->`);
});

test('a long URL and the 404 message that repeats it are cut in the header, whole in their titles and in the error card', () => {
  const uri = `http://127.0.0.1:8000/search/${'A'.repeat(2000)}?q=<b>`;
  const message = `No route found for "GET ${uri}"`;
  const document = page({ errors: notFound(message), request: { method: 'GET', uri } });
  const escaped = (text: string): string => text.replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  const header = /<header[\s\S]*?<\/header>/.exec(document)![0];
  const shown = header.replace(/<[^>]*>/g, '');
  assert.ok(shown.length < 600, `${shown.length} characters of text in the header`);
  assert.match(header, `<h1 class="message"><span class="elided" title="${escaped(message)}">No route found for &quot;GET http://127.0.0.1:8000/search/AAA`);
  assert.match(header, `<span class="uri"><span class="elided" title="${escaped(uri)}">http://127.0.0.1:8000/search/AAA`);
  assert.match(header, '…');
  assert.match(header, 'AAA?q=&lt;b&gt;</span></span>', 'the end of the URL is kept');
  assert.match(document, `<p class="message">${escaped(message)}</p>`, 'the first error card shows the message whole');
});

test('has one section per error numbered "Exceptions N/M"', () => {
  const document = page();
  assert.ok(document.includes('Exceptions 1/2'));
  assert.ok(document.includes('Exceptions 2/2'));
  assert.not.ok(document.includes('Exceptions 3/2'));
  assert.match(document, /id="error-2">\s*<h3>[^\n]*ResourceNotFoundError/);
});

test('shows the status, code and headers an error carries, and no empty list for a plain cause', () => {
  const [flat] = flattenError(
    Object.assign(new Error('No route found for "POST http://host/health": Method Not Allowed (Allow: GET, HEAD)'), {
      status: 405,
      code: 'ERR_METHOD_NOT_ALLOWED',
      headers: { Allow: 'GET, HEAD' },
    }),
  );
  const document = page({ errors: [flat!, ...notFound().slice(1)], status: 405 });
  assert.ok(document.includes('<dt>Status</dt><dd>405 Method Not Allowed</dd>'));
  assert.ok(document.includes('<dt>Code</dt><dd><code>ERR_METHOD_NOT_ALLOWED</code></dd>'));
  assert.ok(document.includes('<code>Allow: GET, HEAD</code>'));
  assert.is(document.match(/<dl class="meta">/g)!.length, 1);
});

test('escapes a script tag in the error message everywhere it appears', () => {
  const document = page({ errors: notFound('<script>alert(1)</script>') });
  assert.not.ok(document.includes('<script'));
  assert.ok(titleOf(document).startsWith('&lt;script&gt;alert(1)&lt;/script&gt; (404 Not Found)'));
  assert.ok(document.includes('<h1 class="message">&lt;script&gt;alert(1)&lt;/script&gt;</h1>'));
});

test('escapes the request URL and method', () => {
  const document = page({ request: { method: '<b>GET', uri: 'http://x/"><script>alert(1)</script>' } });
  assert.not.ok(document.includes('<script'));
  assert.not.ok(document.includes('<b>GET'));
  assert.ok(document.includes('http://x/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;'));
});

test('escapes log messages, channels and context', () => {
  const document = page({
    logs: [record({ message: '<img src=x onerror=alert(1)>', channel: '<i>ch', context: { uri: '</pre><script>x()</script>' } })],
  });
  assert.not.ok(document.includes('<script'));
  assert.not.ok(document.includes('<img'));
  assert.not.ok(document.includes('<i>ch'));
  assert.ok(document.includes('&lt;img src=x onerror=alert(1)&gt;'));
  assert.ok(document.includes('&lt;/pre&gt;&lt;script&gt;x()&lt;/script&gt;'));
});

test('the Logs section names the time zone its times are in, the server\'s, with each instant in UTC in its tooltip', () => {
  inTimeZone('America/St_Johns', () => {
    const document = page({ logs: [record({ message: 'at half past' })] });
    assert.match(document, '<th>Time <span class="zone">(America/St_Johns)</span></th>');
    // 21:40:54.123 UTC is 18:10:54.123 in St. John's (UTC-03:30 in November).
    assert.match(document, '<time datetime="2026-11-21T21:40:54.123Z" title="2026-11-21T21:40:54.123Z">18:10:54.123</time>');
  });
});

test('the Logs section names a TZ no time zone is by the offset its times are shown at', () => {
  inTimeZone('UTC+3', () => {
    const document = page({ logs: [record({ message: 'at half past' })] });
    assert.match(document, '<th>Time <span class="zone">(UTC-03:00)</span></th>');
    assert.match(document, '<time datetime="2026-11-21T21:40:54.123Z" title="2026-11-21T21:40:54.123Z">18:40:54.123</time>');
  });
});

test('lists the log records in a table with time, level, channel and message', () => {
  const document = page({
    logs: [
      record({ level: 6, levelName: 'INFO', channel: 'router', message: 'Matched route "home".' }),
      record({ message: 'Uncaught NotFoundHttpError', context: { status: 404 } }),
    ],
  });
  assert.match(document, /<th>Time <span class="zone">\([^)]+\)<\/span><\/th><th>Level<\/th><th>Channel<\/th><th>Message<\/th>/);
  assert.ok(document.includes('datetime="2026-11-21T21:40:54.123Z"'));
  assert.match(document, /<time [^>]*>\d\d:\d\d:54\.123<\/time>/);
  assert.match(document, /<td class="level">INFO<\/td>\s*<td class="channel">router<\/td>\s*<td class="log-message">Matched route &quot;home&quot;\.<\/td>/);
  assert.match(document, /<pre class="context">\{\s*&quot;status&quot;: 404\s*\}<\/pre>/);
  assert.is(document.match(/<tr class="level-/g)!.length, 2);
});

test('counts log records by level in the Logs heading, most severe first', () => {
  const document = page({
    logs: [
      record({ level: 7, levelName: 'DEBUG' }),
      record({ level: 7, levelName: 'DEBUG' }),
      record(),
      record({ level: 4, levelName: 'WARNING' }),
    ],
  });
  const heading = /<h2>Logs([\s\S]*?)<\/h2>/.exec(document)![1]!;
  assert.match(heading, /<span class="badge">4<\/span>/);
  assert.match(heading, /1 ERROR<\/span>\s*<span[^>]*>1 WARNING<\/span>\s*<span[^>]*>2 DEBUG/);
});

test('counts a level name no level has (another producer\'s record: constructor, toString) after the known ones, never as Object.prototype\'s member', () => {
  const document = page({
    logs: [
      record({ level: 6, levelName: 'constructor' as never }),
      record({ level: 6, levelName: 'toString' as never }),
      record({ level: 7, levelName: 'DEBUG' }),
      record(),
    ],
  });
  const heading = /<h2>Logs([\s\S]*?)<\/h2>/.exec(document)![1]!;
  assert.match(heading, /1 ERROR<\/span>\s*<span[^>]*>1 DEBUG<\/span>\s*<span class="count level-info">1 constructor<\/span>\s*<span class="count level-info">1 toString<\/span>/);
});

test('says "No log messages" when there are none', () => {
  assert.match(page({ logs: [] }), /<h2>Logs<\/h2>\s*<p class="empty">No log messages<\/p>/);
  assert.not.ok(page({ logs: [record()] }).includes('No log messages'));
});

test('renders context that JSON cannot take', () => {
  const context: Record<string, unknown> = { id: 10n, error: new Error('boom') };
  const cyclic: Record<string, unknown> = { name: 'loop' };
  cyclic.self = cyclic;
  const document = page({ logs: [record({ context }), record({ context: { cyclic } })] });
  assert.ok(document.includes('&quot;10n&quot;'));
  assert.match(document, /&quot;class&quot;: &quot;Error&quot;,\s*&quot;message&quot;: &quot;boom&quot;/);
  assert.ok(document.includes('[Circular'));
});

test('shows an error in a log context with its code and own fields, as the profiler\'s logger panel does; one met again (a cycle) by class and message', () => {
  const error = Object.assign(new Error("ENOENT: no such file or directory, open '/x'"), { code: 'ENOENT', errno: -2, syscall: 'open', path: '/x', again: null as unknown });
  error.again = error;
  const document = page({ logs: [record({ context: { error } })] });
  const shown = /<pre class="context">([\s\S]*?)<\/pre>/.exec(document)![1]!.replaceAll('&quot;', '"').replaceAll('&#39;', "'");
  assert.equal(JSON.parse(shown), { error: { class: 'Error', message: "ENOENT: no such file or directory, open '/x'", code: 'ENOENT', errno: -2, syscall: 'open', path: '/x', again: "Error: ENOENT: no such file or directory, open '/x'" } });
});

test('shows an error of another realm (a vm context\'s) in a log context as one of this realm, not as {}', () => {
  const document = page({ logs: [record({ context: { error: runInNewContext('new TypeError("boom")') } })] });
  assert.match(document, /&quot;error&quot;: \{\s*&quot;class&quot;: &quot;TypeError&quot;,\s*&quot;message&quot;: &quot;boom&quot;\s*\}/);
});

test('stays bounded for a request that logged 1,000 huge records: messages are cut and the records past 1 MB are counted', () => {
  const logs = Array.from({ length: 1000 }, (_, i) => record({ message: `record ${i} ${'m'.repeat(100_000)}`, context: { data: 'c'.repeat(100_000) } }));
  const document = page({ logs });
  assert.ok(document.length < 1_200_000, `page ${document.length}`);
  assert.match(document, /<span class="badge">1000<\/span>/);
  assert.match(document, /<td class="log-message">record 0 m+…<pre/);
  const shown = document.match(/<tr class="level-/g)!.length;
  assert.ok(shown > 10 && shown < 1000, `shown ${shown}`);
  assert.ok(document.includes(`${1000 - shown} more log records are not shown`));
});

test('says how many errors of a chain cut at 20 are not shown', () => {
  const errors = Array.from({ length: 20 }, (_, i) => ({ ...notFound()[0]!, message: `e${i}` }));
  errors[19] = { ...errors[19]!, omitted: 4981 };
  assert.ok(page({ errors }).includes('<p class="empty">4981 more errors of the chain are not shown: a page shows its first 20.</p>'));
  assert.not.ok(page().includes('more errors of the chain'));
});

test('the notes of one left out say so in the singular: one error of the chain, one log record, one item, one key', () => {
  const errors = [notFound()[0]!, { ...notFound()[1]!, omitted: 1 }];
  const wide: Record<string, number> = {};
  for (let i = 0; i < 101; i++) wide[`k${i}`] = i;
  const document = page({ errors, logs: [record({ context: { list: Array.from({ length: 101 }, (_, i) => i), wide } })], droppedLogs: 1 });
  assert.ok(document.includes('<p class="empty">1 more error of the chain is not shown: a page shows its first 2.</p>'));
  assert.ok(document.includes("1 more log record is not shown: the page holds a request's first 1,000 records"));
  assert.ok(document.includes('&quot;… 1 more item&quot;'));
  assert.ok(document.includes('&quot;…&quot;: &quot;1 more key&quot;'));
});

test('counts the records a request wrote past the 1,000 kept among those not shown', () => {
  const document = page({ logs: [record({ message: 'kept' })], droppedLogs: 19_000 });
  assert.match(document, /<span class="badge">1<\/span>/);
  assert.ok(document.includes("19000 more log records are not shown: the page holds a request's first 1,000 records, within 1 MB of them."));
});

test('walks a log context only as far as the page shows it, however wide or cyclic (100 items of 100 items of 20,000 characters were written whole)', () => {
  let reads = 0;
  const item = {
    get value() {
      reads++;
      return 'x'.repeat(20_000);
    },
  };
  const wide = { rows: Array.from({ length: 100 }, () => Array(100).fill(item)), long: Array.from({ length: 1_000_000 }, (_, i) => i) };
  const cyclic: Record<string, unknown> = { self: null, rows: wide.rows };
  cyclic.self = cyclic;
  const document = page({ logs: [record({ context: wide }), record({ context: cyclic }), record({ context: { long: wide.long } })] });
  assert.ok(reads <= 2, `${reads} values read`);
  assert.ok(document.length < 40_000, `page ${document.length}`);
  assert.ok(document.includes('&quot;self&quot;: &quot;[Circular]&quot;'));
  assert.ok(document.includes('&quot;… 999900 more items&quot;'));
});

test('reads a wide object or typed array of a log context only as far as the page shows it, and counts the rest (an object of 100,000 keys was read whole)', () => {
  let reads = 0;
  const target: Record<string, string> = {};
  for (let i = 0; i < 100_000; i++) target[`key${i}`] = 'v';
  const wide = new Proxy(target, {
    get(object, key, receiver) {
      reads++;
      return Reflect.get(object, key, receiver) as unknown;
    },
  });
  const document = page({ logs: [record({ context: { wide } }), record({ context: { bytes: new Uint8Array(1_000_000) } }), record({ context: { few: { a: 1, b: 2 } } })] });
  assert.ok(reads <= 200, `${reads} values read`);
  assert.ok(document.includes('&quot;…&quot;: &quot;99900 more keys&quot;'));
  assert.ok(document.includes('&quot;…&quot;: &quot;999900 more items&quot;'));
  assert.ok(document.includes('&quot;few&quot;: {\n    &quot;a&quot;: 1,\n    &quot;b&quot;: 2\n  }'), 'an object of 100 keys or fewer is written as it is');
});

test('renders a context that is a Proxy whose traps throw, as a value or as the whole context', () => {
  const trap = (): never => {
    throw new Error('trap');
  };
  const hostile = new Proxy({}, { get: trap, has: trap, getPrototypeOf: trap, ownKeys: trap, getOwnPropertyDescriptor: trap });
  const document = page({ logs: [record({ message: 'value', context: { hostile } }), record({ message: 'whole', context: hostile as Record<string, unknown> })] });
  assert.is(document.match(/<tr class="level-/g)!.length, 2);
  assert.ok(document.includes('[context that cannot be shown]'));
});

test('links to the profiler when a profiler URL is given', () => {
  assert.ok(page({ profilerUrl: '/_profiler/a1b2c3' }).includes('<a href="/_profiler/a1b2c3">View in profiler</a>'));
  assert.not.ok(page().includes('View in profiler'));
  assert.not.ok(page({ profilerUrl: 'javascript:alert(1)' }).includes('View in profiler'));
});

test('shows the raw stacks under "Stack Trace (Plain Text)"', () => {
  const errors = notFound('<b>raw</b>');
  const document = page({ errors });
  const section = document.slice(document.indexOf('Stack Trace (Plain Text)'));
  assert.ok(section.includes('[1/2] NotFoundHttpError'));
  assert.ok(section.includes('[2/2] ResourceNotFoundError'));
  assert.ok(section.includes('&lt;b&gt;raw&lt;/b&gt;'));
  const firstStackLine = errors[0]!.stack.split('\n')[1]!.trim();
  assert.ok(section.includes(firstStackLine.replace(/"/g, '&quot;')));
});

test('shows the error a failing kernel.exception listener was handling in its own section, escaped, and its stack with the others', () => {
  const handled = notFound('<i>the order service is down</i>');
  const document = page({ handled });
  const section = document.slice(document.indexOf('<section id="handled">'), document.indexOf('</section>', document.indexOf('<section id="handled">')));
  assert.ok(section.includes('Thrown while handling <span class="badge">2</span>'), section);
  assert.ok(section.includes('<article class="error" id="handled-1">'));
  assert.ok(section.includes('<p class="message">&lt;i&gt;the order service is down&lt;/i&gt;</p>'));
  assert.not.ok(document.includes('<i>the order'));
  const plain = document.slice(document.indexOf('Stack Trace (Plain Text)'));
  assert.ok(plain.includes('[1/2] NotFoundHttpError (thrown while handling)'));
  // Without a handled error, no such section.
  assert.not.ok(page().includes('Thrown while handling'));
});

function failHere(): Error {
  return new Error('excerpt wanted'); // MARKER-DEBUG-PAGE
}

test('shows frames with paths relative to the working directory and a highlighted source excerpt', () => {
  const document = page({ errors: flattenError(failHere()), status: 500 });
  assert.match(document, /<span class="function">failHere<\/span> <span class="location">in <span class="file">test\/unit\/errors\/debug-page\.test\.ts<\/span> line <span class="line-number">\d+<\/span>/);
  const frames = document.slice(document.indexOf('<section id="errors">'), document.indexOf('<section id="logs">'));
  assert.not.ok(frames.includes(`${process.cwd()}/test/unit/errors/debug-page.test.ts`));
  assert.match(document, /<span class="line highlight"><span class="number">\d+<\/span>[^\n]*MARKER-DEBUG-PAGE/);
});

test('collapses internal frames into a details element', () => {
  const [error] = notFound();
  error!.frames = [
    { function: 'handle', file: '/nowhere/app.ts', line: 3, column: 1, native: false, internal: false },
    { function: 'emit', file: 'node:events', line: 1, column: 1, native: false, internal: true },
    { function: 'x', file: '/app/node_modules/a/b.js', line: 1, column: 1, native: false, internal: true },
  ];
  const document = page({ errors: [error!] });
  assert.match(document, /<details><summary>2 internal frames<\/summary><ol>[\s\S]*node:events[\s\S]*node_modules[\s\S]*<\/ol><\/details>/);
});

test('shows an error with no frames and an empty chain without failing', () => {
  const [flat] = flattenError('a string');
  assert.ok(page({ errors: [flat!], status: 500 }).includes('No stack frames'));
  assert.ok(titleOf(page({ errors: [], status: 500 })).includes('(500 Internal Server Error)'));
});

test('with an editor, each frame\'s file links to it; without one, no link', () => {
  const linked = page({ fileLink: createFileLinker('vscode') });
  assert.match(linked, '<a class="file" href="vscode://file//nowhere/router.ts:7" title="Open in your editor">/nowhere/router.ts</a> line <span class="line-number">7</span>');
  assert.not.match(page(), '<a class="file"');
  assert.not.match(page(), 'vscode://');
});

test('on a narrow screen the logs are no table of four squeezed columns: time, level and channel on one line, the message across the width', () => {
  const html = page();
  const narrow = /@media \(max-width: 640px\) \{([^]*?)\n\}/.exec(html)?.[1] ?? '';
  // The header row is hidden from the eye only: a screen reader still names each cell's column.
  assert.match(narrow, /\.logs thead \{ position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset\(50%\); white-space: nowrap; \}/);
  assert.match(narrow, /\.logs tr \{ display: grid; grid-template-columns: auto auto 1fr;/);
  assert.match(narrow, /\.logs td\.log-message, \.logs td\.empty \{ grid-column: 1 \/ -1;/);
});

for (const [scheme, media] of [['light', ''], ['dark', DARK]] as const) {
  test(`every text colour has a contrast of at least 4.5:1 on its background (${scheme})`, () => {
    const css = inlineElements(page()).find((element) => element.tag === 'style')!.text;
    const colors = colorsOf(css, ':root', media);
    const pairs = [
      ['muted', 'highlight'], // an excerpt's line number on its highlighted line
      ['muted', 'code-bg'], ['muted', 'card'], ['muted', 'bg'],
      ['fg', 'code-bg'], ['fg', 'highlight'], ['fg', 'card'], ['fg', 'bg'],
      ['link', 'card'], ['link', 'bg'], ['error', 'card'], ['warning', 'card'],
      ['head-fg', 'head-4xx'], ['head-fg', 'head-5xx'],
    ];
    const low = pairs.filter(([fg, bg]) => contrastRatio(colors.get(fg!)!, colors.get(bg!)!) < 4.5)
      .map(([fg, bg]) => `--${fg} ${colors.get(fg!)} on --${bg} ${colors.get(bg!)}: ${contrastRatio(colors.get(fg!)!, colors.get(bg!)!).toFixed(2)}`);
    assert.equal(low, []);
  });
}

test.run();
