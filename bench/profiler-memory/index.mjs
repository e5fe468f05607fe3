// The profiler memory bench: resident memory of `bin/serve` in debug mode (the profiler
// recording every request, default bounds) while it answers 100,000 requests and for 10 s after.
// The server's profiles go to a temporary directory, removed at the end. See bench/README.md.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startChild, stopChild, waitForLine } from '../lib/children.mjs';
import { closingDropTotal } from '../lib/profiler-log.mjs';
import { makeTempDir, removeTempDir } from '../lib/temp-dirs.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const node = process.execPath;
const listening = /^listening on (http:\/\/127\.0\.0\.1:\d+)\s*$/m;
const dropWarning = 'profiles are being dropped';
const MB = 1024 * 1024;

export const defaults = {
  requests: 100_000,
  connections: 50,
  /** One request in this many is `GET /missing-<i>` (a 404, recorded twice: main + error page). */
  missingEvery: 10,
  /** Seconds of sampling after the last answer. */
  after: 10,
  /** Seconds the whole bench may take before it is aborted. */
  limit: 300,
  /** Target: RSS below this many MB ... */
  maxMB: 150,
  /** ... and flat: the peak of the second half of the load at most this much above the first half's. */
  maxGrowth: 0.1,
};

/** VmRSS of a process in bytes, or null when /proc cannot tell (process gone, not Linux). */
function rssOf(pid) {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Calls `onLine` for every complete line written to a (utf8) stream. */
function eachLine(stream, onLine) {
  let carry = '';
  stream.on('data', (chunk) => {
    const lines = (carry + chunk).split('\n');
    carry = lines.pop().slice(-100_000);
    for (const line of lines) onLine(line);
  });
}

/** The dropped count of one "profiles are being dropped" log line (JSON log record or plain text). */
function droppedIn(line) {
  try {
    const record = JSON.parse(line);
    const value = Number(record?.context?.dropped);
    if (Number.isFinite(value)) return value;
  } catch {}
  const match = /\((\d+) so far\)/.exec(line);
  return match ? Number(match[1]) : null;
}

function getStatus(url) {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { connection: 'close' }, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer within 5 s`)));
    req.on('error', reject);
    req.end();
  });
}

/** Profiles on disk: lines of index.ndjson, and the segment files (`segments/*.ndjson`) holding them. */
function countProfiles(dir) {
  let indexLines = 0;
  try {
    indexLines = readFileSync(join(dir, 'index.ndjson'), 'utf8').split('\n').filter((line) => line.trim() !== '' && !line.startsWith('{"h":')).length;
  } catch {}
  let files = 0;
  let bytes = 0;
  for (const name of safeReaddir(join(dir, 'segments'))) {
    if (!name.isFile() || !name.name.endsWith('.ndjson')) continue;
    try {
      bytes += statSync(join(dir, 'segments', name.name)).size;
      files++;
    } catch {}
  }
  return { indexLines, files, bytes };
}

function safeReaddir(dir) {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the bench; resolves with a JSON-serialisable result (see format()), or rejects on failure. */
export async function run(options = {}, log = (line) => process.stderr.write(`${line}\n`)) {
  const opts = { ...defaults, ...Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) };
  const dir = makeTempDir('http-kernel-profiler-memory-');
  const profilerDir = join(dir, 'profiler');
  const args = ['--port', '0', '--https-port', 'off', '--profiler-dir', profilerDir];
  // cwd is the temp dir too, so nothing the server writes relative to it lands in the repository.
  const handle = startChild([node, join(root, 'bin/serve'), ...args], { cwd: dir });
  const dropped = { warnings: 0, last: null, total: null, recorded: null };
  const watch = (line) => {
    // On its way out the profiler logs its total, when it dropped any.
    const total = closingDropTotal(line);
    if (total) {
      dropped.total = total.dropped;
      dropped.recorded = total.recorded;
      return;
    }
    if (!line.includes(dropWarning)) return;
    dropped.warnings++;
    const count = droppedIn(line);
    if (count !== null) dropped.last = Math.max(dropped.last ?? 0, count);
  };
  eachLine(handle.child.stdout, watch);
  eachLine(handle.child.stderr, watch);

  const started = performance.now();
  const deadline = started + opts.limit * 1000;
  const elapsed = () => (performance.now() - started) / 1000;
  const samples = [];
  let phase = 'start';
  const sample = () => {
    const rss = rssOf(handle.child.pid);
    if (rss !== null) samples.push({ t: Math.round(elapsed() * 10) / 10, phase, rssMB: Math.round((rss / MB) * 10) / 10 });
  };
  let sampler;
  let instance;
  const abort = setTimeout(() => instance?.stop(), opts.limit * 1000);
  const alive = () => handle.child.exitCode === null && handle.child.signalCode === null;
  try {
    const [, origin] = await waitForLine(handle, listening, 'listening on http://127.0.0.1:PORT', 20_000);
    const status = await getStatus(`${origin}/health`);
    if (status !== 200) throw new Error(`GET ${origin}/health answered ${status}, expected 200`);
    sample();
    const startMB = samples.at(-1)?.rssMB ?? null;
    if (startMB === null) throw new Error(`cannot read VmRSS of pid ${handle.child.pid} from /proc`);
    phase = 'load';
    sampler = setInterval(sample, 1000);
    log(`profiler-memory: ${opts.requests} requests, ${opts.connections} connections, 1 in ${opts.missingEvery} a 404; server RSS at start ${startMB} MB`);

    let missing = 0;
    const requests = Array.from({ length: opts.missingEvery }, (_, index) => index === opts.missingEvery - 1
      ? { method: 'GET', path: '/missing-0', setupRequest: (req) => ({ ...req, path: `/missing-${missing++}` }) }
      : { method: 'GET', path: '/health' });
    const loadStarted = performance.now();
    const load = await new Promise((resolve, reject) => {
      instance = autocannon({ url: origin, connections: opts.connections, amount: opts.requests, timeout: 10, requests }, (error, result) => {
        if (error) reject(error);
        else resolve(result);
      });
    });
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    if (performance.now() >= deadline) throw new Error(`aborted: the bench took more than ${opts.limit} s`);
    if (!alive()) throw new Error(`the server exited (${handle.child.signalCode ?? `code ${handle.child.exitCode}`}) during the load\n${handle.stderr.text.trim()}`);
    const statusCodes = Object.fromEntries(Object.entries(load.statusCodeStats).map(([code, { count }]) => [code, count]));
    log(`profiler-memory: load done in ${loadSeconds.toFixed(1)} s (${Math.round(load.requests.total / loadSeconds)} req/s); sampling for ${opts.after} s more`);

    phase = 'after';
    await sleep(opts.after * 1000);
    clearInterval(sampler);
    sample();
    if (!alive()) throw new Error(`the server exited (${handle.child.signalCode ?? `code ${handle.child.exitCode}`}) after the load\n${handle.stderr.text.trim()}`);
    const profiles = countProfiles(profilerDir);

    const load1 = samples.filter((s) => s.phase === 'load');
    const half = Math.ceil(load1.length / 2);
    const firstHalfPeak = Math.max(...load1.slice(0, half).map((s) => s.rssMB));
    const secondHalfPeak = Math.max(...load1.slice(half).map((s) => s.rssMB));
    const peakMB = Math.max(...samples.map((s) => s.rssMB));
    const endMB = samples.at(-1).rssMB;
    const growth = load1.length >= 4 ? secondHalfPeak / firstHalfPeak - 1 : null;
    const flat = growth !== null && growth <= opts.maxGrowth && endMB <= peakMB;
    const under = peakMB < opts.maxMB && endMB < opts.maxMB;
    return {
      name: 'profiler-memory',
      command: `node bin/serve ${args.slice(0, -1).join(' ')} <tmpdir>`,
      options: { requests: opts.requests, connections: opts.connections, missingEvery: opts.missingEvery, after: opts.after },
      load: {
        seconds: Math.round(loadSeconds * 10) / 10,
        requests: load.requests.total,
        rps: Math.round(load.requests.total / loadSeconds),
        p99: load.latency.p99,
        statusCodes,
        errors: load.errors,
        timeouts: load.timeouts,
      },
      rss: { startMB, peakMB, endMB, firstHalfPeakMB: firstHalfPeak, secondHalfPeakMB: secondHalfPeak, growth },
      profiles,
      // Stopped (gracefully) first, so the profiler's closing total is in.
      dropped: (await stopChild(handle), dropped),
      target: {
        text: `RSS after ${opts.requests.toLocaleString('en-US')} recorded requests < ${opts.maxMB} MB and flat`,
        status: under && flat ? 'PASS' : 'FAIL',
      },
      samples,
      failed: load.errors > 0 || load.timeouts > 0 || load.requests.total < opts.requests,
    };
  } finally {
    clearTimeout(abort);
    clearInterval(sampler);
    await stopChild(handle);
    removeTempDir(dir);
  }
}

/** The summary printed by bench/run.mjs. */
export function format(result) {
  const { load, rss, profiles, dropped, options } = result;
  const codes = Object.entries(load.statusCodes).map(([code, count]) => `${count} x ${code}`).join(', ');
  const trace = result.samples.map((s) => `${s.t}s:${Math.round(s.rssMB)}`).join(' ');
  return [
    `${result.command}`,
    `${load.requests} requests (${codes}; ${load.errors} errors, ${load.timeouts} timeouts), ${options.connections} connections, in ${load.seconds} s: ${load.rps} req/s, p99 ${load.p99} ms`,
    `server RSS: start ${rss.startMB} MB, peak ${rss.peakMB} MB, end ${rss.endMB} MB (${options.after} s after the load); ` +
      `peak of the 1st half of the load ${rss.firstHalfPeakMB} MB, of the 2nd half ${rss.secondHalfPeakMB} MB` +
      (rss.growth === null ? '' : ` (${rss.growth >= 0 ? '+' : ''}${(rss.growth * 100).toFixed(1)}%)`),
    `RSS every second (s:MB): ${trace}`,
    `profiles on disk at the end: ${profiles.indexLines} index lines, ${profiles.files} segment files (${(profiles.bytes / MB).toFixed(1)} MB)`,
    dropped.total !== null
      ? `the server dropped ${dropped.total} of ${dropped.recorded} profiles (its closing count)`
      : dropped.warnings > 0
      ? `server warned ${dropped.warnings} time(s) that profiles are being dropped; dropped count in its last warning: ${dropped.last ?? 'unknown'} (logged once per burst, so a lower bound)`
      : 'no profile dropped (no warning, no closing count from the server)',
    '',
    'Target:',
    `  ${result.target.text}: ${result.target.status} (start ${rss.startMB} MB, peak ${rss.peakMB} MB, end ${rss.endMB} MB)`,
  ].join('\n');
}
