// ThreadedFileStorage: FileStorage's behaviour, run in a worker thread.
import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeProfile, type StorableProfile } from '../../../../lib/profiler/profile.js';
import {
  FileStorage,
  InvalidProfileError,
  MemoryStorage,
  ProfileBatchError,
  ProfileExistsError,
  ProfilerStorageError,
  ThreadedFileStorage,
  type ThreadedFileStorageOptions,
} from '../../../../lib/profiler/storage/index.js';
import { wasReported } from '../../../../lib/profiler/storage/reported-errors.js';
import { storageErrorLogger } from '../../../../lib/app/profiler-storage-log.js';
import { Logger, createBus } from '../../../../lib/log/index.js';
import { FIRST_RESTART_DELAY_MS, MAX_RESTART_DELAY_MS, StartBackoff } from '../../../../lib/profiler/storage/start-backoff.js';
import { rebuildError, serializeError } from '../../../../lib/profiler/storage/storage-thread-protocol.js';
import { BASE_TIME, foundTokens, indexLines, makeProfile, makeTempDir, rejection, tokenFor, within } from './fixtures.js';

const test = suite('ThreadedFileStorage');
const env = { root: '', cleanup: async () => {} };
let counter = 0;
const open: { close(): Promise<void> }[] = [];

test.before(async () => {
  const made = await makeTempDir('threaded-storage');
  env.root = made.dir;
  env.cleanup = made.cleanup;
});
test.after.each(async () => {
  await Promise.all(open.splice(0).map((storage) => storage.close()));
});
test.after(async () => {
  await env.cleanup();
});

function freshDir(): string {
  return join(env.root, `case-${++counter}`);
}

/** Runs node with `args` in a process of its own, within 15 s: its exit code, stdout and stderr. */
/** Runs node with `args`; with `maxFiles`, under that `ulimit -n`. */
async function nodeRun(args: string[], maxFiles?: number): Promise<{ code: number | null; output: string; errors: string }> {
  const child =
    maxFiles === undefined
      ? spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn('bash', ['-c', `ulimit -n ${maxFiles} && exec "$0" "$@"`, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let errors = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk));
  const code = await within(new Promise<number | null>((resolve) => child.on('exit', resolve)), 15_000, 'the child process');
  return { code, output, errors };
}

function threadedIn(dir = freshDir(), options: ThreadedFileStorageOptions = {}, startBackoff?: StartBackoff): ThreadedFileStorage {
  const storage = new ThreadedFileStorage({ dir, ...options }, startBackoff);
  open.push(storage);
  return storage;
}

/** A clock for a storage's StartBackoff that moves only when told: `passBackoff()` moves it past the longest wait. */
function testClock(): { backoff: StartBackoff; passBackoff(): void } {
  let now = 0;
  return { backoff: new StartBackoff(() => now), passBackoff: () => (now += MAX_RESTART_DELAY_MS) };
}

test('a discarded token stays taken, where a released one is free again (in the worker, drawn from a lease)', async () => {
  const storage = threadedIn();
  const [seen, unused] = await storage.drawTokens(6, 2);
  await storage.discard(seen!);
  await storage.release(unused!);
  assert.is(await storage.claim(seen!), false, 'a client saw it');
  assert.is(await storage.claim(unused!), true, 'given back');
});

test('profiles written through the thread are FileStorage files: a FileStorage on the same directory reads and finds them', async () => {
  const storage = threadedIn();
  const tokens = await storage.drawTokens(6, 3);
  assert.is(new Set(tokens).size, 3);
  // One encoded (bytes, as the profiler writes them), one encoded as a string, one plain.
  const [first, second, third] = tokens as [string, string, string];
  const encoded = encodeProfile(makeProfile(first, { status: 404 }));
  const bytes = { ...encoded, json: Buffer.from(encoded.json as string) };
  const asString = encodeProfile(makeProfile(second, { method: 'POST' }));
  await storage.writeMany([bytes, asString, makeProfile(third, { url: 'http://127.0.0.1:8000/caf\u00e9' })]);

  assert.equal(await storage.read(first), makeProfile(first, { status: 404 }));
  assert.equal((await storage.find({ method: 'POST' })).map((summary) => summary.token), [second]);
  const plain = new FileStorage({ dir: storage.dir });
  open.push(plain);
  assert.equal(await plain.read(third), makeProfile(third, { url: 'http://127.0.0.1:8000/caf\u00e9' }), 'the same bytes, non-ASCII included');
  assert.equal((await foundTokens(plain)).sort(), [...tokens].sort());
});

test('a url search in the thread finds a path typed as it reads, whatever the case of its escapes\' hex', async () => {
  const storage = threadedIn();
  const [upper, lower] = (await storage.drawTokens(6, 2)) as [string, string];
  await storage.writeMany([makeProfile(upper, { time: Date.now() - 2, url: 'http://h/%C3%A9l%C3%A8ve' }), makeProfile(lower, { time: Date.now() - 1, url: 'http://h/%c3%a9l%c3%a8ve' })]);
  assert.equal((await storage.find({ url: '/élève' })).map((summary) => summary.token), [lower, upper]);
});

test('claim, drawToken, compact and purge go through the thread with FileStorage\'s answers', async () => {
  const storage = threadedIn(freshDir(), { bounds: { maxProfiles: 4 } });
  const drawn = await storage.drawToken();
  assert.match(drawn, /^[0-9a-f]{6}$/);
  assert.not.ok(await storage.claim(drawn), 'a drawn token is taken');
  const claimed = tokenFor(77, 0xe);
  assert.ok(await storage.claim(claimed));
  assert.not.ok(await storage.claim(claimed), 'claimed once only');
  assert.not.ok(await storage.claim('../etc'), 'a malformed token is never claimed');
  const others = await storage.drawTokens(6, 6);
  await storage.writeMany([drawn, claimed, ...others].map((token, i) => makeProfile(token, { time: Date.now() - 60_000 + i })));

  const report = await storage.compact();
  assert.ok(report !== null, 'the lock was free: a report');
  // The writes may have started a background compaction already: what is kept is the same.
  assert.is(report.profiles, 3, 'over the bound of 4, trimmed to three quarters of it');
  assert.equal((await foundTokens(storage)).sort(), others.slice(-3).sort(), 'the newest three are kept');

  await storage.purge();
  assert.equal(await foundTokens(storage), []);
  assert.is(await storage.read(others[5]!), null);
  const plain = new FileStorage({ dir: storage.dir });
  open.push(plain);
  assert.equal(await foundTokens(plain), [], 'gone from the directory, not only from the thread\'s index');
});

