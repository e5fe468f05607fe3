// A wildcard followed by more of the pattern (`/*path.:ext`, `/*a/*b/end`) is matched by a
// TailMatcher rather than by the tail's backtracking regex: it must give the regex's answers (match
// or not, and the same split between a greedy wildcard and what follows), in time linear in the path.
// Why fast-check for the first: the splits a greedy wildcard can take are many, and hand-written
// examples only cover the ones someone thought of; on a failure it shrinks the routes and the path
// and prints the seed that replays them (FC_SEED=<seed>). Linear time is checked without the clock:
// the matcher counts the characters it reads and the texts it compares (`tailMatcherSteps`).
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidRouteError, Route, RouteCollection, UrlMatcher, type LookupResult } from '../../../lib/routing/index.js';
import { compilePattern, variantSource, type Part } from '../../../lib/routing/pattern.js';
import { decode, decodeSegments } from '../../../lib/routing/params-builder.js';
import { TailMatcher, tailMatcherSteps } from '../../../lib/routing/tail-matcher.js';
import { propertyParameters } from '../../arbitraries.js';

const POST = { method: 'POST', host: 'localhost', scheme: 'http' } as const;

function matcherOf(paths: readonly string[]): UrlMatcher {
  const collection = new RouteCollection();
  paths.forEach((path, i) => collection.add(`r${i}`, new Route(path)));
  return new UrlMatcher(collection);
}

/** What the matcher answered, without the route object (its name identifies it) and the error. */
function outcome(result: LookupResult): Record<string, unknown> {
  switch (result.kind) {
    case 'match':
      return { kind: 'match', name: result.name, params: result.params };
    case 'malformed-path':
      return { kind: 'malformed-path', parameter: result.parameter };
    default:
      return { kind: result.kind };
  }
}

/**
 * The answer of the regexes the matcher used before: each route's variants, in order, as one
 * anchored regex each (pattern.ts's `variantSource`, as the tree's tails were), first match wins,
 * parameters decoded as the matcher decodes them.
 */
function regexOutcome(paths: readonly string[], path: string): Record<string, unknown> {
  for (let i = 0; i < paths.length; i++) {
    for (const [parts, regex] of regexesOf(paths[i]!)) {
      const found = regex.exec(path);
      if (found === null) continue;
      const params: Record<string, unknown> = {};
      let group = 1;
      for (const part of parts) {
        if (part.type === 'text') continue;
        const raw = found[group++]!;
        const value = part.type === 'wildcard' ? decodeSegments(raw) : decode(raw);
        if (value === undefined) return { kind: 'malformed-path', parameter: part.name };
        params[part.name] = value;
      }
      return { kind: 'match', name: `r${i}`, params };
    }
  }
  return { kind: 'not-found' };
}

const regexes = new Map<string, [Part[], RegExp][]>();

function regexesOf(path: string): [Part[], RegExp][] {
  let list = regexes.get(path);
  if (list === undefined) {
    list = compilePattern(path, '/', {}, 'route path').variants.map((parts) => [parts as Part[], new RegExp(`^${variantSource(parts)}$`)]);
    regexes.set(path, list);
  }
  return list;
}

