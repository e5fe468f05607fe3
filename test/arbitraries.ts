// Generators of what clients send, shared by the property-based robustness tests (unit and
// integration). fast-check draws inputs from them, and on a failure shrinks the input to a small one
// and prints it with the seed and path that replay it: hand-written examples only find the bugs
// someone already thought of.
import fc from 'fast-check';

/**
 * Markup a client may slip into any field. None may ever come back unescaped: the pages and JSON of
 * this service never contain these tags themselves, so finding one in an answer means it was echoed.
 * No spaces, so each also fits in a request target.
 */
export const MARKERS = ['<script>x</script>', '"><img/src=x>', "'><svg/onload=y>"] as const;

/** The part of each marker that is dangerous when it comes back as is: its tag. */
export const MARKER_TAGS = ['<script>x</script>', '<img/src=x>', '<svg/onload=y>'] as const;

/** The first marker tag found in `text`, or undefined. */
export function markerIn(text: string): string | undefined {
  return MARKER_TAGS.find((tag) => text.includes(tag));
}

/**
 * The fast-check parameters of a property: a fixed seed by default, so `npm test` is repeatable;
 * `FC_SEED=<n>` replays the seed of a failure report (or tries another), `FC_RUNS=<n>` runs more.
 */
export function propertyParameters(numRuns: number): fc.Parameters<unknown> {
  const seed = process.env.FC_SEED === undefined ? 20261124 : Number(process.env.FC_SEED);
  const runs = process.env.FC_RUNS === undefined ? numRuns : Number(process.env.FC_RUNS);
  // The failed assertion's message in the report itself: uvu prints the message, not the cause.
  return { seed, numRuns: runs, includeErrorInReport: true };
}

/** What node:http lets through in a request target: printable ASCII, no space. */
const TARGET_CHARS = Array.from({ length: 0x7f - 0x21 }, (_, i) => String.fromCharCode(0x21 + i));

/** What node:http lets through in a header value, read as Latin-1: tab, printable ASCII, bytes 0x80-0xff. */
const HEADER_VALUE_CHARS = ['\t', ...Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)), ...Array.from({ length: 0x80 }, (_, i) => String.fromCharCode(0x80 + i))];

/** UTF-8 text as node:http hands it over in a header: each byte a Latin-1 character. */
export function asLatin1(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/** Any header value node:http could deliver, including UTF-8 text seen byte by byte. */
export const headerText = fc.oneof(
  fc.string({ unit: fc.constantFrom(...HEADER_VALUE_CHARS), maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }).map(asLatin1),
  fc.constantFrom(...MARKERS),
);

const percentEncodings = ['%2e%2e', '%2E', '%2F', '%2f', '%5C', '%20', '%00', '%0D%0A', '%25', '%C3%A9', '%E2%82%AC', '%F0%9F%98%80', '%C0%AE', '%FF', '%EF%BB%BF'];
const malformedPercentEncodings = ['%', '%%', '%z', '%zz', '%E0%A4%A', '%C3', '%E2%82', '%F0%9F', '%G1', '%2'];

/** One path segment: names the apps know, dot segments, percent-encodings good and bad, encoded Unicode, markers raw and encoded. */
export const pathSegment = fc.oneof(
  fc.constantFrom('', '.', '..', '...', 'health', 'HEALTH', '_profiler', '_wdt', 'search', 'latest', 'books', 'echo', 'robots.txt', 'index.php', '~', ';x=1'),
  fc.constantFrom(...percentEncodings, ...malformedPercentEncodings),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }).map(encodeURIComponent),
  fc.string({ unit: fc.constantFrom(...TARGET_CHARS), minLength: 1, maxLength: 8 }).filter((s) => !s.includes('?') && !s.includes('/')),
  fc.constantFrom(...MARKERS),
  fc.constantFrom(...MARKERS).map(encodeURIComponent),
);

const queryName = fc.oneof(
  fc.constantFrom('panel', 'ip', 'method', 'status', 'url', 'start', 'end', 'limit', 'to', 'x', '', '__proto__', 'a[]', 'a[b]'),
  fc.constantFrom(...MARKERS),
);
const queryValue = fc.oneof(
  fc.constantFrom('', 'request', 'exception', 'logger', 'events', 'time', 'router', 'GET', '404', '200', '99', '600', '1e3', '-1', '0', '1001', 'NaN', '2026-11-21', '2026-13-45', '99999999999999999999', 'today', '127.0.0.1', '::1'),
  fc.constantFrom(...percentEncodings, ...malformedPercentEncodings),
  fc.string({ unit: 'grapheme', maxLength: 8 }).map(encodeURIComponent),
  fc.constantFrom(...MARKERS),
  fc.constantFrom(...MARKERS).map(encodeURIComponent),
);

