// The parameter builder, unit by unit: where code generation is available a generated function
// (one per parameter shape, shared by every route of that shape) builds a match's parameters; the
// generic loop is the fallback (exercised by url-matcher-no-codegen.test.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Route } from '../../../lib/routing/index.js';
import { paramsBuilder } from '../../../lib/routing/params-builder.js';
import { Candidate, type CandidateBase } from '../../../lib/routing/route-tree.js';

function candidate(defaults: Record<string, unknown>): Candidate {
  const base = { prio: 0, name: 'r', route: new Route('/x/:id/*rest'), mask: -1, staticHost: null, hostVariants: null, schemes: null, conditional: false, defaults };
  return new Candidate(base satisfies CandidateBase, ['id', 'rest'], [false, true], 2);
}

test('a generated builder decodes the path parameters and lays them over the defaults no parameter names', () => {
  const c = candidate({ id: 'none', _controller: 'c' });
  const build = paramsBuilder(c);
  // The generated function is named `build`; the generic fallback is an anonymous arrow.
  assert.is(build.name, 'build');
  assert.equal(c.defaultValues, ['c']);
  const path = '/x/a%20b/c/d%2F';
  const positions = [3, path.indexOf('/', 3), path.indexOf('/', 3) + 1, path.length];
  const params = build(path, positions, null, c.defaultValues);
  assert.equal(params, { _controller: 'c', id: 'a b', rest: ['c', 'd/'] });
  // A malformed parameter answers its index.
  assert.is(build('/x/%zz/c', [3, 6, 7, 8], null, c.defaultValues), 0);
  assert.is(build('/x/a/c/%zz', [3, 4, 5, 10], null, c.defaultValues), 1);
});

test('routes of one parameter shape share one builder, each with its own default values', () => {
  const first = candidate({ _controller: 'first' });
  const second = candidate({ _controller: 'second' });
  const build = paramsBuilder(first);
  assert.is(paramsBuilder(second), build);
  assert.equal(build('/x/1/2', [3, 4, 5, 6], null, second.defaultValues), { _controller: 'second', id: '1', rest: ['2'] });
});

test('a generated builder reads the parameters after the tree from the tail match', () => {
  const base = { prio: 0, name: 'r', route: new Route('/f/:id/*path.:ext'), mask: -1, staticHost: null, hostVariants: null, schemes: null, conditional: false, defaults: {} };
  const c = new Candidate(base satisfies CandidateBase, ['id', 'path', 'ext'], [false, true, false], 1);
  const build = paramsBuilder(c);
  assert.is(build.name, 'build');
  assert.equal(build('/f/1/a/b%20c.html', [3, 4], ['a/b%20c.html', 'a/b%20c', 'html'], c.defaultValues), { id: '1', path: ['a', 'b c'], ext: 'html' });
  assert.is(build('/f/1/a.%zz', [3, 4], ['a.%zz', 'a', '%zz'], c.defaultValues), 2);
});

test.run();