test('the caller may reuse its bytes as soon as writeMany returns its promise', async () => {
  const storage = threadedIn();
  const [token] = (await storage.drawTokens(6, 1)) as [string];
  const encoded = encodeProfile(makeProfile(token));
  const bytes = Buffer.from(encoded.json as string);
  const saved = storage.writeMany([{ ...encoded, json: bytes }]);
  bytes.fill(0x20);
  await saved;
  assert.equal(await storage.read(token), makeProfile(token));
});

test('refusals keep their classes across the thread, and the rest of the batch is saved', async () => {
  const storage = threadedIn();
  const [a, b, c] = (await storage.drawTokens(6, 3)) as [string, string, string];
  await storage.write(makeProfile(a));

  const exists = await rejection(() => storage.write(makeProfile(a)));
  assert.instance(exists, ProfileExistsError);
  assert.is((exists as ProfileExistsError).token, a);
  assert.is((exists as ProfileExistsError).code, 'HK_PROFILER_STORAGE_EXISTS');

  const invalid = await rejection(() => storage.write(makeProfile('../etc')));
  assert.instance(invalid, InvalidProfileError);

  // Refused here (not JSON-serialisable), there (already stored) and saved: one batch.
  const unserialisable = makeProfile(b, { collectors: { big: 1n } });
  const batch = await rejection(() => storage.writeMany([unserialisable, makeProfile(a), makeProfile(c)]));
  assert.instance(batch, ProfileBatchError);
  const refusals = (batch as ProfileBatchError).errors;
  assert.is(refusals.length, 2);
  assert.ok(refusals.some((error) => error instanceof InvalidProfileError && error.message.includes(b)));
  assert.ok(refusals.some((error) => error instanceof ProfileExistsError && error.token === a));
  assert.equal(await storage.read(c), makeProfile(c), 'the storable profile of the batch was saved');
  assert.is(await storage.read(b), null);
});

test('a disk failure rejects with ProfilerStorageError, its fs cause kept', async () => {
  const file = join(env.root, `not-a-dir-${++counter}`);
  await writeFile(file, 'x');
  const storage = threadedIn(join(file, 'profiler'));
  const error = await rejection(() => storage.write(makeProfile(tokenFor(1))));
  assert.instance(error, ProfilerStorageError);
  assert.not.instance(error, ProfileExistsError);
  const cause = error.cause as Error & { code?: string };
  assert.instance(cause, Error);
  assert.is(cause.code, 'ENOTDIR');
  assert.match(error.stack ?? '', /file-storage/, "the worker's stack says where it failed");
});

test('bad options fail in the constructor, as with FileStorage', () => {
  assert.throws(() => new ThreadedFileStorage({ dir: freshDir(), bounds: { maxProfiles: 0 } }), /maxProfiles must be a finite number of profiles above 0/);
  assert.throws(() => new ThreadedFileStorage({ dir: freshDir(), segmentBytes: -1 }), /segmentBytes must be a positive number/);
  assert.throws(() => new FileStorage({ dir: freshDir(), segmentBytes: 0 }), /segmentBytes must be a positive number/, 'a size of 0 is none');
});

test('a bound that is not finite is refused by every storage at construction, naming the bound and its range: maxAge Infinity kept the tokens of dropped profiles taken for ever', () => {
  const units = { maxAge: 'milliseconds', maxProfiles: 'profiles', maxBytes: 'bytes' } as const;
  for (const [key, unit] of Object.entries(units)) {
    for (const value of [Infinity, -Infinity, Number.NaN]) {
      const bounds = { [key]: value };
      for (const make of [() => new FileStorage({ dir: freshDir(), bounds }), () => new ThreadedFileStorage({ dir: freshDir(), bounds }), () => new MemoryStorage({ bounds })]) {
        assert.throws(make, (error: unknown) => error instanceof RangeError && error.message === `Profiler storage bound ${key} must be a finite number of ${unit} above 0, got number ${value}.`, `${key}: ${value}`);
      }
    }
  }
  // The largest finite values are taken, but for maxAge (see the next test).
  const largest = { maxAge: Number.MAX_VALUE, maxProfiles: Number.MAX_VALUE, maxBytes: Number.MAX_VALUE };
  assert.equal({ ...new MemoryStorage({ bounds: largest }).bounds }, { ...largest, maxAge: 365 * DAY_MS });
});

const DAY_MS = 24 * 60 * 60 * 1000;

test('a maxAge over a year (1e300) is lowered to a year by every storage: the tokens of dropped profiles, kept taken for maxAge, filled their prefixes practically for ever', () => {
  for (const [maxAge, kept] of [[1e300, 365 * DAY_MS], [Number.MAX_VALUE, 365 * DAY_MS], [365 * DAY_MS + 1, 365 * DAY_MS], [365 * DAY_MS, 365 * DAY_MS], [30 * DAY_MS, 30 * DAY_MS]] as const) {
    for (const make of [() => new FileStorage({ dir: freshDir(), bounds: { maxAge } }), () => new ThreadedFileStorage({ dir: freshDir(), bounds: { maxAge } }), () => new MemoryStorage({ bounds: { maxAge } })]) {
      const storage = make();
      assert.is(storage.bounds.maxAge, kept, String(maxAge));
      open.push(storage);
    }
  }
});

test('a segmentBytes that is no number (a string, true) is refused by both storages, not read as a size (true: one byte, a file a record)', () => {
  // An object whose toString throws is described, not turned into a string.
  for (const segmentBytes of ['10', true, '4mb', { toString: () => { throw new Error('no'); } }]) {
    for (const make of [() => new FileStorage({ dir: freshDir(), segmentBytes: segmentBytes as never }), () => new ThreadedFileStorage({ dir: freshDir(), segmentBytes: segmentBytes as never })]) {
      assert.throws(make, (error: unknown) => error instanceof RangeError && /segmentBytes must be a positive number, got (the string "10"|boolean true|the string "4mb"|an object of type Object)\./.test(error.message));
    }
  }
});