// Route patterns: every parameter or wildcard is followed by text (inside or after its optional
// group, or opening a group right after it), so that path-to-regexp and pattern.ts accept them;
// names are filled in afterwards.
const text = fc.constantFrom('/', '.', '-', 'a', '/a', '.b', '-a.', '/x/', 'ab', '/end', 'a/b', '.-', '/.');
const token = fc.constantFrom('*', ':');
const unit = fc.oneof(
  fc.tuple(token, text).map(([t, after]) => `${t}@${after}`),
  fc.tuple(text, token, text).map(([before, t, after]) => `{${before}${t}@}${after}`),
  fc.tuple(text, token, text).map(([before, t, after]) => `{${before}${t}@${after}}`),
  // An optional name alone between separators is refused as Symfony's placeholder (`/x/{ab}`): it goes after a letter.
  text.map((t) => (/^\w+$/.test(t) ? `x{${t}}` : `{${t}}`)),
  text,
  // A parameter right before a group: it stops at the text after it in each combination, and at the group's opening.
  fc.tuple(text, token, text, token, text).map(([before, t, open, inner, after]) => `${before}${t}@{${open}${inner}@}${after}`),
);
const ending = fc.constantFrom('', '*@', ':@', '{.:@}', '{/*@}');
const pattern = fc
  .tuple(token, text, fc.array(unit, { maxLength: 4 }), ending)
  .map(([first, after, units, end]) => {
    let n = 0;
    return `/${first}@${after}${units.join('')}${end}`.replace(/@/g, () => `"p${n++}"`);
  })
  // One whose optional group puts `//` between text (`/x/{/a}`) is refused: there is no regex to compare with.
  // Any other error is the test's to report, not a pattern to skip.
  .filter((path) => {
    try {
      compilePattern(path, '/', {}, 'route path');
      return true;
    } catch (error) {
      if (error instanceof InvalidRouteError && error.message.includes('an optional group, written or left out, puts "//" in it')) return false;
      throw error;
    }
  });

// Paths made of the patterns' characters, cut into pieces that a greedy wildcard may take or leave.
const piece = fc.constantFrom('/', '.', '-', 'a', 'b', 'x', 'ab', 'end', '/a', 'a.b', '%41', '%zz', '%2F');
const randomPath = fc.array(piece, { maxLength: 12 }).map((pieces) => `/${pieces.join('')}`);

// A path made from a route: each variant's parameters filled with pieces (which may hold `/`, `.`, `-`).
function filledPath(path: string): fc.Arbitrary<string> {
  const variants = compilePattern(path, '/', {}, 'route path').variants;
  return fc.tuple(fc.nat(variants.length - 1), fc.array(fc.array(piece, { minLength: 1, maxLength: 3 }), { minLength: 8, maxLength: 8 })).map(([v, fills]) => {
    let k = 0;
    return variants[v]!.map((part) => (part.type === 'text' ? part.value : fills[k++ % fills.length]!.join(''))).join('');
  });
}

test('a wildcard followed by more of the pattern gets the answers of the regex it replaces', () => {
  let lookups = 0;
  let matches = 0;
  let tails = 0;
  fc.assert(
    fc.property(
      fc.array(pattern, { minLength: 1, maxLength: 2 }).chain((paths) => fc.tuple(fc.constant(paths), fc.array(fc.oneof(randomPath, ...paths.map(filledPath), ...paths.map(filledPath)), { minLength: 6, maxLength: 6 }))),
      ([paths, requests]) => {
        const matcher = matcherOf(paths);
        for (const path of requests) {
          lookups++;
          const before = tailMatcherSteps();
          const actual = outcome(matcher.lookup(path, POST));
          if (tailMatcherSteps() > before) tails++;
          const expected = regexOutcome(paths, path);
          if (expected.kind === 'match') matches++;
          assert.equal(actual, expected, `${JSON.stringify(paths)} on ${path}`);
        }
      },
    ),
    propertyParameters(2000),
  );
  // The comparison is worth something only if many paths match, through tails.
  assert.ok(matches > lookups / 5, `only ${matches} matches in ${lookups} lookups`);
  assert.ok(tails > lookups / 2, `only ${tails} of ${lookups} lookups through a tail matcher`);
});

test('a greedy wildcard takes the longest split the rest of the pattern allows', () => {
  const look = (path: string, request: string) => outcome(matcherOf([path]).lookup(request, POST));
  assert.equal(look('/*a/*b/*c/end', `/${'a/'.repeat(4000)}end`).params, { a: Array(3998).fill('a'), b: ['a'], c: ['a'] });
  assert.equal(look('/*path.:ext', '/a.b/c.d.e').params, { path: ['a.b', 'c.d'], ext: 'e' });
  assert.equal(look('/*a-:b.:c', '/x-y/z-w.v.u').params, { a: ['x-y', 'z'], b: 'w', c: 'v.u' });
  assert.equal(look('/*a{.:b}/x', '/a.b.c/x').params, { a: ['a.b'], b: 'c' });
  assert.equal(look('/*path.:ext', `/${'.'.repeat(15000)}/`), { kind: 'not-found' });
});

