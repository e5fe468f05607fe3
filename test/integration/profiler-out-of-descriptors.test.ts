// While the process is out of file descriptors, the profiler's pages that read the storage answer 503 with
// Retry-After (logged once, as a WARNING), not a 500 logged CRITICAL per request; other storage failures keep theirs.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { LogEntry, LogRecord } from '../../lib/log/index.js';
import type { Profile, ProfileSummary } from '../../lib/profiler/profile.js';
import { MemoryStorage, ProfilerStorageError, THREAD_STOPPED_CODE } from '../../lib/profiler/storage/index.js';
import { TOOLBAR_POLICY } from '../../lib/profiler/ui/index.js';
import { SCHEMES, fetchFrom, header, startTestServer, type TestServer } from './harness.js';

/** A storage whose reads fail with `code`, wrapped as FileStorage wraps an fs error. */
class FailingReads extends MemoryStorage {
  code = 'EMFILE';
  /** The wait a stop says (STOPPED). */
  retryAfterMs = 3_200;

  #failure(): ProfilerStorageError {
    if (this.code === 'STOPPED') {
      // As ThreadedFileStorage fails a call while it waits before starting its thread again, 3.2 s to go.
      return new ProfilerStorageError('The profiler storage thread for /var/profiler stopped (exit code 1): out of memory.', THREAD_STOPPED_CODE, { retryAfterMs: this.retryAfterMs });
    }
    const cause = Object.assign(new Error(`${this.code}: too many open files, open '/var/profiler/index'`), { code: this.code });
    return new ProfilerStorageError(`Cannot read profile abc123 in the profiler storage /var/profiler: ${cause.message}`, 'HK_PROFILER_STORAGE', { cause });
  }

  override async read(_token: string): Promise<Profile | null> {
    throw this.#failure();
  }

  override async find(): Promise<ProfileSummary[]> {
    throw this.#failure();
  }
}

for (const scheme of SCHEMES) {
  const test = suite(`profiler pages out of file descriptors over ${scheme}`);
  let server: TestServer;
  let storage: FailingReads;
  const records: LogRecord[] = [];
  const onLog = (entry: LogEntry): void => void records.push(entry.record);

  test.before(async () => {
    storage = new FailingReads();
    server = await startTestServer({ kernel: { env: 'dev', debug: true, profiler: { storage } } });
    server.app.bus.on('log', onLog);
  });
  test.before.each(() => {
    storage.code = 'EMFILE';
    storage.retryAfterMs = 3_200;
    records.length = 0;
  });
  test.after(async () => {
    server.app.bus.off('log', onLog);
    await server.close();
  });

  test('the shortage is logged once as a WARNING, never CRITICAL, however many pages are asked for', async () => {
    for (let i = 0; i < 3; i++) assert.is((await fetchFrom(server, scheme, '/_profiler/abc123')).status, 503);
    assert.is((await fetchFrom(server, scheme, '/_wdt/abc123')).status, 503);
    assert.equal(records.filter((record) => record.level <= 2).map((record) => record.message), []);
    const warnings = records.filter((record) => record.levelName === 'WARNING' && record.message.includes('file descriptors'));
    assert.is(warnings.length, 1, JSON.stringify(records.map((record) => record.message)));
    assert.match(warnings[0]!.message, 'EMFILE');
  });

  test('a profile page, its JSON and /_profiler/latest are a 503 with Retry-After saying the server is out of file descriptors', async () => {
    for (const [path, accept] of [['/_profiler/abc123', 'text/html'], ['/_profiler/abc123', 'application/json'], ['/_profiler/latest', 'text/html'], ['/_profiler/', 'text/html']] as const) {
      const response = await fetchFrom(server, scheme, path, { headers: { accept } });
      assert.is(response.status, 503, `${path} (${accept})`);
      assert.is(header(response.headers['retry-after']), '5', path);
      assert.is(header(response.headers['cache-control']), 'no-store', path);
      assert.match(response.body, 'out of file descriptors for now', path);
      if (accept === 'application/json') assert.is(JSON.parse(response.body).retryAfter, 5);
    }
  });

  test('the toolbar is an empty 503 under its own policy, which its loader turns into the link to the profile', async () => {
    const response = await fetchFrom(server, scheme, '/_wdt/abc123', { headers: { accept: 'text/html' } });
    assert.is(response.status, 503);
    assert.is(response.body, '');
    assert.is(header(response.headers['retry-after']), '5');
    assert.is(header(response.headers['content-security-policy']), TOOLBAR_POLICY);
  });

  test('ENFILE (the system table full) is a 503 too', async () => {
    storage.code = 'ENFILE';
    assert.is((await fetchFrom(server, scheme, '/_profiler/abc123')).status, 503);
  });

  test("a storage whose thread is stopped says how long until it starts one again: the 503's Retry-After is that, in whole seconds, at least 1", async () => {
    storage.code = 'STOPPED';
    for (const accept of ['text/html', 'application/json']) {
      const response = await fetchFrom(server, scheme, '/_profiler/abc123', { headers: { accept } });
      assert.is(response.status, 503, accept);
      assert.is(header(response.headers['retry-after']), '4', accept);
      if (accept === 'application/json') assert.is(JSON.parse(response.body).retryAfter, 4);
      else assert.match(response.body, 'Reload this page in 4 seconds.');
    }
    const toolbar = await fetchFrom(server, scheme, '/_wdt/abc123', { headers: { accept: 'text/html' } });
    assert.is(header(toolbar.headers['retry-after']), '4');
  });

  test("a storage of one's own that says a wait of hours, or one too large to write, gets a Retry-After of a minute at most; one not finite or below 0, of 1", async () => {
    storage.code = 'STOPPED';
    for (const [retryAfterMs, seconds] of [[3_600_000, 60], [1e300, 60], [60_000, 60], [59_001, 60], [Infinity, 1], [NaN, 1], [-5_000, 1]] as const) {
      storage.retryAfterMs = retryAfterMs;
      const response = await fetchFrom(server, scheme, '/_profiler/abc123', { headers: { accept: 'application/json' } });
      assert.is(response.status, 503, String(retryAfterMs));
      assert.is(header(response.headers['retry-after']), String(seconds), String(retryAfterMs));
      assert.is(JSON.parse(response.body).retryAfter, seconds, String(retryAfterMs));
    }
    storage.retryAfterMs = 1e300;
    assert.is(header((await fetchFrom(server, scheme, '/_wdt/abc123', { headers: { accept: 'text/html' } })).headers['retry-after']), '60', 'the toolbar');
    assert.match((await fetchFrom(server, scheme, '/_profiler/abc123', { headers: { accept: 'text/html' } })).body, 'Reload this page in 60 seconds.');
  });

  test('another storage failure is still a 500', async () => {
    storage.code = 'EACCES';
    assert.is((await fetchFrom(server, scheme, '/_profiler/abc123')).status, 500);
    assert.is((await fetchFrom(server, scheme, '/_wdt/abc123')).status, 500);
  });

  test.run();
}
