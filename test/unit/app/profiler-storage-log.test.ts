import fs, { mkdtempSync, rmSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request } from '../../../kernel/index.js';
import { createApp } from '../../../lib/app/index.js';
import type { LogRecord } from '../../../lib/log/index.js';

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

test.run();
