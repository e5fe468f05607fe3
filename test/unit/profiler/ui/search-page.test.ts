import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ProfileSummary } from '../../../../lib/profiler/profile.js';
import { renderSearchPage, renderTokenNotFoundPage, resultCountSentence } from '../../../../lib/profiler/ui/index.js';
import { inTimeZone } from '../../helpers.js';
import { childSummary, mainProfile, okProfile, summaryOf, urls } from './fixtures.js';

function search(results: ProfileSummary[], criteria: Record<string, string> = {}): string {
  return renderSearchPage({ results, criteria, urls, timeZone: 'UTC' });
}

const rowsOf = (html: string): string[] => [.../<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1]?.matchAll(/<tr[\s\S]*?<\/tr>/g) ?? []].map((m) => m[0]);
const cellsOf = (row: string): string[] => [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim());

test('the count sentence reads No results found, 1 result found, N results found', () => {
  assert.is(resultCountSentence(0), 'No results found');
  assert.is(resultCountSentence(1), '1 result found');
  assert.is(resultCountSentence(2), '2 results found');
  assert.is(resultCountSentence(10), '10 results found');
});

test('the search page shows the count above the table', () => {
  const html = search([summaryOf(mainProfile()), childSummary(), summaryOf(okProfile())]);
  assert.match(html, '<h1 class="result-count">3 results found</h1>');
  assert.ok(html.indexOf('3 results found') < html.indexOf('<table class="results">'));
  assert.match(search([childSummary()]), '<h1 class="result-count">1 result found</h1>');
});

test('no results: the sentence and no table', () => {
  const html = search([]);
  assert.match(html, '<h1 class="result-count">No results found</h1>');
  assert.not.match(html, '<table');
});

test('the results table has exactly the columns Status, IP, Method, URL, Time, Token', () => {
  const html = search([summaryOf(mainProfile())]);
  const headers = [...(/<thead>([\s\S]*?)<\/thead>/.exec(html)?.[1] ?? '').matchAll(/<th[^>]*>([\s\S]*?)<\/th>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, ''));
  assert.equal(headers, ['Status', 'IP', 'Method', 'URL', 'Time (UTC)', 'Token']);
});

test('each row shows status, IP, method, URL, formatted time and the token linking to its panel', () => {
  const html = search([summaryOf(mainProfile())]);
  const [row] = rowsOf(html);
  assert.equal(cellsOf(row!), ['404', '127.0.0.1', 'GET', 'http://127.0.0.1:8000/robots.txt?page=2', '21-Nov-2026 21:40:54', 'a1b2c3']);
  assert.match(row!, '<span class="status status-4xx">404</span>');
  assert.match(row!, '<a class="mono" href="/_profiler/a1b2c3">a1b2c3</a>');
});

test('rows keep the order given (newest first from the storage)', () => {
  const html = search([summaryOf(okProfile()), childSummary(), summaryOf(mainProfile())]);
  assert.equal(rowsOf(html).map((row) => cellsOf(row)[5]), ['0f9e8d', 'd4e5f6', 'a1b2c3']);
});

test('sub-request rows are marked with a link to their parent', () => {
  const html = search([childSummary(), summaryOf(mainProfile())]);
  const [child, main] = rowsOf(html);
  assert.match(child!, '<tr class="sub-request">');
  assert.match(child!, '<span class="sub-of">sub-request of <a class="mono" href="/_profiler/a1b2c3">a1b2c3</a></span>');
  assert.not.match(main!, 'sub-request');
});

test('the form is prefilled with the criteria', () => {
  const html = search([], { ip: '127.0.0.1', method: 'post', status: '404', url: '/books', start: '2026-11-21 21:00', end: '2026-11-21 22:00', limit: '50' });
  assert.match(html, 'name="ip" type="text" inputmode="decimal" placeholder="127.0.0.1" value="127.0.0.1"');
  assert.match(html, '<option selected>POST</option>');
  assert.match(html, 'name="status" type="text" inputmode="numeric" placeholder="404" value="404"');
  assert.match(html, 'name="url" type="text" placeholder="/books" value="/books"');
  assert.match(html, 'value="2026-11-21 21:00"');
  assert.match(html, 'value="2026-11-21 22:00"');
  assert.match(html, '<option selected>50</option>');
});