/** A query string with its `?` (or none), with repeated, empty and malformed parameters, sometimes a fragment. */
export const queryString = fc.option(
  fc.tuple(fc.array(fc.tuple(queryName, fc.option(queryValue, { nil: undefined })), { maxLength: 4 }), fc.option(fc.constantFrom('#', '#x', '#<script>x</script>'), { nil: '' })).map(
    ([pairs, fragment]) => `?${pairs.map(([name, value]) => (value === undefined ? name : `${name}=${value}`)).join('&')}${fragment}`,
  ),
  { nil: '' },
);

/** Paths the apps answer (or redirect) and their near misses, so generated requests get past routing too. */
const knownPath = fc.constantFrom('/', '/health', '/health/', '/HEALTH', '/_profiler/', '/_profiler/search', '/_profiler/latest', '/_wdt/', '/books/1', '/books/1/', '/books/', '/echo', '/echo/');

/** An origin-form target: `/`, `//`, dot segments, a trailing slash or not, a query; or a known path with a query or one segment more. */
export const originTarget = fc.oneof(
  fc
    .tuple(fc.constantFrom('/', '/', '/', '//', '///', '/./', '/../'), fc.array(pathSegment, { maxLength: 5 }), fc.boolean(), queryString)
    .map(([start, segments, slash, query]) => `${start}${segments.join('/')}${slash && segments.length > 0 ? '/' : ''}${query}`),
  fc.tuple(knownPath, fc.option(pathSegment, { nil: '' }), queryString).map(([path, segment, query]) => `${path}${segment}${query}`),
);

/** Hosts as a client writes them, in a Host header or an absolute-form target: valid, with ports, IPv6, empty, garbage, markup. */
export const hostValue = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('localhost', 'localhost:8000', '127.0.0.1:8000', 'a.test') },
  fc.constantFrom(
    'localhost', 'a.test', 'A.Test', 'a.test:8000', 'a.test:80', 'a.test:443', 'a.test.', 'a_b.test', 'xn--bcher-kva.test', '127.0.0.1', '127.0.0.1:8000',
    '[::1]', '[::1]:8000', '[::ffff:127.0.0.1]', '[2001:db8::1]:443', '::1', '[::1', '::1]', '[', ']', '[]', '[::1]x',
    'a.test:', 'a.test:0', 'a.test:65535', 'a.test:65536', 'a.test:-1', 'a.test:8o', 'a.test:80:80', ':80', '', ' ', 'a test', '.a.test', '-a.test', 'a..test',
    'a.test/x', 'a.test?x', 'a.test#x', 'user@a.test', 'user:pw@a.test', 'a.test\\b', '%61.test', '0x7f.1', '999.999.999.999',
  ),
  fc.domain(),
  fc.tuple(fc.domain(), fc.integer({ min: 0, max: 70000 })).map(([domain, port]) => `${domain}:${port}`),
  fc.ipV4(),
  fc.ipV6().map((ip) => `[${ip}]`),
  fc.ipV6(),
  headerText,
);

/** An absolute-form target (`http://host/path`), as proxies are sent, with good and bad schemes and authorities. */
export const absoluteTarget = fc
  .tuple(
    fc.constantFrom('http', 'https', 'HTTP', 'hTTpS', 'ftp', 'ws', 'h2c'),
    hostValue.filter((host) => /^[\x21-\x7e]*$/.test(host) && !/[/?#]/.test(host)),
    fc.oneof(originTarget, queryString, fc.constant('')),
  )
  .map(([scheme, authority, rest]) => `${scheme}://${authority}${rest}`);

/** Any request target node:http would deliver: origin-form mostly, absolute-form, `*`, and printable junk. */
export const requestTarget = fc.oneof(
  { weight: 6, arbitrary: originTarget },
  { weight: 3, arbitrary: absoluteTarget },
  { weight: 1, arbitrary: fc.constantFrom('*', '*?x', '/*', 'http://[bad/x', 'http://a.test', 'http://a.test?x=1', 'http://', 'https://a.test:99999/') },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...TARGET_CHARS), minLength: 1, maxLength: 20 }) },
);

