// Measures the file storage once (not a test: no timings are asserted anywhere).
//   node dist/test/unit/profiler/storage/measure-storage.js [--batched 30000] [--writes 100000] [--dir /tmp/x] [--only-batched]
// Prints: batched throughput (profiles/s and CPU µs per profile for writeMany batches of 100
// profiles of ~5 KB, under the default bounds, so compactions included), gzip size of a ~20 KB
// profile, write latency, find over 10,000 entries, and with --writes N, profiles on disk and
// resident memory every N/10 writes under the default bounds.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import type { Profile } from '../../../../lib/profiler/profile.js';
import { FileStorage } from '../../../../lib/profiler/storage/index.js';
import { makeTempDir } from './fixtures.js';

const { values } = parseArgs({
  options: { writes: { type: 'string', default: '0' }, batched: { type: 'string', default: '30000' }, 'only-batched': { type: 'boolean', default: false }, dir: { type: 'string' } },
});

/** A profile of about `size` bytes of JSON, varied like real ones (ids, timings, paths differ). */
function realisticProfile(token: string, time: number, size = 20_000): Profile {
  const logs = [];
  const frames = [];
  const called = [];
  // Fewer frames and listeners in small profiles, so that ~5 KB is reachable.
  const parts = size >= 10_000 ? 30 : 6;
  for (let i = 0; i < parts; i++) frames.push({ function: `Handler${i}.handle`, file: `/srv/app/dist/lib/module-${i % 9}.js`, line: 10 + ((i * 37) % 400), column: 5 + (i % 30), internal: i > parts - 6 });
  for (let i = 0; i < parts - 5; i++) called.push({ event: `kernel.${['request', 'controller', 'response', 'finish_request'][i % 4]}`, listener: `Listener${i}.on`, priority: 250 - i * 10, start: i * 0.137, duration: Math.random() / 10, stoppedPropagation: false });
  const body = { token, parent: null, children: [], ip: '127.0.0.1', method: 'GET', url: `http://127.0.0.1:8000/books/${token}?page=2`, time, status: 200 };
  let profile: Profile;
  do {
    logs.push({ time: time + logs.length * 0.71, level: 6, levelName: 'INFO', channel: 'app', message: `Loaded book ${randomBytes(4).toString('hex')} in ${(Math.random() * 9).toFixed(3)} ms`, context: { id: randomBytes(8).toString('hex'), user: `user-${logs.length}` } });
    profile = {
      ...body,
      collectors: {
        request: { method: 'GET', path: `/books/${token}`, requestHeaders: { host: '127.0.0.1:8000', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/132.0', accept: 'text/html', cookie: '[redacted]' }, query: { page: '2' }, statusCode: 200, responseHeaders: { 'content-type': 'text/html; charset=utf-8', 'x-debug-token': token } },
        exception: { exceptions: [{ class: 'NotFoundHttpError', message: 'Not Found', status: 404, frames, stack: frames.map((f) => `    at ${f.function} (${f.file}:${f.line}:${f.column})`).join('\n') }] },
        logger: { logs, counts: { INFO: logs.length }, errorCount: 0, warningCount: 0 },
        events: { called, notCalled: [], orphaned: [] },
        time: { startTime: time, duration: 3.2, periods: called.map((c) => ({ name: c.listener, category: 'listener', start: c.start, duration: c.duration })) },
      },
    };
  } while (JSON.stringify(profile).length < size);
  return profile;
}

function token(i: number): string {
  return (0x10000000 + i).toString(16);
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

async function countProfiles(dir: string): Promise<number> {
  let count = 0;
  for (const name of await readdir(dir)) if (/^[0-9a-f]{2}$/.test(name)) count += (await readdir(join(dir, name))).filter((f) => f.endsWith('.json.gz')).length;
  return count;
}

/** CPU nanoseconds of the main thread alone (Linux), or NaN elsewhere: process.cpuUsage() also counts the libuv pool. */
function mainThreadCpuNs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

/**
 * Saves `count` profiles of ~5 KB in batches of `batchSize`, one batch in flight (as the profiler
 * does), with writeMany, or with concurrent write() calls on a storage that has none. Profiles are
 * made before the clock starts; JSON.stringify of the same profiles is timed apart, since every
 * storage pays it.
 */
async function measureBatched(dir: string, count: number, batchSize = 100): Promise<void> {
  const storage = new FileStorage({ dir, onError: (error) => console.error(`onError: ${error.message}`) });
  // Tokens drawn from the storage's leases, as the profiler's token pool does.
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) tokens.push(await storage.drawToken(6));
  const templates = Array.from({ length: 20 }, (_, i) => realisticProfile(token(i), Date.now(), 5_000));
  const batches: Profile[][] = [];
  for (let i = 0; i < count; i += batchSize) {
    batches.push(Array.from({ length: Math.min(batchSize, count - i) }, (_, j) => ({ ...(templates[(i + j) % templates.length] as Profile), token: tokens[i + j] as string, time: Date.now() + i + j })));
  }
  const bytes = JSON.stringify(templates[0]).length;
  // The baseline: what any storage pays, JSON.stringify of each batch (and collecting its garbage), timed the same way.
  let kept: string[] = [];
  const baseline = mainThreadCpuNs();
  for (const batch of batches) {
    kept = batch.map((profile) => JSON.stringify(profile));
    await new Promise((resolve) => setImmediate(resolve));
  }
  const stringify = (mainThreadCpuNs() - baseline) / 1_000 / count;
  kept = [];

  const batchWrite = (storage as { writeMany?: (profiles: readonly Profile[]) => Promise<void> }).writeMany?.bind(storage);
  const cpu = process.cpuUsage();
  const main = mainThreadCpuNs();
  const began = performance.now();
  for (const batch of batches) {
    if (batchWrite !== undefined) await batchWrite(batch);
    else await Promise.all(batch.map((profile) => storage.write(profile)));
  }
  const elapsed = performance.now() - began;
  const used = process.cpuUsage(cpu);
  const mainUs = (mainThreadCpuNs() - main) / 1_000 / count;
  await storage.close();
  const processUs = (used.user + used.system) / count;
  console.log(
    `${count} profiles of ${bytes} bytes, ${batchWrite === undefined ? `${batchSize} concurrent write()` : `writeMany batches of ${batchSize}`}: ` +
      `${Math.round((count * 1_000) / elapsed)} profiles/s, CPU per profile: process ${processUs.toFixed(1)} µs, main thread ${mainUs.toFixed(1)} µs ` +
      `(JSON.stringify of the batches alone ${stringify.toFixed(1)} µs, so ${(mainUs - stringify).toFixed(1)} µs beyond it)`,
  );
}

const temp = values.dir === undefined ? await makeTempDir('measure-storage') : { dir: values.dir, cleanup: async () => {} };
try {
  const batched = Number(values.batched);
  if (batched > 0) await measureBatched(join(temp.dir, 'batched'), batched);
  if (values['only-batched']) process.exit(0);
  const sample = realisticProfile(token(0), Date.now());
  const json = JSON.stringify(sample);
  console.log(`profile: ${json.length} bytes of JSON, ${gzipSync(json).length} gzip'd (default level)`);

  const storage = new FileStorage({ dir: join(temp.dir, 'latency') });
  const times: number[] = [];
  for (let i = 0; i < 1_000; i++) {
    const profile = { ...sample, token: token(i), time: Date.now() };
    const start = performance.now();
    await storage.write(profile);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  console.log(`write of a ${json.length}-byte profile (1,000 sequential): p50 ${quantile(times, 0.5).toFixed(2)} ms, p99 ${quantile(times, 0.99).toFixed(2)} ms`);
  await storage.close();

  const big = new FileStorage({ dir: join(temp.dir, 'find') });
  const small = realisticProfile(token(0), Date.now(), 1_000);
  for (let i = 0; i < 10_000; i++) await big.write({ ...small, token: token(i), time: Date.now() - 10_000 + i, status: i % 10 === 0 ? 404 : 200, url: `http://127.0.0.1:8000/items/${i}` });
  await big.close();
  const fresh = new FileStorage({ dir: join(temp.dir, 'find') });
  let start = performance.now();
  await fresh.find();
  console.log(`find over 10,000 entries, first call of a new instance (reads the whole index): ${(performance.now() - start).toFixed(1)} ms`);
  for (const [label, criteria] of [['latest 10', {}], ['status=404 limit 10', { status: 404 }], ['url matching nothing (full scan)', { url: '/nowhere' }]] as const) {
    const runs: number[] = [];
    for (let i = 0; i < 50; i++) {
      start = performance.now();
      await fresh.find(criteria);
      runs.push(performance.now() - start);
    }
    runs.sort((a, b) => a - b);
    console.log(`find ${label} over 10,000 entries: p50 ${quantile(runs, 0.5).toFixed(2)} ms`);
  }
  await fresh.close();

  const writes = Number(values.writes);
  if (writes > 0) {
    const dir = join(temp.dir, 'run');
    const run = new FileStorage({ dir, onError: (error) => console.error(`onError: ${error.message}`) });
    const began = performance.now();
    for (let i = 0; i < writes; i++) {
      await run.write({ ...sample, token: token(i), time: Date.now() });
      if ((i + 1) % Math.max(1, Math.floor(writes / 10)) === 0) {
        console.log(`${i + 1} writes: ${await countProfiles(dir)} profiles on disk, rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB, heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MB, ${((performance.now() - began) / (i + 1)).toFixed(2)} ms/write`);
      }
    }
    await run.close();
  }
} finally {
  await temp.cleanup();
}
