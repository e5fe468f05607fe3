import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { flattenError } from '../../../lib/errors/flatten-error.js';
import { GENERIC_SERVER_ERROR_DETAIL, renderProblem, serializeProblem } from '../../../lib/errors/problem-json.js';

const notFound = flattenError(
  Object.assign(new Error('No route found for "GET http://127.0.0.1:8000/robots.txt"', { cause: new Error('No routes found for "/robots.txt/".') }), {
    status: 404,
  }),
);
const crash = flattenError(new TypeError('Cannot read properties of undefined (reading "id")', { cause: new RangeError('deep') }));

test('a 4xx outside debug has type, title, status and the message as detail, nothing else', () => {
  assert.equal(renderProblem({ errors: notFound, status: 404, debug: false }), {
    type: 'about:blank',
    title: 'Not Found',
    status: 404,
    detail: 'No route found for "GET http://127.0.0.1:8000/robots.txt"',
  });
});

test('a 5xx outside debug hides the message, class, trace and causes', () => {
  const problem = renderProblem({ errors: crash, status: 500, debug: false });
  assert.equal(problem, { type: 'about:blank', title: 'Internal Server Error', status: 500, detail: GENERIC_SERVER_ERROR_DETAIL });
  assert.not.ok(serializeProblem(problem).includes('Cannot read'));
});

test('debug adds the class, the trace frames and the causes', () => {
  const problem = renderProblem({ errors: crash, status: 500, debug: true });
  assert.is(problem.detail, 'Cannot read properties of undefined (reading "id")');
  assert.is(problem.class, 'TypeError');
  assert.equal(problem.causes, [{ class: 'RangeError', message: 'deep' }]);
  assert.ok(problem.trace!.length > 0);
  assert.equal(Object.keys(problem.trace![0]!).sort(), ['file', 'function', 'line']);
  assert.ok(problem.trace![0]!.file!.endsWith('problem-json.test.ts'));
});

test('debug says how many errors of a cut chain are not listed, as omittedCauses; a whole chain has none', () => {
  let error = new Error('error 1000');
  for (let i = 999; i >= 1; i--) error = new Error(`error ${i}`, { cause: error });
  const problem = renderProblem({ errors: flattenError(error), status: 500, debug: true });
  assert.is(problem.causes!.length, 19);
  assert.is(problem.causes!.at(-1)!.message, 'error 20');
  assert.is(problem.omittedCauses, 980);
  assert.ok(serializeProblem(problem).endsWith('"omittedCauses":980}'));
  assert.not.ok('omittedCauses' in renderProblem({ errors: crash, status: 500, debug: true }));
  assert.not.ok('omittedCauses' in renderProblem({ errors: flattenError(error), status: 500, debug: false }));
});

test('includes instance and a specific type when given', () => {
  const problem = renderProblem({ errors: notFound, status: 404, debug: false, instance: '/robots.txt', type: 'https://example.com/probs/no-route' });
  assert.is(problem.instance, '/robots.txt');
  assert.is(problem.type, 'https://example.com/probs/no-route');
});

test('uses the status text as detail when the message is empty', () => {
  assert.is(renderProblem({ errors: flattenError(Object.assign(new Error(''), { status: 403 })), status: 403, debug: false }).detail, 'Forbidden');
});

test('serializes to JSON that parses back to the same document with no raw < > &', () => {
  const problem = renderProblem({ errors: flattenError(Object.assign(new Error('<script>a && b</script>'), { status: 400 })), status: 400, debug: false });
  const text = serializeProblem(problem);
  assert.not.ok(/[<>&]/.test(text));
  assert.equal(JSON.parse(text), problem);
});

test('serializes the line separators U+2028 and U+2029 as \\u escapes, which a script would read as line ends', () => {
  const problem = renderProblem({ errors: flattenError(Object.assign(new Error('a\u2028b\u2029c'), { status: 400 })), status: 400, debug: false });
  const text = serializeProblem(problem);
  assert.ok(text.includes('"detail":"a\\u2028b\\u2029c"'), text);
  assert.equal(JSON.parse(text), problem);
});

test('a 5xx outside debug has the same generic sentence as detail whatever failed', () => {
  const other = flattenError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { status: 503 }));
  const details = [renderProblem({ errors: crash, status: 500, debug: false }).detail, renderProblem({ errors: other, status: 503, debug: false }).detail];
  assert.is(details[0], details[1]);
  assert.match(details[0]!, /^The server could not complete the request because of an internal error\.$/);
});

test('an empty type is about:blank, as no type is', () => {
  assert.is(renderProblem({ errors: notFound, status: 404, debug: false, type: '' }).type, 'about:blank');
  assert.is(renderProblem({ errors: notFound, status: 404, debug: false }).type, 'about:blank');
});

test('no error at all gives the status text as detail, and in debug no class, trace or causes', () => {
  for (const debug of [false, true]) {
    assert.equal(renderProblem({ errors: [], status: 404, debug }), { type: 'about:blank', title: 'Not Found', status: 404, detail: 'Not Found' }, `debug ${debug}`);
  }
});

test.run();
