// The matcher runs a generated search for small unconditional route sets and the generic tree
// walk otherwise (and wherever code generation from strings is disallowed). On random route sets
// both must give the same outcome for every path and method: the route, its parameters, the
// 405's Allow, the redirect and the 404's last path tried.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Route, RouteCollection, UrlMatcher } from '../../../lib/routing/index.js';
import { RouteTree } from '../../../lib/routing/route-tree.js';
import { compilePattern } from '../../../lib/routing/pattern.js';

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x80000000;
  };
}

function pick<T>(next: () => number, list: readonly T[]): T {
  return list[Math.floor(next() * list.length)]!;
}

const words = ['a', 'b', 'ab', 'books', 'new', 'x.y'];
const values = ['a', 'b', 'ab', 'books', 'new', '12', '7', 'x.y', 'a.b', 'q%20r', 'bad%zz', 'x.y%41', 'a-b', 'x-y.z', 'ahtml', 'a.html', 'x.', 'a-', '1.2', 'x.html', 'a-x', 'x-y.z-w'];
const methodSets = [['GET'], ['POST'], ['GET', 'POST'], ['PUT'], []];
const requestMethods = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'];

// Patterns the generated search handles: text, parameters (some with requirements that cannot
// match `/`), two parameters in one segment (split at a separator, `.` or `-`), text after a
// parameter (a separator ends it; other text takes back what it needs, a tail the walk keeps),
// optional groups (one may open the pattern; one opening with a separator ends the parameter
// before it, the group written or not; a parameter before `{/:g}.html` stops at the `.` only
// without the group), and a wildcard at the end.
function randomRoute(next: () => number, index: number): Route {
  let path = next() < 0.1 ? `{/:p${index}_o}` : '';
  const requirements: Record<string, string> = {};
  const count = 1 + Math.floor(next() * 3);
  for (let i = 0; i < count; i++) {
    const kind = next();
    const name = `p${index}_${i}`;
    if (kind < 0.35) path += `/${pick(next, words)}`;
    else if (kind < 0.45) path += `/:${name}`;
    else if (kind < 0.55) {
      path += `/:${name}`;
      requirements[name] = pick(next, ['\\d+', '[a-z]+', 'a|ab']);
    } else if (kind < 0.63) path += `{/:${name}}`;
    else if (kind < 0.68) path += `/:${name}${pick(next, ['.', '-'])}:${name}e`;
    else if (kind < 0.73) path += `/:${name}{${pick(next, ['.', '-'])}:${name}e}`;
    else if (kind < 0.78) path += `/:${name}{/:${name}g}${pick(next, ['.html', '-x'])}`;
    else if (kind < 0.8) path += `/:${name}{.:${name}e}{-:${name}f}`;
    else if (kind < 0.9) path += `/:"${name}"${pick(next, ['.html', '-x', 'html', 'b'])}`;
    else {
      path += `/*${name}`;
      break;
    }
  }
  if (next() < 0.2) path += '/';
  return new Route(path, { requirements, methods: pick(next, methodSets), defaults: next() < 0.5 ? { _controller: 'c', format: 'html' } : {} });
}

function randomPath(next: () => number): string {
  const count = 1 + Math.floor(next() * 3);
  let path = '';
  for (let i = 0; i < count; i++) path += `/${pick(next, values)}`;
  return next() < 0.3 ? `${path}/` : path;
}

// A path made from one of the routes: parameters filled in, then cut short or its trailing slash
// toggled, so that searches stop inside static text and the trailing-slash retry is exercised.
function nearPath(next: () => number, route: Route): string {
  let path = route.path
    .replace(/\{([^}]*)\}/g, (_, group: string) => (next() < 0.5 ? group : ''))
    .replace(/[:*](?:"\w+"|\w+)/g, (token) => (token[0] === '*' ? 'a/b' : pick(next, values)));
  const cut = next();
  if (cut < 0.4) path = path.slice(0, 1 + Math.floor(next() * path.length));
  else if (cut < 0.7) path = path.endsWith('/') ? path.slice(0, -1) || '/' : `${path}/`;
  return path;
}

// Every outcome of 150 random sets, as JSON (the route object left out: its name identifies it).
function outcomes(seed: number): string[] {
  const next = random(seed);
  const lines: string[] = [];
  for (let set = 0; set < 150; set++) {
    const collection = new RouteCollection();
    const size = 2 + Math.floor(next() * 8);
    for (let i = 0; i < size; i++) collection.add(`r${i}`, randomRoute(next, i));
    const matcher = new UrlMatcher(collection);
    for (let k = 0; k < 40; k++) {
      const path = next() < 0.5 ? randomPath(next) : nearPath(next, pick(next, [...collection].map(([, route]) => route)));
      const method = pick(next, requestMethods);
      const result = matcher.lookup(path, { method, host: 'localhost', scheme: 'http' });
      lines.push(`${method} ${path} ${JSON.stringify({ ...result, route: undefined, cause: undefined })}`);
    }
  }
  return lines;
}