test('close saves what is in flight, is idempotent, and every later call rejects as closed', async () => {
  const storage = threadedIn();
  const tokens = await storage.drawTokens(6, 50);
  const writing = storage.writeMany(tokens.map((token) => makeProfile(token)));
  const closing = storage.close();
  assert.is(storage.close(), closing, 'the same promise');
  await writing;
  await closing;
  for (const call of [() => storage.read(tokens[0]!), () => storage.write(makeProfile(tokenFor(2))), () => storage.drawTokens(6, 1)]) {
    const error = await rejection(call);
    assert.instance(error, ProfilerStorageError);
    assert.is((error as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_CLOSED');
  }
  const plain = new FileStorage({ dir: storage.dir });
  open.push(plain);
  assert.is((await plain.find({ limit: 100 })).length, 50, 'the batch written before close was saved');
});

test('close applies the bounds to what the thread wrote since its last bound check', async () => {
  const storage = threadedIn(undefined, { bounds: { maxProfiles: 8 } });
  // The first write checks the bounds at once; the next 20, fewer than 32 within a second, wait for a check.
  await storage.write(makeProfile(tokenFor(0), { time: BASE_TIME }));
  await storage.writeMany(Array.from({ length: 20 }, (_, i) => makeProfile(tokenFor(i + 1), { time: BASE_TIME + i + 1 }, 200)));
  await storage.close();
  const lines = await indexLines(storage.dir);
  assert.ok(lines.length <= 8, `${lines.length} index lines after close, over maxProfiles 8`);
  assert.ok(lines.some((line) => line.t === tokenFor(20)), 'the newest is kept');
});

test('a storage never called starts no thread and closes at once', async () => {
  const storage = new ThreadedFileStorage({ dir: freshDir() });
  await within(storage.close(), 1_000, 'close');
});

test('an idle storage does not keep the process alive, a call in flight does', async () => {
  const dir = freshDir();
  const moduleUrl = new URL('../../../../lib/profiler/storage/index.js', import.meta.url).href;
  // Writes without awaiting, never closes: the process must still save the profile, then exit.
  const source = `
    const { ThreadedFileStorage } = await import(${JSON.stringify(moduleUrl)});
    const storage = new ThreadedFileStorage({ dir: ${JSON.stringify(dir)} });
    storage.write(${JSON.stringify(makeProfile(tokenFor(7)))}).then(() => process.stdout.write('saved'));
  `;
  const script = join(env.root, `idle-${counter}.mjs`);
  await writeFile(script, source);
  const { code, output, errors } = await nodeRun([script]);
  assert.is(output, 'saved', errors);
  assert.is(code, 0);
  const plain = new FileStorage({ dir });
  open.push(plain);
  assert.equal(await plain.read(tokenFor(7)), makeProfile(tokenFor(7)));
});

test('a process run with --input-type (node --input-type=module -e ...) or with V8 flags (--max-old-space-size, --expose-gc) still starts the storage thread', async () => {
  const moduleUrl = new URL('../../../../lib/profiler/storage/index.js', import.meta.url).href;
  const source = `
    const { ThreadedFileStorage } = await import(${JSON.stringify(moduleUrl)});
    const storage = new ThreadedFileStorage({ dir: process.argv[1] });
    const [token] = await storage.drawTokens(6, 1);
    process.stdout.write(token.length === 6 ? 'drawn' : 'odd');
    await storage.close();
  `;
  // A Worker given the process's flags refuses V8's and the process's own; one run from a file refuses --input-type.
  for (const flags of [[], ['--max-old-space-size=512'], ['--expose-gc', '--stack-size=2000']]) {
    const { code, output, errors } = await nodeRun([...flags, '--input-type=module', '-e', source, freshDir()]);
    assert.is(output, 'drawn', `${flags.join(' ')}: ${errors}`);
    assert.is(code, 0);
  }
});

test('a storage thread whose module fails to load fails with its error, whatever --unhandled-rejections the process runs with', async () => {
  const moduleUrl = new URL('../../../../lib/profiler/storage/index.js', import.meta.url).href;
  // A module hook, inherited by the thread as every flag is, fails the thread's module as a broken install would.
  const hooks = `export async function resolve(specifier, context, next) { if (specifier.endsWith('/file-storage-thread.js')) throw new Error('the thread module is broken'); return next(specifier, context); }`;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  const source = `
    const { ThreadedFileStorage } = await import(${JSON.stringify(moduleUrl)});
    const storage = new ThreadedFileStorage({ dir: process.argv[1] });
    await storage.drawTokens(6, 1).then(() => process.stdout.write('drawn'), (error) => process.stdout.write(error.message));
  `;
  for (const flags of [[], ['--unhandled-rejections=warn'], ['--unhandled-rejections=none']]) {
    const dir = freshDir();
    const { output, errors } = await nodeRun([...flags, '--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', source, dir]);
    assert.is(output, `The profiler storage thread for ${dir} stopped (exit code 1): the thread module is broken.`, `${flags.join(' ')}: ${errors}`);
  }
});

test('a worker that cannot start fails the first call and every later one with the same error, reported once, without a thread per call', async () => {
  const reported: Error[] = [];
  // A 1 MB old generation: the worker runs out of memory while it loads.
  const storage = threadedIn(freshDir(), { resourceLimits: { maxOldGenerationSizeMb: 1, maxYoungGenerationSizeMb: 1 }, onError: (error) => reported.push(error) });
  const first = await rejection(() => storage.drawTokens(6, 1));
  assert.instance(first, ProfilerStorageError);
  assert.match(first.message, /profiler storage thread for .* stopped/);
  const again = await rejection(() => storage.write(makeProfile(tokenFor(1))));
  // A new thread would have failed with an error of its own, and reported it.
  assert.is(again, first, 'the same error: no thread was started for the call');
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.is(reported.length, 1);
  assert.is(reported[0], first);
});

test('a thread that cannot even be created (its stack beyond what the system gives: ERR_WORKER_INIT_FAILED, thrown by new Worker) rejects each call, never throws from it, and is reported', async () => {
  const reported: Error[] = [];
  const storage = threadedIn(freshDir(), { resourceLimits: { stackSizeMb: 1e9 }, onError: (error) => reported.push(error) });
  let thrownBy: unknown = null;
  let calls: Promise<unknown>[] = [];
  try {
    calls = [storage.drawTokens(6, 1), storage.read(tokenFor(1)), storage.release(tokenFor(1)), storage.write(makeProfile(tokenFor(2)))];
  } catch (error) {
    thrownBy = error;
  }
  assert.is(thrownBy, null, 'no call throws: ProfilerStorage answers with promises, and callers catch rejections');
  const errors = await Promise.all(calls.map((call) => call.then(() => null, (error: unknown) => error)));
  for (const error of errors) {
    assert.instance(error, ProfilerStorageError);
    assert.match((error as Error).message, /^The profiler storage thread for .* could not start \(ERR_WORKER_INIT_FAILED\): /);
  }
  assert.is(reported.length, 1, 'reported once');
  await within(storage.close(), 1_000, 'close');
});

test('a worker that could not start for want of file descriptors is started again by a later call, once there are some and the backoff has passed, and no thread is started per call meanwhile', async () => {
  const moduleUrl = new URL('../../../../lib/profiler/storage/index.js', import.meta.url).href;
  const backoffUrl = new URL('../../../../lib/profiler/storage/start-backoff.js', import.meta.url).href;
  // The first call comes while every descriptor of the process is taken, as a flood of connections
  // takes them: the thread cannot make its event loop (EMFILE). The backoff's clock is the child's
  // own: the calls before it moves on get the first call's error, not a thread (one would fail with
  // an error of its own), descriptors let go or not; once it has moved past the first delay, a thread starts.
  const source = `
    const { openSync, closeSync } = await import('node:fs');
    const { ThreadedFileStorage } = await import(${JSON.stringify(moduleUrl)});
    const { FIRST_RESTART_DELAY_MS, StartBackoff } = await import(${JSON.stringify(backoffUrl)});
    let now = 0;
    const storage = new ThreadedFileStorage({ dir: process.argv[1] }, new StartBackoff(() => now));
    const held = [];
    try { for (;;) held.push(openSync('/dev/null', 'r')); } catch {}
    const failed = await storage.drawTokens(6, 1).then(() => null, (error) => error);
    const again = await storage.drawTokens(6, 1).then(() => null, (error) => error);
    for (const fd of held) closeSync(fd);
    const released = await storage.drawTokens(6, 1).then(() => null, (error) => error);
    now += FIRST_RESTART_DELAY_MS;
    const later = await storage.drawTokens(6, 1).then(() => 'drawn', (error) => error.message);
    process.stdout.write(JSON.stringify({ held: held.length, first: failed?.message, againSame: again === failed, releasedSame: released === failed, later }));
    await storage.close();
  `;
  // A low limit, so the child runs out after a few dozen opens rather than a million.
  const { output, errors } = await nodeRun(['--input-type=module', '-e', source, freshDir()], 64);
  const { held, first, againSame, releasedSame, later } = JSON.parse(output || '{}') as { held?: number; first?: string; againSame?: boolean; releasedSame?: boolean; later?: string };
  assert.ok((held ?? 0) > 0, `descriptors were taken: ${errors}`);
  assert.match(first ?? '', /EMFILE/, 'the call made while out of descriptors fails, saying why');
  assert.is(againSame, true, 'a call during the backoff gets the same error: no thread was started for it');
  assert.is(releasedSame, true, 'descriptors let go, still none before the backoff has passed');
  assert.is(later, 'drawn', 'not broken for good: a new thread started once the backoff passed');
});

test('a long shortage of file descriptors, many threads failing to start, still lets the next thread take over the leases of one that died after answering', async () => {
  const moduleUrl = new URL('../../../../lib/profiler/storage/index.js', import.meta.url).href;
  const backoffUrl = new URL('../../../../lib/profiler/storage/start-backoff.js', import.meta.url).href;
  const fixturesUrl = new URL('./fixtures.js', import.meta.url).href;
  // The first thread draws a token, then dies (a batch beyond its heap); then more threads than the storage
  // remembers dead ones of fail to start for want of descriptors. Those took no lease: the first one's must
  // still be taken over at once, or the token it drew (a profiler's pool holds such) is refused.
  const source = `
    const { openSync, closeSync } = await import('node:fs');
    const { ThreadedFileStorage } = await import(${JSON.stringify(moduleUrl)});
    const { StartBackoff } = await import(${JSON.stringify(backoffUrl)});
    const { makeProfile, tokenFor } = await import(${JSON.stringify(fixturesUrl)});
    let now = 0;
    const storage = new ThreadedFileStorage({ dir: process.argv[1], resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 } }, new StartBackoff(() => now));
    const [early] = await storage.drawTokens(6, 1);
    const huge = Array.from({ length: 100_000 }, (_, i) => ({ ...makeProfile(tokenFor(i, 2), {}, 0), json: '{"i":' + i + '}' }));
    const crashed = await storage.writeMany(huge).then(() => 'written', (error) => error.message);
    const held = [];
    try { for (;;) held.push(openSync('/dev/null', 'r')); } catch {}
    const failures = [];
    for (let i = 0; i < 20; i++) {
      now += 10_000;
      failures.push(await storage.drawTokens(6, 1).then(() => 'drawn', (error) => /EMFILE|ENFILE/.test(error.message)));
    }
    for (const fd of held) closeSync(fd);
    now += 10_000;
    const written = await storage.write(makeProfile(early)).then(() => 'written', (error) => error.message);
    process.stdout.write(JSON.stringify({ crashed, failures, written }));
    await storage.close();
  `;
  const { output, errors } = await nodeRun(['--input-type=module', '-e', source, freshDir()], 64);
  const { crashed, failures, written } = JSON.parse(output || '{}') as { crashed?: string; failures?: unknown[]; written?: string };
  assert.match(crashed ?? '', /stopped/, `the first thread died: ${errors}`);
  assert.equal(failures, Array.from({ length: 20 }, () => true), 'each later start failed for want of descriptors');
  assert.is(written, 'written', "the dead thread's token is still written");
});

test('close() while a thread that cannot start is starting resolves: a thread that never answered has nothing to save', async () => {
  // A 1 MB old generation: the worker runs out of memory while it loads.
  const storage = new ThreadedFileStorage({ dir: freshDir(), resourceLimits: { maxOldGenerationSizeMb: 1, maxYoungGenerationSizeMb: 1 }, onError: () => {} });
  const drawing = storage.drawTokens(6, 1).then(() => null, (error: unknown) => error);
  const closing = storage.close().then(() => 'closed', (error: unknown) => `rejected: ${(error as Error).message}`);
  assert.is(await within(closing, 5_000, 'close'), 'closed');
  assert.instance(await drawing, ProfilerStorageError, 'the call in flight fails');
});

test('a worker that dies after answering fails the calls in flight; the next call starts a new one', async () => {
  const reported: Error[] = [];
  // Enough heap to start and answer, not to take a batch of 100,000 profiles.
  const storage = threadedIn(freshDir(), { resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 }, onError: (error) => reported.push(error) });
  const [early] = (await storage.drawTokens(6, 1)) as [string];
  const huge = Array.from({ length: 100_000 }, (_, i) => ({ ...makeProfile(tokenFor(i, 2), {}, 0), json: `{"i":${i}}` }));
  const crash = await rejection(() => storage.writeMany(huge));
  assert.instance(crash, ProfilerStorageError);
  assert.match(crash.message, /stopped/);
  assert.is(reported.length, 1);
  const [token] = (await storage.drawTokens(6, 1)) as [string];
  await storage.write(makeProfile(token));
  assert.equal(await storage.read(token), makeProfile(token), 'a new worker saved and read it');
  // A token the dead worker drew (a profiler's pool holds such): its prefix lease, left by a thread of
  // this live process, is the dead worker's, so the new one takes it over rather than refuse the token.
  await storage.write(makeProfile(early));
  assert.equal(await storage.read(early), makeProfile(early));
});

test('a worker that dies with batches in flight says, in the one report of its stop, how many batches and profiles were not saved', async () => {
  const reported: Error[] = [];
  const storage = threadedIn(freshDir(), { resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 }, onError: (error) => reported.push(error) });
  await storage.drawTokens(6, 1);
  const huge = Array.from({ length: 100_000 }, (_, i) => ({ ...makeProfile(tokenFor(i, 2), {}, 0), json: `{"i":${i}}` }));
  const crash = rejection(() => storage.writeMany(huge));
  const small = rejection(() => storage.writeMany([makeProfile(tokenFor(1)), makeProfile(tokenFor(2))]));
  const [crashError, smallError] = await Promise.all([crash, small]);
  assert.is(reported.length, 1);
  assert.match(reported[0]!.message, /stopped \(exit code 1\): .*memory limit.*\. 2 batches of profiles in flight on it \(100002 profiles\) were not saved\.$/);
  assert.is(crashError, reported[0], 'the batches fail with the stop');
  assert.is(smallError, reported[0]);
});

