// The matcher searches a tree and prunes it by priority; explain() tries each route's own regex in
// collection order. On random route sets and paths both must pick the same route, and the
// matcher's parameters must be those the winning route's regex captures.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Route, RouteCollection, UrlMatcher } from '../../../lib/routing/index.js';

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x80000000;
  };
}

const words = ['a', 'b', 'ab', 'books', 'new', 'x.y'];
const values = ['a', 'b', 'ab', 'books', 'new', '12', '7', 'x.y', 'a.b', 'q%20r', 'x.', '1.2', 'x.html', 'a-b.c-d'];

function pick<T>(next: () => number, list: readonly T[]): T {
  return list[Math.floor(next() * list.length)]!;
}

// A random pattern of 1 to 3 segments mixing text, parameters, requirements, groups and wildcards;
// with `slashes`, a fifth of them end with a `/`.
function randomRoute(next: () => number, index: number, slashes = false): Route {
  const segments: string[] = [];
  const requirements: Record<string, string> = {};
  const count = 1 + Math.floor(next() * 3);
  for (let i = 0; i < count; i++) {
    const kind = next();
    const name = `p${index}_${i}`;
    if (kind < 0.4) segments.push(`/${pick(next, words)}`);
    else if (kind < 0.6) segments.push(`/:${name}`);
    else if (kind < 0.7) {
      segments.push(`/:${name}`);
      requirements[name] = pick(next, ['\\d+', '[a-z]+', '.+', 'a|ab']);
    } else if (kind < 0.8) segments.push(`{/:${name}}`);
    else if (kind < 0.83) segments.push(`/:${name}.:${name}e`);
    else if (kind < 0.86) segments.push(`/:${name}{.:${name}e}`);
    else if (kind < 0.88) segments.push(`/:${name}{/:${name}g}.html`);
    else if (kind < 0.9) segments.push(`/:${name}{.:${name}e}{-:${name}f}`);
    else segments.push(`/*${name}`);
  }
  return new Route(segments.join('') + (slashes && next() < 0.2 ? '/' : ''), { requirements });
}

function randomPath(next: () => number): string {
  const count = 1 + Math.floor(next() * 3);
  let path = '';
  for (let i = 0; i < count; i++) path += `/${pick(next, values)}`;
  return path;
}

const context = { method: 'GET', host: 'localhost', scheme: 'http' } as const;

test('on random route sets the tree picks the route the regexes pick, with the same parameters', () => {
  const next = random(7);
  let compared = 0;
  for (let set = 0; set < 150; set++) {
    const collection = new RouteCollection();
    const size = 2 + Math.floor(next() * 8);
    for (let i = 0; i < size; i++) collection.add(`r${i}`, randomRoute(next, i));
    const matcher = new UrlMatcher(collection);
    for (let k = 0; k < 40; k++) {
      const path = randomPath(next);
      const traces = matcher.explain(path, context);
      const winner = traces.find((trace) => trace.verdict === 'match');
      const result = matcher.lookup(path, context);
      const routes = [...collection].map(([name, route]) => `${name} ${route.path} ${JSON.stringify(route.requirements)}`).join('\n');
      if (winner === undefined) {
        assert.ok(result.kind !== 'match', `${path} matched ${result.kind === 'match' ? result.name : ''} but no route regex does\n${routes}`);
        continue;
      }
      assert.is(result.kind, 'match', `${path} should match ${winner.name}\n${routes}`);
      if (result.kind !== 'match') continue;
      assert.is(result.name, winner.name, `${path}\n${routes}`);
      compared++;
      // Every parameter value must come from the path: decoded, and for a wildcard split into segments.
      for (const [name, value] of Object.entries(result.params)) {
        const text = Array.isArray(value) ? value.join('/') : String(value);
        assert.ok(decodeURIComponent(path).includes(text), `${path}: ${name}=${text}`);
      }
    }
  }
  assert.ok(compared > 500, `only ${compared} matches compared`);
});

test('skipping the trailing-slash retry never changes the answer: a miss stays a miss on the toggled path', () => {
  const next = random(11);
  let misses = 0;
  for (let set = 0; set < 150; set++) {
    const collection = new RouteCollection();
    const size = 2 + Math.floor(next() * 8);
    for (let i = 0; i < size; i++) collection.add(`r${i}`, randomRoute(next, i, true));
    const matcher = new UrlMatcher(collection);
    for (let k = 0; k < 40; k++) {
      let path = randomPath(next);
      if (next() < 0.5) path += '/';
      const result = matcher.lookup(path, context);
      const trimmed = path.replace(/\/+$/, '') || '/';
      if (trimmed === '/') continue;
      const toggled = trimmed === path ? `${path}/` : trimmed;
      const retried = matcher.lookup(toggled, context);
      if (result.kind === 'not-found') {
        misses++;
        assert.is(result.path, toggled);
        assert.ok(retried.kind !== 'match', `${path} is a miss but ${toggled} matches`);
      }
      if (result.kind === 'redirect') {
        assert.is(retried.kind, 'match');
        assert.is(retried.kind === 'match' && retried.name, result.name);
      }
    }
  }
  assert.ok(misses > 500, `only ${misses} misses checked`);
});

test.run();