if (process.env.HK_MATCHER_OUTCOMES !== undefined) {
  process.stdout.write(JSON.stringify(outcomes(Number(process.env.HK_MATCHER_OUTCOMES))));
} else {
  test('the generated search and the generic walk give the same outcome on random route sets', () => {
    for (const seed of [3, 5]) {
      const generic = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', fileURLToPath(import.meta.url)], {
        encoding: 'utf8',
        env: { ...process.env, HK_MATCHER_OUTCOMES: String(seed) },
        maxBuffer: 64 * 1024 * 1024,
      });
      assert.is(generic.status, 0, generic.stderr);
      const expected = JSON.parse(generic.stdout) as string[];
      const actual = outcomes(seed);
      assert.is(actual.length, expected.length);
      let hits = 0;
      for (let i = 0; i < actual.length; i++) {
        assert.is(actual[i], expected[i]);
        if (actual[i]!.includes('"kind":"match"')) hits++;
      }
      assert.ok(hits > 300, `only ${hits} matches compared`);
      assert.ok(actual.some((line) => line.includes('method-not-allowed')), 'no 405 compared');
      assert.ok(actual.some((line) => line.includes('redirect')), 'no redirect compared');
    }
  });

  test('a tree is compiled when every candidate is unconditional and it has no tails', () => {
    const tree = treeOf(['/books/:id', '/books/:id/*rest', '/a{/:b}', '/:x.:y', '/:x-:y', '{/:locale}/home', '/:page.html', '/docs/:version{/:page}.html']);
    assert.ok(tree.compiled);
  });

  test('a tree with a host or scheme condition or a tail keeps the generic walk', () => {
    assert.not.ok(treeOf(['/books/:id'], { conditional: true }).compiled);
    assert.not.ok(treeOf(['/files/*path'], { conditional: true }).compiled);
    // A requirement that may match `/` is matched by a regex for the rest of the path.
    assert.not.ok(treeOf(['/files/:path'], { requirements: { path: '.+' } }).compiled);
    // So is a parameter followed by text that is no separator, which it gives characters back to.
    assert.not.ok(treeOf(['/get:"what"Suffix']).compiled);
  });

  test('a tree of static routes only, or with text longer than 16 characters, is compiled and finds them', () => {
    // Neither needs a parameter slot; a long text is compared with indexOf rather than slice.
    const tree = treeOf(['/health', '/status']);
    assert.ok(tree.compiled);
    assert.ok(tree.find('/status', 1, 'localhost', 'http'));
    assert.is(tree.bestCandidate!.name, 'r1');
    const long = treeOf(['/a-rather-long-static-prefix/:id', '/b']);
    assert.ok(long.compiled);
    assert.ok(long.find('/a-rather-long-static-prefix/7', 1, 'localhost', 'http'));
    assert.not.ok(long.find('/a-rather-long-static-prefiX/7', 1, 'localhost', 'http'));
  });

  test('a compiled tree checks a trailing wildcard\'s requirement', () => {
    const tree = treeOf(['/files/*path'], { requirements: { path: '[a-z/]+' } });
    assert.ok(tree.compiled);
    assert.ok(tree.find('/files/a/b', 1, 'localhost', 'http'));
    assert.not.ok(tree.find('/files/a/1', 1, 'localhost', 'http'));
  });

  test('a tree whose generated search would be too long for V8 to optimize keeps the generic walk', () => {
    const paths = (count: number) => Array.from({ length: count }, (_, i) => `/section${i}/:id`);
    assert.ok(treeOf(paths(10)).compiled);
    // Well under the node count limit, over the source length limit.
    assert.not.ok(treeOf(paths(60)).compiled);
  });

  test('a matcher on a compiled tree still answers every kind of outcome', () => {
    const collection = new RouteCollection();
    collection.add('show', new Route('/books/:id', { methods: ['GET'], defaults: { _controller: 'show' } }));
    collection.add('update', new Route('/books/:id', { methods: ['PUT'] }));
    collection.add('files', new Route('/files/*path', { methods: ['GET'] }));
    const matcher = new UrlMatcher(collection);
    const look = (method: string, path: string) => matcher.lookup(path, { method, host: 'localhost', scheme: 'http' });
    assert.equal(look('GET', '/books/a%20b'), { kind: 'match', name: 'show', route: collection.get('show')!, params: { _controller: 'show', id: 'a b' } });
    assert.equal(look('POST', '/books/12'), { kind: 'method-not-allowed', allowedMethods: ['GET', 'HEAD', 'PUT'] });
    assert.is(look('GET', '/books/12/').kind, 'redirect');
    assert.equal(look('GET', '/books'), { kind: 'not-found', path: '/books/' });
    assert.is(look('GET', '/books/%zz').kind, 'malformed-path');
    assert.equal(look('GET', '/files/a/b%2Fc'), { kind: 'match', name: 'files', route: collection.get('files')!, params: { path: ['a', 'b/c'] } });
  });

  test.run();
}

function treeOf(paths: string[], { conditional = false, requirements = {} as Record<string, string> } = {}): RouteTree {
  const tree = new RouteTree();
  paths.forEach((path, index) => {
    compilePattern(path, '/', requirements, 'path').variants.forEach((parts, variant) => {
      const route = new Route(path, { requirements });
      tree.insert(parts, {
        prio: index * 256 + variant,
        name: `r${index}`,
        route,
        mask: 1,
        staticHost: conditional ? 'example.com' : null,
        hostVariants: null,
        schemes: null,
        conditional,
        defaults: {},
      });
    });
  });
  tree.seal();
  return tree;
}
