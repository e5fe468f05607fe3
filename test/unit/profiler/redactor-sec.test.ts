import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request } from '../../../kernel/index.js';
import { createApp } from '../../../lib/app/index.js';
import { MemoryStorage, REDACTED, Redactor } from '../../../lib/profiler/index.js';

/** Milliseconds `fn` takes. A linear scan of these inputs takes about one; the quadratic ones took seconds. */
function millis(fn: () => unknown): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

const BOUND_MS = 150;

test('free text of many ";" with no secret pair is scanned in linear time', () => {
  const redactor = new Redactor();
  const text = `=${';'.repeat(30_000)}`;
  let out = '';
  const ms = millis(() => (out = redactor.text(text)));
  assert.is(out, text);
  assert.ok(ms < BOUND_MS, `${ms.toFixed(0)} ms`);
  assert.ok(millis(() => redactor.body(text, 'text/plain')) < BOUND_MS);
});

test('";" still separates pairs in free text: the secret after it is hidden', () => {
  const redactor = new Redactor();
  assert.is(redactor.text('a=1;password=hunter2; b=2'), `a=1;password=${REDACTED}; b=2`);
  assert.is(redactor.text('x;token=abc'), `x;token=${REDACTED}`);
});

test('a JSON body that does not parse, full of escaped quotes, is scanned in linear time', () => {
  const redactor = new Redactor();
  for (const text of [`"${'\\"'.repeat(20_000)}`, `{"a":"${'\\"'.repeat(20_000)}\\`, `"${'\\\n"'.repeat(15_000)}`]) {
    const ms = millis(() => redactor.body(text, 'application/json'));
    assert.ok(ms < BOUND_MS, `${ms.toFixed(0)} ms for ${text.slice(0, 12)}`);
  }
});

test('a cut JSON body still hides a secret pair, also after an escaped quote and before a string cut at a backslash', () => {
  const redactor = new Redactor();
  assert.is(redactor.body('{"a":"x\\"y","password":"hunter2","b":"\\', 'application/json'), `{"a":"x\\"y","password":${JSON.stringify(REDACTED)},"b":"\\`);
  assert.is(redactor.body('{"token":"abc\\', 'application/json'), `{"token":${JSON.stringify(REDACTED)}`);
});

test('a 404 for a long path of ";" costs a debug server no quadratic work when its profile is collected', async () => {
  const app = createApp({ profiler: { storage: new MemoryStorage(), saveDelayMs: 0 }, stderrLogLevel: false });
  try {
    const request = Request.create(`/=${';'.repeat(15_000)}`, 'GET', { remoteAddress: '203.0.113.9', headers: { referer: `=${';'.repeat(15_000)}` } });
    const response = await app.kernel.handle(request);
    const start = performance.now();
    await app.kernel.terminate(request, response);
    const ms = performance.now() - start;
    assert.is(response.status, 404);
    assert.ok(ms < 4 * BOUND_MS, `${ms.toFixed(0)} ms`);
  } finally {
    await app.close();
  }
});

test.run();
