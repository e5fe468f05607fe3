import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request } from '../../../kernel/index.js';
import { createApp } from '../../../lib/app/index.js';
import type { LogRecord } from '../../../lib/log/index.js';

test('an error of the profiler storage upkeep is an ERROR record of the profiler channel, as its save errors are', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'http-kernel-storage-log-'));
  // A directory named as a temp file an hour old: the first upkeep sweeps crash leftovers, and its unlink fails (EISDIR), as root too.
  mkdirSync(join(dir, 'left.tmp'));
  writeFileSync(join(dir, 'left.tmp', 'file'), '');
  const anHourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(join(dir, 'left.tmp'), anHourAgo, anHourAgo);
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
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const record = upkeep();
  assert.ok(record, `logged: ${records.map((each) => `${each.channel}.${each.levelName}: ${each.message}`).join(' | ')}`);
  assert.is(record.channel, 'profiler');
  assert.is(record.levelName, 'ERROR');
  assert.match(record.message, /EISDIR/);
});

test.run();