test('an unusual limit or method in the criteria is kept as an option', () => {
  const html = search([], { limit: '7', method: 'PROPFIND' });
  assert.match(html, '<option selected>7</option>');
  assert.match(html, '<option selected>PROPFIND</option>');
});

test('the token-not-found page says Token not found and links to the latest profile and the search', () => {
  const html = renderTokenNotFoundPage('abcdef', urls);
  assert.match(html, '<title>Token not found · Profiler</title>');
  assert.match(html, '<h1>Token not found</h1>');
  assert.match(html, '<code>abcdef</code>');
  assert.match(html, 'href="/_profiler/latest"');
});

test('the token-not-found page cuts a very long token', () => {
  const html = renderTokenNotFoundPage('f'.repeat(5000), urls);
  assert.match(html, `<code>${'f'.repeat(64)}…</code>`);
  // The page is the page of a short token and 64 characters more, whatever the stylesheet weighs.
  assert.ok(html.length <= renderTokenNotFoundPage('f', urls).length + 64 * 3, `${html.length} characters`);
});

test('a stored time past what a Date holds (a corrupt index line) leaves its cell empty rather than failing the page', () => {
  for (const time of [1e16, -1e16, 1e300]) {
    const html = search([{ ...summaryOf(okProfile()), time }, summaryOf(mainProfile())]);
    assert.match(html, '<h1 class="result-count">2 results found</h1>', String(time));
    assert.is(cellsOf(rowsOf(html)[0]!)[4], '', String(time));
    assert.is(cellsOf(rowsOf(html)[1]!)[4], '21-Nov-2026 21:40:54');
  }
});

test('the page names the time zone of the Time column and of the From and Until fields: the one given, else the server\'s', () => {
  const given = renderSearchPage({ results: [summaryOf(mainProfile())], criteria: {}, urls, timeZone: 'Pacific/Kiritimati' });
  assert.match(given, '<th scope="col">Time <span class="zone">(Pacific/Kiritimati)</span></th>');
  assert.match(given, '<p class="hint" id="search-zone">In Pacific/Kiritimati time, unless ending with Z or an offset (+01:00)</p>');
  // 21:40:54 UTC is 11:40:54 the next day at UTC+14.
  assert.match(given, '<time datetime="2026-11-21T21:40:54.123Z" title="2026-11-21T21:40:54.123Z">22-Nov-2026 11:40:54</time>');
  inTimeZone('America/St_Johns', () => {
    const local = renderSearchPage({ results: [summaryOf(mainProfile())], criteria: {}, urls });
    assert.match(local, '<th scope="col">Time <span class="zone">(America/St_Johns)</span></th>');
    assert.match(local, 'In America/St_Johns time');
    assert.match(local, '>21-Nov-2026 18:10:54</time>');
  });
});

test('a TZ no time zone is named by the offset the times are shown at, never as "the server\'s local time time" or Etc/Unknown', () => {
  // POSIX reads UTC+3 as three hours behind UTC, and so do Dates; Intl resolves no zone for it.
  for (const [tz, named, shown] of [['UTC+3', 'UTC-03:00', '21-Nov-2026 18:40:54'], ['Foo/Bar', 'UTC', '21-Nov-2026 21:40:54'], ['', 'UTC', '21-Nov-2026 21:40:54']] as const) {
    inTimeZone(tz, () => {
      const page = renderSearchPage({ results: [summaryOf(mainProfile())], criteria: {}, urls });
      assert.match(page, `<th scope="col">Time <span class="zone">(${named})</span></th>`, tz);
      assert.match(page, `<p class="hint" id="search-zone">In ${named} time, unless ending with Z or an offset (+01:00)</p>`, tz);
      assert.match(page, `>${shown}</time>`, tz);
    });
  }
  inTimeZone('America/St_Johns', () => assert.match(renderSearchPage({ results: [], criteria: {}, urls }), 'In America/St_Johns time', 'named again once TZ changes'));
});

test.run();