/** A directory holding `tokenFor(1)`, a profile of 200,000 small objects that a worker of `POISON_LIMITS` dies parsing, and `tokenFor(2)`, an ordinary one. */
async function dirWithPoisonProfile(): Promise<string> {
  const dir = freshDir();
  const writer = new FileStorage({ dir });
  const poison = makeProfile(tokenFor(1), { collectors: { logger: { logs: Array.from({ length: 200_000 }, (_, i) => ({ i, m: `m${i}` })) } } });
  await writer.writeMany([poison, makeProfile(tokenFor(2))]);
  await writer.close();
  return dir;
}

/** Enough heap to start and answer, not to parse the poison profile (nor to take a batch of 100,000 profiles). */
const POISON_LIMITS = { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 };

test('a worker that dies at its first call, having started, is started again by the next call: not taken for one that could not start', async () => {
  const reported: Error[] = [];
  const clock = testClock();
  const storage = threadedIn(await dirWithPoisonProfile(), { resourceLimits: POISON_LIMITS, onError: (error) => reported.push(error) }, clock.backoff);
  const error = await rejection(() => storage.read(tokenFor(1)));
  assert.match(error.message, /stopped \(exit code 1\): .*memory limit/);
  // Two stops in a row (the read was sent once more): the next start waits for the backoff.
  clock.passBackoff();
  assert.equal(await storage.read(tokenFor(2)), makeProfile(tokenFor(2)), 'a new worker answers');
  assert.ok(reported.length >= 1);
});