/** Methods: the common ones, the rest of node:http's list, and odd tokens an embedder might pass. */
export const method = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('GET', 'GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') },
  { weight: 2, arbitrary: fc.constantFrom('CONNECT', 'TRACE', 'QUERY', 'PROPFIND', 'M-SEARCH', 'PURGE', 'SOURCE', 'UNLINK') },
  { weight: 1, arbitrary: fc.constantFrom('get', 'FOO', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'X-Y.Z~1') },
);

/** `X-Forwarded-For`: hops with and without ports, IPv6 in and out of brackets, `unknown`, junk, several. */
export const forwardedFor = fc
  .array(
    fc.oneof(
      fc.ipV4(),
      fc.ipV6(),
      fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 70000 })).map(([ip, port]) => `${ip}:${port}`),
      fc.ipV6().map((ip) => `[${ip}]:443`),
      fc.ipV6().map((ip) => `[${ip}]`),
      fc.constantFrom('127.0.0.1', '::1', '::ffff:127.0.0.1', '10.0.0.2', 'unknown', '', ' ', '_hidden', '[', '[::1', '1.2.3.4:', '1.2.3.4:x'),
      headerText,
    ),
    { minLength: 1, maxLength: 4 },
  )
  .chain((hops) => fc.constantFrom(', ', ',', ' , ').map((separator) => hops.join(separator)));

/** `X-Forwarded-Proto`: the two schemes in any case, others, lists, junk. */
export const forwardedProto = fc.oneof(fc.constantFrom('http', 'https', 'HTTPS', 'ftp', '', 'https, http', 'http,https'), headerText);
/** `X-Forwarded-Port`: ports, out-of-range and non-numeric values, junk. */
export const forwardedPort = fc.oneof(fc.constantFrom('80', '443', '8443', '0', '65535', '65536', '-1', 'abc', '1e3', '0x50', ' 443', '443,80', ''), fc.integer({ min: -5, max: 70000 }).map(String), headerText);
/** `X-Forwarded-Host`: any host, or a list of two. */
export const forwardedHost = fc.oneof(hostValue, fc.tuple(hostValue, hostValue).map(([a, b]) => `${a}, ${b}`));

/** `Cookie`: well-formed, malformed, with encodings good and bad, prototype names, markup. */
export const cookieHeader = fc.oneof(
  fc.constantFrom('a=b', 'a=b; c=d', 'a=%E0%A4%A', 'a=%C3%A9', '__proto__=x', 'constructor=1; toString=2', '=', ';;', 'a', 'a="b', 'a=b;;c', 'PHPSESSID=1; password=secret'),
  fc.constantFrom(...MARKERS).map((marker) => `x=${marker}`),
  headerText,
);

/** `Accept`: JSON, HTML, problem+json, wildcards, weights good and bad, junk. */
export const acceptHeader = fc.oneof(
  fc.constantFrom(
    'application/json', 'text/html', '*/*', 'application/problem+json', 'text/html;q=0.9, application/json', 'application/json;q=0', 'text/html;q=0, application/json;q=0',
    'application/xml', ';;;', 'text/*;q=abc', '*/*;q=0.1, application/xml', '*', 'application/json;q=2', 'text/html, application/xhtml+xml, */*;q=0.8',
  ),
  headerText,
);

/** `Referer`: URLs, markup, junk. */
export const refererHeader = fc.oneof(
  fc.constantFrom(...MARKERS),
  fc.constantFrom(...MARKERS).map((marker) => `http://a.test/${marker}`),
  fc.webUrl(),
  headerText,
);

/** A body with its Content-Type: JSON valid and invalid, text, and sizes around `limit` bytes. */
export function bodyWithType(limit: number): fc.Arbitrary<{ type: string | undefined; body: string }> {
  return fc.record({
    type: fc.option(
      fc.oneof(
        fc.constantFrom('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/problem+json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '', ';'),
        headerText,
      ),
      { nil: undefined },
    ),
    body: fc.oneof(
      fc.json({ maxDepth: 2 }),
      fc.constantFrom('', '{', '{"a":', 'null', '[]', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}', '"\\ud800"', '1e999', '\ufeff{}'),
      fc.constantFrom(...MARKERS).map((marker) => JSON.stringify({ marker })),
      fc.string({ unit: 'grapheme', maxLength: 20 }),
      // Sizes around the limit, in bytes: one under, at, one over (a JSON string of x's).
      fc.integer({ min: limit - 2, max: limit + 2 }).map((size) => JSON.stringify('x'.repeat(Math.max(0, size - 2)))),
    ),
  });
}
