import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request } from '../../../kernel/index.js';
import { createApp } from '../../../lib/app/index.js';
import { makeDirectory, makeDirectorySync } from '../../../lib/fs/make-directory.js';

let root = '';
test.before(async () => {
  root = await mkdtemp(join(tmpdir(), 'hk-mkdir-'));
});
test.after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Settles with `promise`, or fails after `ms` (the bug this guards against never settles). */
function within<T>(promise: Promise<T>, ms = 2000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not settle within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Linux's procfs answers ENOENT to a mkdir under /proc: Node's recursive mkdir loops on it forever.
const procfs = existsSync('/proc/self/status');

test('makes missing parents, and an existing directory is fine', async () => {
  const async = join(root, 'a', 'b', 'c');
  await makeDirectory(async, 0o700);
  assert.ok((await stat(async)).isDirectory());
  assert.is((await stat(join(root, 'a'))).mode & 0o777, 0o700);
  await makeDirectory(async);
  const sync = join(root, 's', 't');
  makeDirectorySync(sync);
  makeDirectorySync(sync);
  assert.ok((await stat(sync)).isDirectory());
});

test('a file in the way is an error, not a directory', async () => {
  const file = join(root, 'file');
  await writeFile(file, 'x');
  for (const path of [file, join(file, 'below')]) {
    const asyncError = await makeDirectory(path).then(() => null, (error: NodeJS.ErrnoException) => error);
    assert.ok(asyncError !== null && ['EEXIST', 'ENOTDIR'].includes(asyncError.code!), `async ${path}: ${asyncError?.code}`);
    assert.throws(() => makeDirectorySync(path), (error: NodeJS.ErrnoException) => ['EEXIST', 'ENOTDIR'].includes(error.code!));
  }
});

test('a directory the filesystem cannot create fails at once (procfs), where recursive mkdir never settles', async () => {
  if (!procfs) return;
  const error = await within(makeDirectory('/proc/hk-nope/leases')).then(() => null, (caught: NodeJS.ErrnoException) => caught);
  assert.is(error?.code, 'ENOENT');
  assert.throws(() => makeDirectorySync('/proc/hk-nope/segments'), (caught: NodeJS.ErrnoException) => caught.code === 'ENOENT');
});

test('a profiler directory the filesystem cannot create never holds up a request', async () => {
  if (!procfs) return;
  const app = createApp({ profiler: { dir: '/proc/hk-nope', thread: false }, stderrLogLevel: false });
  const errors: string[] = [];
  app.bus.on('log', (entry) => {
    if (entry.record.channel === 'profiler') errors.push(entry.record.message);
  });
  const response = await within(app.kernel.handle(Request.create('/health')));
  assert.is(response.status, 200);
  assert.is(response.headers['x-debug-token'], undefined);
  await within(app.close());
  assert.ok(errors.length >= 1, 'the storage failure is logged');
  assert.match(errors[0]!, "Cannot lease a token prefix in the profiler storage /proc/hk-nope: ENOENT");
});

test.run();
