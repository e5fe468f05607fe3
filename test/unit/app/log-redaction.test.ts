// What stderr gets hides the secrets the profiler hides: a log is no safer a place for a password than a profile.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request, Response } from '../../../kernel/index.js';
import { createKernel, type KernelOptions } from '../../../lib/app/index.js';
import { formatLine, type LogRecord } from '../../../lib/log/index.js';
import { MemoryStorage, Redactor, type LoggerData } from '../../../lib/profiler/index.js';
import { Route, RouteCollection } from '../../../lib/routing/index.js';

/** The stderr lines written while `fn` runs against a kernel made with `options`. */
async function stderrOf(options: KernelOptions, fn: (app: ReturnType<typeof createKernel>) => Promise<void> | void): Promise<string> {
  const lines: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string) => (lines.push(String(chunk)), true)) as typeof process.stderr.write;
  const app = createKernel({ stderrLogLevel: 'warning', ...options });
  try {
    await fn(app);
  } finally {
    process.stderr.write = write;
    await app.close();
  }
  return lines.join('');
}

test('a 404 for a URL with a secret query parameter: the request path hides its value, the rest is as sent', async () => {
  const written = await stderrOf({ requestContext: true }, async (app) => {
    await app.kernel.handle(Request.create('http://127.0.0.1:8000/missing?password=hunter2&page=2'));
  });
  assert.not.ok(written.includes('hunter2'), written);
  const line = JSON.parse(written.trim().split('\n')[0]!);
  assert.is(line.request.path, '/missing?password=%5Bredacted%5D&page=2');
});

test('a record\'s secret context keys, its placeholders of them and the secret pairs in its strings are hidden', async () => {
  const written = await stderrOf({}, (app) => {
    app.logger.warning('Login of {user} with {password} failed', { user: 'ann', password: 'hunter2', detail: { apiKey: 'k-123', tries: 3 }, note: 'sent token=t-456 at once' });
  });
  for (const secret of ['hunter2', 'k-123', 't-456']) assert.not.ok(written.includes(secret), `${secret} in ${written}`);
  const line = JSON.parse(written);
  assert.is(line.message, 'Login of ann with [redacted] failed');
  assert.equal(line.context, { user: 'ann', password: '[redacted]', detail: { apiKey: '[redacted]', tries: 3 }, note: 'sent token=[redacted] at once' });
});

test('profiler.redaction sets the rules for stderr too, also with the profiler off', async () => {
  const written = await stderrOf({ profiler: { redaction: { keyPattern: /^pin$/ } } }, (app) => {
    app.logger.warning('Codes', { pin: '1234', password: 'shown' });
  });
  assert.equal(JSON.parse(written).context, { pin: '[redacted]', password: 'shown' });
});

test('an Error in a placeholder is written by its name and message, its secret pairs hidden, alike on stderr and on the profiler\'s logger panel', async () => {
  let logged: string[] = [];
  const routes = new RouteCollection().add('login', new Route('/login', {
    defaults: {
      _controller: () => {
        app.logger.error('Failed: {error}', { error: new TypeError('login with password=hunter2 refused') });
        return new Response('no');
      },
    },
  }));
  let app!: ReturnType<typeof createKernel>;
  const written = await stderrOf({ env: 'dev', debug: true, routes, profiler: { storage: new MemoryStorage(), saveDelayMs: 0 } }, async (made) => {
    app = made;
    const request = Request.create('http://127.0.0.1:8000/login');
    const response = await app.kernel.handle(request);
    await app.kernel.terminate(request, response);
    const profile = app.profiler!.present((await app.profiler!.loadProfile(response.getHeader('x-debug-token')!))!);
    logged = (profile.collectors.logger as LoggerData).logs.filter((record) => record.level === 3).map((record) => record.message);
  });
  const expected = 'Failed: TypeError: login with password=[redacted] refused';
  assert.not.ok(written.includes('hunter2'), written);
  assert.is(JSON.parse(written.trim().split('\n')[0]!).message, expected);
  assert.equal(logged, [expected]);
});

test('a text line (a terminal) hides the same', () => {
  const record: LogRecord = { time: 0, level: 4, levelName: 'WARNING', channel: 'app', message: 'Login with hunter2 (secret=s-1 given)', template: 'Login with {password} (secret=s-1 given)', context: { password: 'hunter2' } };
  const line = formatLine(record, { method: 'GET', path: '/login?token=t-1&x=1' }, new Redactor());
  assert.is(line, '[1970-01-01T00:00:00.000Z] app.WARNING: Login with [redacted] (secret=[redacted] given) {"password":"[redacted]"} [GET /login?token=%5Bredacted%5D&x=1]\n');
  assert.ok(formatLine(record).includes('hunter2'), 'without rules, as logged');
});

test.run();