test('a wildcard with a requirement followed by more of the pattern keeps its requirement', () => {
  // Its regex decides it, not the tail matcher, which reads any character.
  const collection = new RouteCollection();
  collection.add('r', new Route('/*path.:ext', { requirements: { path: '[a-z/]+' } }));
  const matcher = new UrlMatcher(collection);
  assert.equal(outcome(matcher.lookup('/a/b.json', POST)), { kind: 'match', name: 'r', params: { path: ['a', 'b'], ext: 'json' } });
  assert.equal(outcome(matcher.lookup('/a/1.json', POST)), { kind: 'not-found' });
});

/** The tail matcher's work on one lookup of `path`. */
function stepsOf(matcher: UrlMatcher, path: string): number {
  const before = tailMatcherSteps();
  matcher.lookup(path, POST);
  return tailMatcherSteps() - before;
}

// Hostile paths, by size: against the regexes they took quadratic or cubic time.
const hostile: [string, (size: number) => string][] = [
  ['/*path.:ext', (size) => `/${'.'.repeat(size)}/`],
  ['/*path.:ext', (size) => `/a${'.b'.repeat(size / 2)}/`],
  ['/*a/*b/*c/end', (size) => `/${'a/'.repeat(size / 2)}`],
  ['/*a/*b/*c/end', (size) => `/${'/'.repeat(size)}x`],
  ['/*a/*b/end', (size) => `/${'a/'.repeat(size / 2)}en`],
  ['/*a.:b.:c', (size) => `/${'.a'.repeat(size / 2)}/`],
  ['/*a-:b.:c', (size) => `/${'-a.'.repeat(Math.floor(size / 3))}/`],
  ['/*a{.:b}{-:c}/x', (size) => `/${'.a-b'.repeat(size / 4)}/`],
  // A parameter stops at every separator opening a group after it, the groups left out too: at two, or at one before other text.
  ['/*a/*b/:c{.:d}{-:e}', (size) => `/${'a/'.repeat(size / 2)}`],
  ['/*a/*b/:c{.:d}x', (size) => `/${'a/'.repeat(size / 2)}`],
  // A parameter followed by text that is no separator gives characters back to it (as in Symfony): the regex took cubic time.
  ['/:"a"x:"b"x:"c"y', (size) => `/${'x'.repeat(size)}`],
  ['/get:"a"Suffix:"b"Suffix', (size) => `/get${'Suffix'.repeat(Math.floor(size / 6))}`],
  ['/*a/:"b"x:"c"y', (size) => `/${'x/'.repeat(size / 4)}${'x'.repeat(size / 2)}`],
];

for (const [path, make] of hostile) {
  test(`matching ${path} takes steps linear in the path on ${JSON.stringify(make(8))}...`, () => {
    const matcher = matcherOf([path]);
    // First on a short path: a backtracking search of the long ones could take minutes.
    assert.ok(stepsOf(matcher, make(24)) > 0, 'the tail matcher was not used');
    const small = stepsOf(matcher, make(8192));
    const large = stepsOf(matcher, make(16384));
    // Twice the path, about twice the work (a quadratic search would take four times, a cubic eight).
    assert.ok(large / small > 1.8 && large / small < 2.2, `${small} steps for 8 KiB, ${large} for 16 KiB`);
    // A few steps per character and variant (each variant is searched), whatever the path.
    const variants = compilePattern(path, '/', {}, 'route path').variants.length;
    assert.ok(large < 16384 * 8 * variants, `${large} steps for 16 KiB, ${variants} variants`);
  });
}

