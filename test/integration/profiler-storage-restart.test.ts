// A profiler page whose storage call is in flight when the storage's worker thread dies: the call is sent
// once more, to a new thread, and the page answered; when that thread dies too, a 503 with Retry-After
// saying the storage restarted, never a 500.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { LogEntry, LogRecord } from '../../lib/log/index.js';
import type { Profile } from '../../lib/profiler/profile.js';
import { FileStorage, ThreadedFileStorage } from '../../lib/profiler/storage/index.js';
import { MAX_RESTART_DELAY_MS, StartBackoff } from '../../lib/profiler/storage/start-backoff.js';
import { TOOLBAR_POLICY } from '../../lib/profiler/ui/index.js';
import { SCHEMES, decodeEntities, fetchFrom, header, savedProfile, startTestServer, type TestServer } from './harness.js';

/** The token of a profile of 200,000 small objects: the storage thread (heap limited below) dies parsing it. */
const POISON = 'dead00';
/** Enough heap for the thread to start and answer, not to parse the poison profile. */
const THREAD_LIMITS = { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 };

function poisonProfile(): Profile {
  const logs = Array.from({ length: 200_000 }, (_, i) => ({ i, m: `m${i}` }));
  return { token: POISON, parent: null, children: [], ip: '127.0.0.1', method: 'GET', url: 'http://127.0.0.1/poison', time: Date.now(), status: 200, collectors: { logger: { logs } } };
}

for (const scheme of SCHEMES) {
  const test = suite(`profiler pages while the storage thread dies over ${scheme}`);
  let server: TestServer;
  let storage: ThreadedFileStorage;
  let dir: string;
  /** The storage's backoff clock: it moves only when a test says so. */
  let now = 0;
  const records: LogRecord[] = [];
  const onLog = (entry: LogEntry): void => void records.push(entry.record);

  test.before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hk-storage-restart-'));
    const writer = new FileStorage({ dir });
    await writer.write(poisonProfile());
    await writer.close();
    storage = new ThreadedFileStorage({ dir, resourceLimits: THREAD_LIMITS }, new StartBackoff(() => now));
    server = await startTestServer({ kernel: { env: 'dev', debug: true, profiler: { storage } } });
    server.app.bus.on('log', onLog);
  });
  test.before.each(() => {
    records.length = 0;
  });
  test.after(async () => {
    server.app.bus.off('log', onLog);
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a profile page whose read stops the storage thread, and the restarted one, is a 503 with Retry-After saying the storage restarted', async () => {
    for (const accept of ['text/html']) {
      const response = await fetchFrom(server, scheme, `/_profiler/${POISON}`, { headers: { accept } });
      assert.is(response.status, 503, accept);
      assert.is(header(response.headers['retry-after']), '1', accept);
      assert.is(header(response.headers['cache-control']), 'no-store', accept);
      const message = accept === 'application/json' ? (JSON.parse(response.body) as { error: string; retryAfter: number }) : null;
      if (message !== null) assert.is(message.retryAfter, 1);
      assert.match(message?.error ?? decodeEntities(response.body), "The profiler's storage thread stopped while reading for this page", accept);
      if (message === null) assert.match(response.body, 'Reload this page in 1 second.');
    }
    assert.equal(records.filter((record) => record.level <= 2).map((record) => record.message), [], 'nothing logged CRITICAL');
  });

  test('that profile is not read again: its page is a 500 saying it cannot be read, without Retry-After, logged at ERROR, never CRITICAL', async () => {
    for (const accept of ['text/html', 'application/json']) {
      const response = await fetchFrom(server, scheme, `/_profiler/${POISON}`, { headers: { accept } });
      assert.is(response.status, 500, accept);
      assert.is(response.headers['retry-after'], undefined, accept);
      assert.is(header(response.headers['cache-control']), 'no-store', accept);
      const message = accept === 'application/json' ? (JSON.parse(response.body) as { error: string }).error : decodeEntities(response.body);
      assert.match(message, `The profile ${POISON} cannot be read: its reads stopped the profiler storage thread twice`, accept);
    }
    const toolbar = await fetchFrom(server, scheme, `/_wdt/${POISON}`, { headers: { accept: 'text/html' } });
    assert.is(toolbar.status, 500);
    assert.is(toolbar.body, '');
    assert.is(header(toolbar.headers['content-security-policy']), TOOLBAR_POLICY);
    assert.equal(records.filter((record) => record.level <= 2).map((record) => record.message), [], 'nothing logged CRITICAL');
    assert.is(records.filter((record) => record.level === 3 && record.message.includes(`The profile ${POISON} cannot be read`)).length, 1, 'logged once at ERROR');
  });

  test('the toolbar is an empty 503 under its own policy while the storage thread is stopped', async () => {
    // The clock stands still: the storage waits for the backoff before it starts another thread.
    const response = await fetchFrom(server, scheme, '/_wdt/abc123', { headers: { accept: 'text/html' } });
    assert.is(response.status, 503);
    assert.is(response.body, '');
    assert.is(header(response.headers['retry-after']), '1');
    assert.is(header(response.headers['content-security-policy']), TOOLBAR_POLICY);
  });

  test('a profile page and a search in flight when the storage thread dies are answered by the restarted thread', async () => {
    // The threads stopped in a row above: the next starts once the backoff has passed.
    now += MAX_RESTART_DELAY_MS;
    const token = header((await fetchFrom(server, scheme, '/missing-page')).headers['x-debug-token']);
    await savedProfile(server, token);
    // A batch beyond the thread's heap: it dies on it, the page's read and the search sent behind it.
    const huge = Array.from({ length: 100_000 }, (_, i) => ({ token: (0xa00000 + i).toString(16), parent: null, ip: '127.0.0.1', method: 'GET', url: 'http://x/', time: Date.now(), status: 200, json: `{"i":${i}}` }));
    const crash = storage.writeMany(huge).then(() => 'written', (error: unknown) => (error as Error).message);
    const [page, search] = await Promise.all([fetchFrom(server, scheme, `/_profiler/${token}`), fetchFrom(server, scheme, '/_profiler/search?url=missing-page', { headers: { accept: 'application/json' } })]);
    assert.match(await crash, /stopped/, 'the thread died');
    assert.is(page.status, 200);
    assert.match(page.body, '/missing-page');
    assert.is(search.status, 200);
    assert.ok((JSON.parse(search.body) as { results: { token: string }[] }).results.some((result) => result.token === token));
  });

  test.run();
}
