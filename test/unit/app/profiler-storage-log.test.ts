import fs, { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request } from '../../../kernel/index.js';
import { createApp } from '../../../lib/app/index.js';
import type { LogRecord } from '../../../lib/log/index.js';
import { makeProfile } from '../profiler/storage/fixtures.js';

test('an error of the profiler storage upkeep is an ERROR record of the profiler channel, as its save errors are', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'http-kernel-storage-log-'));
  // The first upkeep compacts (its sweep of crash leftovers is due): the new index's rename fails, as on a failing disk (root is refused nothing else).
  const realRename = fs.renameSync;
  fs.renameSync = ((from: fs.PathLike, to: fs.PathLike) => {
    if (String(to) === join(dir, 'index.ndjson')) throw Object.assign(new Error(`EIO: i/o error, rename '${String(from)}' -> '${String(to)}'`), { code: 'EIO', errno: -5, syscall: 'rename' });
    realRename(from, to);
  }) as typeof fs.renameSync;
  syncBuiltinESMExports();
  const app = createApp({ profiler: { dir, thread: false }, stderrLogLevel: false });
  const records: LogRecord[] = [];
  app.bus.on('log', ({ record }) => void records.push(record));
  const upkeep = (): LogRecord | undefined => records.find((record) => record.message.startsWith('Profiler storage upkeep failed'));
  try {
    for (let i = 0; i < 3; i++) {
      const request = Request.create(`/?i=${i}`);
      await app.kernel.terminate(request, await app.kernel.handle(request));
    }
    // Profiles are saved in batches and the upkeep follows its first save: a wide bound.
    for (let waited = 0; upkeep() === undefined && waited < 20_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    fs.renameSync = realRename;
    syncBuiltinESMExports();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const record = upkeep();
  assert.ok(record, `logged: ${records.map((each) => `${each.channel}.${each.levelName}: ${each.message}`).join(' | ')}`);
  assert.is(record.channel, 'profiler');
  assert.is(record.levelName, 'ERROR');
  assert.match(record.message, /EIO/);
});

test('profiles an index had lost, put back from their segment, are said once as a WARNING of the profiler channel, not as a failure', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'http-kernel-storage-log-'));
  // A writer killed between its segment write and its index append, an hour ago.
  mkdirSync(join(dir, 'segments'));
  const segment = join(dir, 'segments', 'm0000a-99999-0000dead.ndjson');
  writeFileSync(segment, `${JSON.stringify(makeProfile('abc123', { time: Date.now() - 3_600_000 }))}\n`);
  const anHourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(segment, anHourAgo, anHourAgo);
  const app = createApp({ profiler: { dir, thread: false }, stderrLogLevel: false });
  const records: LogRecord[] = [];
  app.bus.on('log', ({ record }) => void records.push(record));
  const recovered = (): LogRecord[] => records.filter((record) => record.message.includes('had lost the lines'));
  try {
    const request = Request.create('/');
    await app.kernel.terminate(request, await app.kernel.handle(request));
    for (let waited = 0; recovered().length === 0 && waited < 20_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.is((await app.profiler?.storage.read('abc123'))?.token, 'abc123', 'read back');
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(recovered().map((record) => [record.channel, record.levelName]), [['profiler', 'WARNING']], records.map((record) => record.message).join(' | '));
  assert.match(recovered()[0]?.message ?? '', /had lost the lines of one profile \(/);
});

test.run();