test('every variant of a tail whose parameters stop at the separators opening groups after them is the tail matcher\'s, not a backtracking regex', () => {
  // The steps above count the tail matcher's work only: a variant left to its regex would go unseen there.
  for (const path of ['/*a/*b/:c{.:d}{-:e}', '/*a/*b/:c{.:d}x', '/*a/:c{.:d}{-:e}{_:f}/x']) {
    for (const variant of compilePattern(path, '/', {}, 'route path').variants) {
      assert.ok(TailMatcher.of(variant.slice(1)) !== null, `${path}: ${variantSource(variant)}`);
    }
  }
});

// explain() (the profiler's router panel) tells for each route whether the path matches its
// pattern; it runs on paths clients wrote, so it must not backtrack either.
test('explain() says whether each route\'s pattern matches as its regexes would', () => {
  let matched = 0;
  let checked = 0;
  fc.assert(
    fc.property(
      pattern.chain((path) => fc.tuple(fc.constant(path), fc.array(fc.oneof(randomPath, filledPath(path), filledPath(path)), { minLength: 6, maxLength: 6 }))),
      ([path, requests]) => {
        const matcher = matcherOf([path]);
        for (const request of requests) {
          const [trace] = matcher.explain(request, POST);
          const expected = regexesOf(path).some(([, regex]) => regex.test(request));
          checked++;
          if (expected) matched++;
          assert.is(trace!.checks.path, expected, `${path} on ${request}`);
        }
      },
    ),
    propertyParameters(1000),
  );
  assert.ok(matched > checked / 5, `only ${matched} matches in ${checked} paths`);
});

for (const [path, make] of hostile) {
  test(`explain() reads ${path} in steps linear in the path`, () => {
    const matcher = matcherOf([path]);
    const explainSteps = (request: string): number => {
      const before = tailMatcherSteps();
      matcher.explain(request, POST);
      return tailMatcherSteps() - before;
    };
    assert.ok(explainSteps(make(24)) > 0, 'the tail matcher was not used');
    const small = explainSteps(make(8192));
    const large = explainSteps(make(16384));
    // Per route, the path as given and its trailing-slash twins: a handful of searches, each linear.
    assert.ok(large / small > 1.8 && large / small < 2.2, `${small} steps for 8 KiB, ${large} for 16 KiB`);
  });
}

// A host pattern's parameter followed by text that is no separator gives characters back to it, as in a path:
// its regex took cubic time on a long Host header (9.8 s for 4,000 x), which any client can send.
test('a host parameter followed by text that is no separator is matched as its regex would, in steps linear in the host', () => {
  const collection = new RouteCollection();
  collection.add('r', new Route('/', { host: ':"a"x:"b"x:"c"y.example.com' }));
  collection.add('s', new Route('/s', { host: 'api-:"a"x.:b.example.com' }));
  const matcher = new UrlMatcher(collection);
  const hosted = (path: string, host: string) => outcome(matcher.lookup(path, { method: 'GET', host, scheme: 'http' }));
  assert.equal(hosted('/', 'axbxxcy.example.com'), { kind: 'match', name: 'r', params: { a: 'a', b: 'bx', c: 'c' } });
  assert.equal(hosted('/', 'AXBXCY.Example.com:8080'), { kind: 'match', name: 'r', params: { a: 'a', b: 'b', c: 'c' } });
  assert.equal(hosted('/s', 'api-1x2x.eu.example.com'), { kind: 'match', name: 's', params: { a: '1x2', b: 'eu' } });
  assert.is(hosted('/', 'xxy.example.com').kind, 'not-found');
  assert.equal(matcher.explain('/', { method: 'GET', host: 'axbxcy.example.com', scheme: 'http' })[0]!.verdict, 'match');
  const steps = (host: string): number => {
    const before = tailMatcherSteps();
    assert.is(matcher.lookup('/', { method: 'GET', host, scheme: 'http' }).kind, 'not-found');
    return tailMatcherSteps() - before;
  };
  assert.ok(steps('x'.repeat(24)) > 0, 'the tail matcher was not used');
  const small = steps('x'.repeat(8192));
  const large = steps('x'.repeat(16384));
  assert.ok(large / small > 1.8 && large / small < 2.2, `${small} steps for 8 KiB, ${large} for 16 KiB`);
});

test.run();