/** A directory holding `tokenFor(3)`, a profile nested 100,000 arrays deep: JSON.parse reads it, the structured clone of a reply overflows the stack. */
async function dirWithDeepProfile(): Promise<string> {
  const dir = freshDir();
  const writer = new FileStorage({ dir });
  const token = tokenFor(3);
  const { collectors: _collectors, ...summary } = makeProfile(token, {}, 0);
  const deep = { ...summary, json: `{"token":"${token}","deep":${'['.repeat(100_000)}${']'.repeat(100_000)}}` };
  await writer.writeMany([deep, makeProfile(tokenFor(2))]);
  await writer.close();
  return dir;
}

test('a profile the worker reads but cannot send back (nested too deep to clone) fails its read with HK_PROFILER_STORAGE_UNREADABLE: the worker lives on', async () => {
  const reported: Error[] = [];
  const storage = threadedIn(await dirWithDeepProfile(), { onError: (error) => reported.push(error) });
  const [early] = (await storage.drawTokens(6, 1)) as [string];
  // A batch in flight with the read: lost with the worker when the reply's clone threw out of its handler.
  const writing = storage.write(makeProfile(early));
  const error = await rejection(() => storage.read(tokenFor(3)));
  assert.instance(error, ProfilerStorageError);
  assert.is((error as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_UNREADABLE', error.message);
  assert.match(error.message, new RegExp(`profile ${tokenFor(3)} .*Maximum call stack size exceeded`));
  await writing;
  assert.equal(await storage.read(early), makeProfile(early), 'the batch in flight was saved');
  assert.equal(await storage.read(tokenFor(2)), makeProfile(tokenFor(2)));
  assert.is(reported.length, 0, 'no worker stopped');
});

test('a worker that dies at its calls again and again is not started again per call: after a second stop in a row, calls fail fast with the stop until the backoff lets the next start', async () => {
  const reported: Error[] = [];
  let now = 0;
  const storage = new ThreadedFileStorage({ dir: await dirWithPoisonProfile(), resourceLimits: POISON_LIMITS, onError: (error) => reported.push(error) }, new StartBackoff(() => now));
  open.push(storage);
  // The read stops its worker, and the retry's: two stops in a row.
  const stopped = await rejection(() => storage.read(tokenFor(1)));
  assert.is(reported.length, 2);
  for (let i = 0; i < 5; i++) {
    const error = await rejection(() => storage.drawTokens(6, 1));
    assert.is((error as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_THREAD_STOPPED');
    assert.is(error.message, stopped.message, 'the stop again: no thread was started for the call');
  }
  assert.is(reported.length, 2, 'reported once per stop, not per call');
  now += FIRST_RESTART_DELAY_MS - 1;
  assert.is((await rejection(() => storage.read(tokenFor(2)))).message, stopped.message, 'not before the backoff has passed');
  now += 1;
  assert.equal(await storage.read(tokenFor(2)), makeProfile(tokenFor(2)), 'a new worker once it has');
  assert.is(reported.length, 2);
});

test("the batches refused while the storage waits to start a worker again are counted (refusedProfiles), said by the next stop's report, and, with those in flight at the stops, once when a worker answers again", async () => {
  const reported: Error[] = [];
  const clock = testClock();
  const storage = threadedIn(await dirWithPoisonProfile(), { resourceLimits: POISON_LIMITS, onError: (error) => reported.push(error) }, clock.backoff);
  // The read stops its worker, and the retry's: two stops in a row, and the next start waits.
  await rejection(() => storage.read(tokenFor(1)));
  assert.is(reported.length, 2);
  for (const batch of [[makeProfile(tokenFor(10)), makeProfile(tokenFor(11))], [makeProfile(tokenFor(12))]]) {
    assert.is(((await rejection(() => storage.writeMany(batch))) as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_THREAD_STOPPED');
  }
  assert.is((await rejection(() => storage.drawTokens(6, 1))).name, 'ProfilerStorageError', 'a call that is no batch');
  assert.is(storage.refusedProfiles, 3, 'the profiles of the two batches, not the token draw');
  assert.is(reported.length, 2, 'not said per batch');
  clock.passBackoff();
  // The next worker dies at a batch beyond its heap: its stop says the batches refused before it.
  const huge = Array.from({ length: 100_000 }, (_, i) => ({ ...makeProfile(tokenFor(i, 2), {}, 0), json: `{"i":${i}}` }));
  await rejection(() => storage.writeMany(huge));
  assert.is(reported.length, 3);
  assert.match(reported[2]!.message, /\(100000 profiles\) was not saved\. 3 profiles refused since the previous failure, while the storage waited to start a thread again, were not saved\.$/);
  await rejection(() => storage.writeMany([makeProfile(tokenFor(13))]));
  assert.is(storage.refusedProfiles, 4);
  clock.passBackoff();
  await storage.drawTokens(6, 1);
  assert.is(reported.length, 4, 'one report that it works again');
  assert.is((reported[3] as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_THREAD_RECOVERED');
  assert.match(reported[3]!.message, /^The profiler storage thread for .* works again; 100004 profiles were not saved while it failed \(/);
  await storage.drawTokens(6, 1);
  assert.is(reported.length, 4, 'said once');
  assert.is(storage.refusedProfiles, 4, 'counted since the storage was made');
});

test('a worker that answers again after a stop that cost no profile is not reported as working again', async () => {
  const reported: Error[] = [];
  const clock = testClock();
  const storage = threadedIn(await dirWithPoisonProfile(), { resourceLimits: POISON_LIMITS, onError: (error) => reported.push(error) }, clock.backoff);
  await rejection(() => storage.read(tokenFor(1)));
  clock.passBackoff();
  assert.equal(await storage.read(tokenFor(2)), makeProfile(tokenFor(2)));
  assert.is(reported.length, 2, 'the two stops only');
  assert.is(storage.refusedProfiles, 0);
});

test("the storage's reports to onError are the process's, not the request's that happened to start its worker: its stop, and its working again, run outside that call's async context", async () => {
  const request = new AsyncLocalStorage<string>();
  const reported: [string, string | undefined][] = [];
  const storage = threadedIn(freshDir(), { resourceLimits: POISON_LIMITS, onError: (error) => void reported.push([(error as ProfilerStorageError).code, request.getStore()]) });
  await storage.drawTokens(6, 1);
  const huge = (n: number): StorableProfile[] => Array.from({ length: 100_000 }, (_, i) => ({ ...makeProfile(tokenFor(i, 2 + n), {}, 0), json: `{"i":${i}}` }));
  await rejection(() => storage.writeMany(huge(0)));
  // The next call, made while a request is handled (a token drawn for it), starts the next worker.
  await request.run('GET /', () => storage.drawTokens(6, 1));
  // A batch saved by the process (the profiler's pump runs outside requests) stops that worker.
  await rejection(() => storage.writeMany(huge(1)));
  assert.equal(reported, [
    ['HK_PROFILER_STORAGE_THREAD_STOPPED', undefined],
    ['HK_PROFILER_STORAGE_THREAD_RECOVERED', undefined],
    ['HK_PROFILER_STORAGE_THREAD_STOPPED', undefined],
  ]);
});

test('a thread that cannot be created, tried by a call made during a request, is reported outside that request too', async () => {
  const request = new AsyncLocalStorage<string>();
  const reported: (string | undefined)[] = [];
  const storage = threadedIn(freshDir(), { resourceLimits: { stackSizeMb: 1e9 }, onError: () => void reported.push(request.getStore()) });
  assert.match((await request.run('GET /', () => rejection(() => storage.drawTokens(6, 1)))).message, /could not start/);
  assert.equal(reported, [undefined]);
});

test('an onError that returns true logged the error at ERROR: the stop, and the stop again during the backoff, are known as reported; one that returns another truthy value did not', async () => {
  for (const [onError, reported] of [[() => true, true], [() => 1, false], [() => 'yes', false]] as const) {
    const storage = threadedIn(await dirWithPoisonProfile(), { resourceLimits: POISON_LIMITS, onError }, testClock().backoff);
    const stopped = await rejection(() => storage.read(tokenFor(1)));
    const meanwhile = (await rejection(() => storage.drawTokens(6, 1))) as ProfilerStorageError;
    assert.is(meanwhile.code, 'HK_PROFILER_STORAGE_THREAD_STOPPED');
    assert.is(wasReported(stopped), reported, `the stop, onError returning ${String(onError())}`);
    assert.is(wasReported(meanwhile), reported, `the stop again, onError returning ${String(onError())}`);
  }
});

test('a profile whose read stopped two workers is not read again: its reads fail with HK_PROFILER_STORAGE_UNREADABLE, stopping no worker, and the others read as before', async () => {
  const reported: Error[] = [];
  const clock = testClock();
  const storage = threadedIn(await dirWithPoisonProfile(), { resourceLimits: POISON_LIMITS, onError: (error) => reported.push(error) }, clock.backoff);
  await rejection(() => storage.read(tokenFor(1)));
  assert.is(reported.length, 2, 'the read and its retry stopped a worker each');
  clock.passBackoff();
  for (let i = 0; i < 3; i++) {
    const error = await rejection(() => storage.read(tokenFor(1)));
    assert.is((error as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_UNREADABLE', error.message);
    assert.match(error.message, new RegExp(`profile ${tokenFor(1)} .*stopped the profiler storage thread`));
  }
  assert.is(reported.length, 2, 'no worker stopped again');
  assert.equal(await storage.read(tokenFor(2)), makeProfile(tokenFor(2)));
});

test('purge() forgets the tokens whose reads stopped workers: their profiles are gone, and a profile written under one again is read', async () => {
  const clock = testClock();
  const storage = threadedIn(await dirWithPoisonProfile(), { resourceLimits: POISON_LIMITS, onError: () => {} }, clock.backoff);
  await rejection(() => storage.read(tokenFor(1)));
  clock.passBackoff();
  assert.is(((await rejection(() => storage.read(tokenFor(1)))) as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_UNREADABLE', 'refused before the purge');
  await storage.purge();
  assert.is(await storage.read(tokenFor(1)), null, 'gone, not refused');
  await storage.write(makeProfile(tokenFor(1)));
  assert.equal(await storage.read(tokenFor(1)), makeProfile(tokenFor(1)), 'the new profile of that token');
});

test('a poison profile read twice at once (a page reloaded while its read is in flight) is still known by the two stops: then refused, stopping no worker', async () => {
  const reported: Error[] = [];
  const clock = testClock();
  const storage = threadedIn(await dirWithPoisonProfile(), { resourceLimits: POISON_LIMITS, onError: (error) => reported.push(error) }, clock.backoff);
  const both = await Promise.all([rejection(() => storage.read(tokenFor(1))), rejection(() => storage.read(tokenFor(1)))]);
  for (const error of both) assert.is((error as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_THREAD_STOPPED', error.message);
  assert.is(reported.length, 2, 'the reads and their retries stopped a worker each time');
  clock.passBackoff();
  const error = await rejection(() => storage.read(tokenFor(1)));
  assert.is((error as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_UNREADABLE', error.message);
  assert.is(reported.length, 2, 'no worker stopped again');
  assert.equal(await storage.read(tokenFor(2)), makeProfile(tokenFor(2)));
});

test("the errors createKernel's storage log logs at ERROR, and a stop again while the storage waits to start a worker, are known as reported (the profiler logs them no second time at ERROR); none given to an onError that logs nothing, nor without an onError", async () => {
  const log = storageErrorLogger(new Logger({ bus: createBus() }));
  for (const onError of [log, () => {}, undefined]) {
    const storage = threadedIn(await dirWithPoisonProfile(), { resourceLimits: POISON_LIMITS, onError }, testClock().backoff);
    // The read stops its worker, and the retry's: two stops in a row, and the next start waits.
    const stopped = await rejection(() => storage.read(tokenFor(1)));
    const meanwhile = (await rejection(() => storage.drawTokens(6, 1))) as ProfilerStorageError;
    assert.is(meanwhile.code, 'HK_PROFILER_STORAGE_THREAD_STOPPED');
    assert.is(wasReported(stopped), onError === log, 'the stop');
    assert.is(wasReported(meanwhile), onError === log, 'the stop again');
  }
});

test("the stop's error says how long until the storage starts a worker again (retryAfterMs), from its backoff: 0 after one stop, the wait left after two in a row", async () => {
  const reported: Error[] = [];
  let now = 0;
  const storage = threadedIn(freshDir(), { resourceLimits: POISON_LIMITS, onError: (error) => reported.push(error) }, new StartBackoff(() => now));
  await storage.drawTokens(6, 1);
  const huge = (): StorableProfile[] => Array.from({ length: 100_000 }, (_, i) => ({ ...makeProfile(tokenFor(i, 2), {}, 0), json: `{"i":${i}}` }));
  const first = (await rejection(() => storage.writeMany(huge()))) as ProfilerStorageError;
  assert.is(first.retryAfterMs, 0, 'the next call starts a worker at once');
  const second = (await rejection(() => storage.writeMany(huge()))) as ProfilerStorageError;
  assert.is(second.retryAfterMs, FIRST_RESTART_DELAY_MS, 'two in a row: the first wait');
  now += 40;
  const meanwhile = (await rejection(() => storage.drawTokens(6, 1))) as ProfilerStorageError;
  assert.is(meanwhile.code, 'HK_PROFILER_STORAGE_THREAD_STOPPED');
  assert.is(meanwhile.message, second.message, 'the stop again');
  assert.is(meanwhile.retryAfterMs, FIRST_RESTART_DELAY_MS - 40, 'what is left of the wait');
  assert.is(reported.length, 2);
});

test('a read in flight at two stops of unrelated cause, answered in between, is not taken for a poison profile', async () => {
  const storage = threadedIn(freshDir(), { resourceLimits: POISON_LIMITS, onError: () => {} });
  const [token] = (await storage.drawTokens(6, 1)) as [string];
  await storage.write(makeProfile(token));
  for (let i = 0; i < 2; i++) {
    const huge = Array.from({ length: 100_000 }, (_, j) => ({ ...makeProfile(tokenFor(j, 2 + i), {}, 0), json: `{"i":${j}}` }));
    // The batch stops the worker with the read in flight behind it; the read, sent once more, is answered.
    const crash = rejection(() => storage.writeMany(huge));
    assert.equal(await storage.read(token), makeProfile(token), `read ${i + 1}`);
    assert.match((await crash).message, /stopped/);
  }
  assert.equal(await storage.read(token), makeProfile(token), 'still read');
});

test('a read in flight at two stops in a row caused by batches (its retry behind a batch that stops the second worker too) is not taken for a poison profile: read again, it is answered', async () => {
  const clock = testClock();
  const huge = (n: number): StorableProfile[] => Array.from({ length: 100_000 }, (_, j) => ({ ...makeProfile(tokenFor(j, 2 + n), {}, 0), json: `{"i":${j}}` }));
  let second: Promise<Error> | undefined;
  // As the first worker's stop is reported, a batch is saved (the profiler saves all the time): it starts the
  // second worker, and the read's retry goes to that worker behind it.
  const storage: ThreadedFileStorage = threadedIn(freshDir(), { resourceLimits: POISON_LIMITS, onError: () => (second ??= rejection(() => storage.writeMany(huge(1)))) }, clock.backoff);
  const [token] = (await storage.drawTokens(6, 1)) as [string];
  await storage.write(makeProfile(token));
  const first = rejection(() => storage.writeMany(huge(0)));
  const readError = (await rejection(() => storage.read(token))) as ProfilerStorageError;
  assert.is(readError.code, 'HK_PROFILER_STORAGE_THREAD_STOPPED', 'the read was in flight at both stops');
  assert.match((await first).message, /stopped .*1 batch/);
  assert.ok(second !== undefined);
  assert.match((await second).message, /stopped .*1 batch/);
  clock.passBackoff();
  assert.equal(await storage.read(token), makeProfile(token), 'the profile is read: the batches stopped the workers, not its read');
});

test('a read and a search in flight when the worker dies are tried once more on a new worker; the batch that killed it is not', async () => {
  const reported: Error[] = [];
  const storage = threadedIn(freshDir(), { resourceLimits: POISON_LIMITS, onError: (error) => reported.push(error) });
  const [token] = (await storage.drawTokens(6, 1)) as [string];
  await storage.write(makeProfile(token));
  const huge = Array.from({ length: 100_000 }, (_, i) => ({ ...makeProfile(tokenFor(i, 2), {}, 0), json: `{"i":${i}}` }));
  // Sent behind the batch: the worker dies on the batch with them in flight.
  const crash = rejection(() => storage.writeMany(huge));
  const reading = storage.read(token).then((profile) => profile, (error: unknown) => error);
  const finding = storage.find().then((found) => found.map((summary) => summary.token), (error: unknown) => error);
  assert.equal(await reading, makeProfile(token), 'the read was answered by the new worker');
  assert.equal(await finding, [token], 'the search was answered by the new worker');
  const error = await crash;
  assert.instance(error, ProfilerStorageError);
  assert.is((error as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_THREAD_STOPPED');
  assert.match(error.message, /stopped/);
  assert.equal(reported.map((each) => (each as ProfilerStorageError).code), ['HK_PROFILER_STORAGE_THREAD_STOPPED', 'HK_PROFILER_STORAGE_THREAD_RECOVERED'], 'one worker died; the next answered, the batch lost');
});

test('a read whose worker dies again on the retry rejects with HK_PROFILER_STORAGE_THREAD_STOPPED after two workers, and the next call once the backoff has passed starts another', async () => {
  const reported: Error[] = [];
  const clock = testClock();
  const storage = threadedIn(await dirWithPoisonProfile(), { resourceLimits: POISON_LIMITS, onError: (error) => reported.push(error) }, clock.backoff);
  const error = await rejection(() => storage.read(tokenFor(1)));
  assert.instance(error, ProfilerStorageError);
  assert.is((error as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_THREAD_STOPPED');
  assert.match(error.message, /stopped \(exit code 1\): .*memory limit/);
  assert.is(reported.length, 2, 'tried once more, not again and again');
  clock.passBackoff();
  assert.equal(await storage.read(tokenFor(2)), makeProfile(tokenFor(2)), 'a third worker answers');
});

test('a worker that dies while the storage closes fails the batch in flight and close() saying it stopped, and is reported: not as closed', async () => {
  const reported: Error[] = [];
  // Not closed again after the test: its close() rejects.
  const storage = new ThreadedFileStorage({ dir: freshDir(), resourceLimits: POISON_LIMITS, onError: (error) => reported.push(error) });
  await storage.drawTokens(6, 1);
  const huge = Array.from({ length: 100_000 }, (_, i) => ({ ...makeProfile(tokenFor(i, 2), {}, 0), json: `{"i":${i}}` }));
  // Accepted before close(): the worker dies on it with close's call queued behind it.
  const crash = rejection(() => storage.writeMany(huge));
  const closing = rejection(() => storage.close());
  const [batchError, closeError] = await within(Promise.all([crash, closing]), 10_000, 'close');
  assert.is((batchError as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_THREAD_STOPPED', batchError.message);
  assert.match(batchError.message, /stopped \(exit code 1\): .*memory limit/);
  assert.match(closeError.message, /stopped \(exit code 1\): .*memory limit/);
  assert.is(reported.length, 1, 'the stop is reported');
  assert.match(reported[0]!.message, /stopped/);
});

test("workers that die at a read, more than the storage remembers dead ones of, still let the next take over the leases of one that drew tokens", async () => {
  const reported: Error[] = [];
  const clock = testClock();
  // Nine poison profiles: a profile whose read stopped two workers is not read again.
  const dir = await dirWithPoisonProfile();
  const poisons = Array.from({ length: 8 }, (_, i) => tokenFor(10 + i));
  const writer = new FileStorage({ dir });
  const { collectors: _collectors, ...summary } = makeProfile(tokenFor(1), {}, 0);
  const logs = JSON.stringify(Array.from({ length: 200_000 }, (_, i) => ({ i, m: `m${i}` })));
  await writer.writeMany(poisons.map((token) => ({ ...summary, token, json: `{"token":"${token}","collectors":{"logger":{"logs":${logs}}}}` })));
  await writer.close();
  const storage = threadedIn(dir, { resourceLimits: POISON_LIMITS, onError: (error) => reported.push(error) }, clock.backoff);
  const [early] = (await storage.drawTokens(6, 1)) as [string];
  // 18 workers die at the poison reads: the first drew `early`, the others took no lease. The first read is tried
  // once more on a second worker; after those two stops in a row, each retry falls in the backoff: each other
  // poison profile is read twice.
  await rejection(() => storage.read(tokenFor(1)));
  for (const token of [...poisons, ...poisons]) {
    clock.passBackoff();
    await rejection(() => storage.read(token));
  }
  assert.is(reported.length, 18);
  clock.passBackoff();
  // Its lease names a thread of this live process: taken for another live holder's, the token is refused.
  await storage.write(makeProfile(early));
  assert.equal(await storage.read(early), makeProfile(early), "the first dead worker's token is written");
});

test('errors crossing the thread keep class, code, token, refusals, cause chain and stack', () => {
  const fsError = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  const failure = new ProfilerStorageError('Cannot write profile abcdef: ENOSPC', 'HK_PROFILER_STORAGE', { cause: fsError });
  const rebuilt = rebuildError(structuredClone(serializeError(failure)));
  assert.instance(rebuilt, ProfilerStorageError);
  assert.is(rebuilt.message, failure.message);
  assert.is((rebuilt as ProfilerStorageError).code, 'HK_PROFILER_STORAGE');
  assert.is(rebuilt.stack, failure.stack);
  assert.is((rebuilt.cause as Error & { code?: string }).code, 'ENOSPC');
  assert.is((rebuilt.cause as Error).message, fsError.message);

  const batch = rebuildError(structuredClone(serializeError(new ProfileBatchError([new ProfileExistsError('abcdef'), new InvalidProfileError('bad')]))));
  assert.instance(batch, ProfileBatchError);
  const [exists, invalid] = (batch as ProfileBatchError).errors;
  assert.instance(exists, ProfileExistsError);
  assert.is((exists as ProfileExistsError).token, 'abcdef');
  assert.instance(invalid, InvalidProfileError);
  assert.is(invalid!.message, 'bad');

  assert.instance(rebuildError(serializeError(new RangeError('too big'))), RangeError);
  const other = rebuildError(serializeError(Object.assign(new Error('odd'), { name: 'AbortError', code: 'ABORT_ERR' })));
  assert.is(other.name, 'AbortError');
  assert.is((other as Error & { code?: string }).code, 'ABORT_ERR');
  assert.is(rebuildError(serializeError('a string')).message, 'a string');
  // A name like an Object.prototype member is an Error's name, not a class to build it with.
  for (const name of ['constructor', 'hasOwnProperty', '__proto__']) {
    const odd = rebuildError(serializeError(Object.assign(new Error('odd'), { name })));
    assert.instance(odd, Error, name);
    assert.is(odd.name, name);
    assert.is(odd.message, 'odd');
  }
  // A cause cycle does not recurse forever.
  const cyclic = new Error('loop');
  cyclic.cause = cyclic;
  assert.ok(rebuildError(serializeError(cyclic)).cause instanceof Error);
});

test.run();
