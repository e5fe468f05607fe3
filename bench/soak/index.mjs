// The soak: a debug server (bin/serve, or the embedded kernel of app.mjs) under a bounded mix of the
// traffic real use brings, over http and https, with undici and raw sockets, while its resident memory,
// descriptors, sockets, threads, profiler files and stderr are sampled; then idle, then SIGTERM.
// Not part of `npm test` nor `npm run bench`: `node bench/soak/index.mjs --help` (after a build).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';

const root = fileURLToPath(new URL('../..', import.meta.url));

const usage = `usage: node bench/soak/index.mjs [options]
  --target serve|app   bin/serve (the reference service), or bench/soak/app.mjs (routes that read bodies,
                       stream, make sub-requests)                                      (default serve)
  --duration S         seconds of traffic, at most 600                                 (default 120)
  --idle S             seconds sampled after the traffic                               (default 30)
  --users N            concurrent virtual clients, at most 32                          (default 6)
  --pause MS           each client's pause between two scenarios                       (default 15)
  --max-profiles N     --profiler-max-profiles of the server                           (default 500)
  --interval S         seconds between samples                                         (default 3)
  --kill-storage-every S   (app only) end the profiler's storage thread every S seconds of the traffic
  --thread-heap        (app only) sample the live heap of the profiler's storage thread too, by a heap
                       snapshot of it each time (tens of MB of the server's RSS: its RSS is no longer the figure)
  --term-under-load    send SIGTERM with the clients going again for 5 s (after the idle time), not to an idle server
  --snapshots          heap snapshots of the server after a fifth of the traffic and after the idle
                       time (node --heapsnapshot-signal=SIGWINCH), kept in the work directory
  --keep               keep the work directory (profiles, snapshots, samples.json)`;

const { values: options } = parseArgs({
  options: {
    target: { type: 'string', default: 'serve' },
    duration: { type: 'string', default: '120' },
    idle: { type: 'string', default: '30' },
    users: { type: 'string', default: '6' },
    pause: { type: 'string', default: '15' },
    'max-profiles': { type: 'string', default: '500' },
    interval: { type: 'string', default: '3' },
    'kill-storage-every': { type: 'string', default: '0' },
    'thread-heap': { type: 'boolean', default: false },
    'term-under-load': { type: 'boolean', default: false },
    snapshots: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (options.help) {
  console.log(usage);
  process.exit(0);
}
const whole = (name, max) => {
  const value = Number(options[name]);
  if (!/^\d+$/.test(options[name]) || value > max) {
    console.error(`soak: --${name} is a whole number up to ${max}\n${usage}`);
    process.exit(2);
  }
  return value;
};
const duration = whole('duration', 600);
const idle = whole('idle', 600);
const users = Math.max(1, whole('users', 32));
const pause = whole('pause', 10_000);
const maxProfiles = Math.max(1, whole('max-profiles', 1_000_000));
const interval = Math.max(1, whole('interval', 60));
const killStorageEvery = whole('kill-storage-every', 600);
const target = options.target;
if (target !== 'serve' && target !== 'app') {
  console.error(`soak: --target is serve or app\n${usage}`);
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------- server

const count = (map, key) => map.set(key, (map.get(key) ?? 0) + 1);

const work = mkdtempSync(join(tmpdir(), 'http-kernel-soak-'));
const profilerDir = join(work, 'profiler');
const nodeArgs = options.snapshots ? ['--heapsnapshot-signal=SIGWINCH'] : [];
const argv =
  target === 'serve'
    ? [...nodeArgs, join(root, 'bin/serve'), '--profiler-dir', profilerDir, '--profiler-max-profiles', String(maxProfiles), '--log-level', 'warning']
    : [...nodeArgs, '--expose-gc', join(root, 'bench/soak/app.mjs'), profilerDir, String(maxProfiles), join(work, 'tls')];
const env = { ...process.env, PORT: '0', HTTPS_PORT: '0' };
for (const name of ['APP_ENV', 'NODE_ENV', 'APP_DEBUG', 'PROFILER', 'PROFILER_DIR', 'PROFILER_MAX_PROFILES', 'LOG_LEVEL', 'HOST']) delete env[name];
const child = spawn(process.execPath, argv, { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, at: performance.now() })));
process.on('exit', () => {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (!options.keep) rmSync(work, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
// Whatever hangs (a snapshot, the server's exit), the soak ends: its own time plus three minutes.
setTimeout(() => {
  console.error('soak: still running three minutes past its time, stopping');
  process.exit(1);
}, (duration + idle + 180) * 1_000).unref();

// The server's stderr: counted by level and by kind of message (numbers and tokens left out) as it comes; the last lines kept.
const stderrTail = [];
const stderrLevels = new Map();
const stderrKinds = new Map();
let stderrCount = 0;
let stderrCarry = '';
child.stderr.setEncoding('utf8');
child.stderr.on('data', (chunk) => {
  const lines = (stderrCarry + chunk).split('\n');
  stderrCarry = lines.pop().slice(-100_000);
  for (const line of lines) {
    stderrCount++;
    stderrTail.push(line);
    if (stderrTail.length > 2_000) stderrTail.shift();
    let record;
    try {
      record = JSON.parse(line);
    } catch {
      count(stderrLevels, 'text');
      count(stderrKinds, line.slice(0, 160));
      continue;
    }
    count(stderrLevels, record.level ?? '?');
    count(stderrKinds, `${record.level}: ${String(record.message).replace(/[0-9a-f]{6,}|\d+/g, '#').slice(0, 160)}`);
  }
});

const urls = await new Promise((resolve, reject) => {
  let out = '';
  const timer = setTimeout(() => reject(new Error(`the server did not start within 30 s:\n${out}\n${stderrTail.join('\n')}`)), 30_000);
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    out += chunk;
    const found = [...out.matchAll(/^listening on (\S+)$/gm)].map((m) => m[1]);
    if (found.length === 2) {
      clearTimeout(timer);
      resolve({ http: new URL(found[0]), https: new URL(found[1]) });
    }
  });
  child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening:\n${stderrTail.join('\n')}`)));
});
child.stdout.resume();

// ---------------------------------------------------------------------------------------------- sampling

function procStatus(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
    return { rssKB: field('VmRSS'), threads: field('Threads') };
  } catch {
    return { rssKB: NaN, threads: NaN };
  }
}

function descriptors(pid) {
  let fds = 0;
  let sockets = 0;
  let files = 0;
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      fds++;
      try {
        const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (link.startsWith('socket:')) sockets++;
        else if (link.startsWith(profilerDir)) files++;
      } catch {}
    }
  } catch {}
  return { fds, sockets, profilerFiles: files };
}

function profilerFiles() {
  let bytes = 0;
  let segments = 0;
  let indexLines = 0;
  const walk = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else {
        try {
          bytes += statSync(path).size;
        } catch {}
        if (dir.endsWith('segments')) segments++;
      }
    }
  };
  walk(profilerDir);
  try {
    const index = readFileSync(join(profilerDir, 'index.ndjson'));
    for (const byte of index) if (byte === 10) indexLines++;
  } catch {}
  return { profilerKB: Math.round(bytes / 1024), segments, indexLines };
}

const samples = [];
const started = performance.now();
let phase = 'start';
/** The app's own view (app.mjs's /soak-state): its active resources and its heap after a full collection. */
async function appState() {
  if (target !== 'app') return {};
  try {
    const response = await request(new URL(options['thread-heap'] ? '/soak-state?thread' : '/soak-state', urls.http), { signal: AbortSignal.timeout(5_000) });
    const state = await response.body.json();
    const resources = Object.entries(state.resources).sort().map(([name, n]) => `${name}:${n}`).join(' ');
    const workerHeapMB = state.workerHeap === null ? NaN : Math.round(state.workerHeap / 104857.6) / 10;
    return { heapMB: Math.round(state.heapUsed / 1048576), externalMB: Math.round(state.external / 1048576), workerHeapMB, resources };
  } catch (error) {
    return { resources: `state failed: ${error.message}` };
  }
}

async function takeSample() {
  const sample = {
    t: Math.round((performance.now() - started) / 1000),
    phase,
    requests: stats.total,
    ...procStatus(child.pid),
    ...descriptors(child.pid),
    ...profilerFiles(),
    stderr: stderrCount,
    ...(await appState()),
  };
  samples.push(sample);
  const thread = options['thread-heap'] ? ` storage thread ${sample.workerHeapMB} MB` : '';
  const app = target === 'app' ? `  heap ${sample.heapMB} MB external ${sample.externalMB} MB${thread}  ${sample.resources}` : '';
  console.log(
    `${String(sample.t).padStart(4)}s ${phase.padEnd(7)} req ${String(sample.requests).padStart(7)}  rss ${(sample.rssKB / 1024).toFixed(1).padStart(6)} MB` +
      `  fds ${String(sample.fds).padStart(4)} sockets ${String(sample.sockets).padStart(4)} threads ${sample.threads}` +
      `  index ${String(sample.indexLines).padStart(5)} segments ${sample.segments} dir ${sample.profilerKB} KB  stderr ${sample.stderr}${app}`,
  );
  return sample;
}

// ---------------------------------------------------------------------------------------------- traffic

const stats = { total: 0, byScenario: new Map(), statuses: new Map(), failures: new Map() };
const tokens = [];
const remember = (token) => {
  if (typeof token === 'string' && /^[0-9a-f]{6,32}$/.test(token)) {
    tokens.push(token);
    if (tokens.length > 100) tokens.shift();
  }
};
const pick = (list) => list[Math.floor(Math.random() * list.length)];
const scheme = () => (Math.random() < 0.5 ? 'http' : 'https');
const newAgent = () => new Agent({ connect: { rejectUnauthorized: false }, connections: 4, keepAliveTimeout: 4_000, headersTimeout: 15_000, bodyTimeout: 15_000 });
let agent = newAgent();

async function call(path, { method = 'GET', headers = {}, body, via = scheme(), signal } = {}) {
  const response = await request(new URL(path, urls[via]), { method, headers, body, dispatcher: agent, signal: signal ?? AbortSignal.timeout(15_000) });
  const text = await response.body.text();
  remember(response.headers['x-debug-token']);
  count(stats.statuses, `${method} ${response.statusCode}`);
  return { status: response.statusCode, headers: response.headers, text };
}

/**
 * Connects a raw socket (plain or TLS), writes `payload` (parts written one after the other, or a function of the
 * server's host and port giving them), and reads until the server closes, for at most `readMs`.
 */
function raw(payload, { via = scheme(), readMs = 5_000, destroyAfterMs = null, slow = false } = {}) {
  return new Promise((resolve) => {
    const port = Number(urls[via].port);
    const socket = via === 'https' ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }) : net.connect({ host: '127.0.0.1', port });
    let received = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearInterval(drip);
      socket.destroy();
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(received)?.[1];
      if (status) count(stats.statuses, `raw ${status}`);
      for (const match of received.matchAll(/x-debug-token: ([0-9a-f]+)/gi)) remember(match[1]);
      resolve(received);
    };
    const timer = setTimeout(finish, destroyAfterMs ?? readMs);
    let drip;
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => {
      if (received.length < 1_000_000) received += chunk;
    });
    socket.on('error', finish);
    socket.on('close', finish);
    socket.once(via === 'https' ? 'secureConnect' : 'connect', () => {
      if (slow) {
        // A slow reader: a few KB now and then, so the server's writes back up.
        socket.pause();
        drip = setInterval(() => {
          socket.resume();
          setImmediate(() => socket.pause());
        }, 200);
      }
      for (const part of [].concat(typeof payload === 'function' ? payload(`127.0.0.1:${port}`) : payload)) socket.write(part);
    });
  });
}

const host = (via) => `127.0.0.1:${urls[via].port}`;
const panels = ['request', 'exception', 'logger', 'events', 'time', 'router'];

const common = [
  [10, 'health', () => call('/health')],
  [4, 'home html', () => call('/', { headers: { accept: 'text/html' } })],
  [3, 'head', () => call(pick(['/', '/health', '/missing-head']), { method: 'HEAD' })],
  [6, '404', () => call(`/missing-${Math.floor(Math.random() * 1e6)}`, { headers: Math.random() < 0.3 ? { accept: 'application/json' } : {} })],
  [4, '405 json', () => call('/health', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Dune', password: 'secret' }) })],
  [3, 'redirect', () => call('/health/?q=1')],
  [1, 'oversized', () => call(target === 'app' ? '/echo' : '/health', { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.alloc(2 * 1024 * 1024 + 1, 32) }).catch(() => null)],
  [6, 'profiler', async () => {
    const token = pick(tokens);
    const choices = [
      () => call('/_profiler/'),
      () => call('/_profiler/', { headers: { accept: 'application/json' } }),
      () => call(`/_profiler/search?method=GET&status=404&limit=${1 + Math.floor(Math.random() * 50)}`),
      () => call('/_profiler/search?url=missing&start=2020-01-01'),
      () => call('/_profiler/latest?panel=logger'),
      () => call('/_profiler/search?start=nonsense'),
    ];
    if (token) {
      choices.push(() => call(`/_profiler/${token}?panel=${pick(panels)}`));
      choices.push(() => call(`/_profiler/${token}`, { headers: { accept: 'application/json' } }));
      choices.push(() => call(`/_wdt/${token}`));
      choices.push(() => call(`/_profiler/${token}?panel=nonsense`));
    }
    return pick(choices)();
  }],
  [2, 'connection close', () => raw((h) => `GET ${pick(['/health', '/', '/missing-closed'])} HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n`)],
  [3, 'pipelined', () => {
    const via = scheme();
    return raw(
      `GET /health HTTP/1.1\r\nHost: ${host(via)}\r\n\r\nGET /nope HTTP/1.1\r\nHost: ${host(via)}\r\n\r\nHEAD / HTTP/1.1\r\nHost: ${host(via)}\r\n\r\n` +
        `POST /health HTTP/1.1\r\nHost: ${host(via)}\r\nContent-Length: 5\r\n\r\nhelloGET /health/ HTTP/1.1\r\nHost: ${host(via)}\r\nConnection: close\r\n\r\n`,
      { via },
    );
  }],
  [1, 'pipelined, gone', () =>
    raw(
      (h) =>
        `GET /missing-p1 HTTP/1.1\r\nHost: ${h}\r\n\r\nPOST ${target === 'app' ? '/echo' : '/health'} HTTP/1.1\r\nHost: ${h}\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{"a":123}` +
        `GET /health HTTP/1.1\r\nHost: ${h}\r\n\r\nGET / HTTP/1.1\r\nHost: ${h}\r\n\r\nGET /missing-p2 HTTP/1.1\r\nHost: ${h}\r\n\r\n`,
      { destroyAfterMs: Math.floor(Math.random() * 20) },
    )],
  [1, 'expect continue, gone', () =>
    raw((h) => `POST ${target === 'app' ? '/echo' : '/health'} HTTP/1.1\r\nHost: ${h}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n`, { destroyAfterMs: 50 + Math.floor(Math.random() * 200) })],
  // Left open after its answer: the server's keep-alive sweep closes it 6-7 s later.
  [1, 'kept idle', () => raw((h) => `GET /health HTTP/1.1\r\nHost: ${h}\r\n\r\n`, { readMs: 10_000 })],
  // A head trickled past the head timeout (10 s): the server's 408.
  [0.2, 'slow head', () => raw((h) => [`GET /health HTTP/1.1\r\nHost: ${h}\r\n`, 'X-Slow: 1\r\n'], { readMs: 12_000 })],
  [1, 'http/1.0', () => raw(pick(['GET /health HTTP/1.0\r\n\r\n', 'GET /missing-10 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n', 'HEAD / HTTP/1.0\r\n\r\n']))],
  [1, 'chunked, cut', () =>
    raw((h) => [`POST ${target === 'app' ? '/echo' : '/health'} HTTP/1.1\r\nHost: ${h}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`, '5\r\n{"a":\r\n', '10\r\n12'], { destroyAfterMs: 30 + Math.floor(Math.random() * 50) })],
  [2, 'bad request', () =>
    raw(
      pick([
        'GARBAGE\r\n\r\n',
        'GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n',
        'GET / HTTP/1.1\r\n\r\n',
        'GET /%zz HTTP/1.1\r\nHost: h\r\n\r\n',
        'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc',
        `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: h\r\n\r\n`,
        'GET / HTTP/1.1\r\nHost: h\r\nExpect: something\r\n\r\n',
        'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
      ]),
    )],
  [2, 'aborted upload', () =>
    raw([`POST ${target === 'app' ? '/upload' : '/health'} HTTP/1.1\r\nHost: h\r\nContent-Type: application/octet-stream\r\nContent-Length: 200000\r\n\r\n`, Buffer.alloc(10_000, 97)], { destroyAfterMs: 50 + Math.floor(Math.random() * 100) })],
  [2, 'gone before answer', () => raw((h) => `GET /missing-gone HTTP/1.1\r\nHost: ${h}\r\n\r\n`, { destroyAfterMs: Math.floor(Math.random() * 3) })],
  [1, 'slow reader', () => {
    const token = pick(tokens);
    const path = token ? `/_profiler/${token}?panel=events` : '/missing-slow';
    return raw((h) => `GET ${path} HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n`, { slow: true, readMs: 3_000 });
  }],
  [1, 'silent connection', () => raw(Math.random() < 0.5 ? '' : 'GET /health HTTP/1.1\r\nHo', { destroyAfterMs: 500 })],
];

const appOnly = [
  [5, 'echo json', () => call('/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ a: 1, list: [1, 2, 3], token: 'secret', text: 'x'.repeat(Math.floor(Math.random() * 5000)) }) })],
  [1, 'echo bad json', () => call('/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' })],
  [1, 'upload 413', () => call('/upload', { method: 'PUT', body: Buffer.alloc(1024 * 1024 + 1, 98) }).catch(() => null)],
  [3, 'stream', () => call(`/stream?n=${10 + Math.floor(Math.random() * 100)}`)],
  [1, 'stream abandoned', () => raw('GET /stream?n=200 HTTP/1.1\r\nHost: h\r\n\r\n', { destroyAfterMs: 5 + Math.floor(Math.random() * 20) })],
  [1, 'stream slow reader', () => raw('GET /stream?n=200 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n', { slow: true, readMs: 3_000 })],
  [3, 'fragments', () => call('/fragments', { headers: { accept: 'text/html' } })],
  [2, 'wait', () => call('/wait')],
  [2, 'wait abandoned', () => call('/wait', { signal: AbortSignal.timeout(100) }).catch(() => null)],
  [2, 'boom', () => call('/boom', { headers: Math.random() < 0.5 ? { accept: 'application/json' } : {} })],
];

const scenarios = target === 'app' ? [...common, ...appOnly] : common;
const totalWeight = scenarios.reduce((sum, [weight]) => sum + weight, 0);
function drawScenario() {
  let at = Math.random() * totalWeight;
  for (const scenario of scenarios) if ((at -= scenario[0]) < 0) return scenario;
  return scenarios[0];
}

let stopAt = Infinity;
let snapshotAt = Infinity;
async function user() {
  while (performance.now() < stopAt) {
    const [, name, run] = drawScenario();
    count(stats.byScenario, name);
    stats.total++;
    try {
      await run();
    } catch (error) {
      // Once the server is told to stop, refused and cut connections are what is expected.
      const when = phase === 'sigterm' ? 'after SIGTERM, ' : '';
      count(stats.failures, `${when}${name}: ${error?.code ?? error?.name}: ${String(error?.message).slice(0, 120)}`);
    }
    if (pause > 0) await delay(pause);
  }
}

// ---------------------------------------------------------------------------------------------- run

console.log(`soak: ${target} pid ${child.pid} at ${urls.http.href} and ${urls.https.href}; ${duration} s of traffic by ${users} clients, ${idle} s idle; work dir ${work}`);
const snapshot = async (label) => {
  if (!options.snapshots) return;
  const before = new Set(readdirSync(work));
  child.kill('SIGWINCH');
  for (let waited = 0; waited < 60_000; waited += 250) {
    await delay(250);
    const made = readdirSync(work).filter((name) => name.endsWith('.heapsnapshot') && !before.has(name));
    // A snapshot is whole once its size stops changing.
    if (made.length === 1) {
      const size = statSync(join(work, made[0])).size;
      await delay(1_000);
      if (statSync(join(work, made[0])).size === size && size > 0) {
        console.log(`soak: heap snapshot ${label}: ${join(work, made[0])}`);
        return;
      }
    }
  }
  console.log(`soak: heap snapshot ${label} was not written within 60 s`);
};

const sampler = setInterval(takeSample, interval * 1_000);
await takeSample();
phase = 'load';
stopAt = performance.now() + duration * 1_000;
snapshotAt = duration / 5;
const load = Promise.all(Array.from({ length: users }, user));
let storageKills = 0;
const killer =
  target === 'app' && killStorageEvery > 0
    ? setInterval(async () => {
        try {
          const response = await request(new URL('/soak-kill-storage', urls.http), { method: 'POST', signal: AbortSignal.timeout(5_000) });
          storageKills += (await response.body.json()).terminated;
        } catch (error) {
          count(stats.failures, `kill storage: ${error.message}`);
        }
      }, killStorageEvery * 1_000)
    : null;
if (options.snapshots) {
  await Promise.race([load, delay(snapshotAt * 1_000)]);
  if (performance.now() < stopAt) await snapshot('during load');
}
await load;
clearInterval(killer);
const loadEnded = performance.now();
await agent.close();
phase = 'idle';
await delay(idle * 1_000);
await takeSample();
await snapshot('after idle');
clearInterval(sampler);
const last = await takeSample();

let busy = null;
if (options['term-under-load']) {
  phase = 'busy';
  agent = newAgent();
  stopAt = Infinity;
  busy = Promise.all(Array.from({ length: users }, user));
  await delay(5_000);
}
phase = 'sigterm';
const killedAt = performance.now();
child.kill('SIGTERM');
const exit = await Promise.race([exited, delay(20_000, null, { ref: false })]);
if (busy !== null) {
  stopAt = 0;
  await busy;
  await agent.close();
}

// ---------------------------------------------------------------------------------------------- report

const during = samples.filter((sample) => sample.phase === 'load');
const peak = (key) => Math.max(...samples.map((sample) => sample[key]).filter(Number.isFinite));
const first = samples[0];
const rate = stats.total / ((loadEnded - started) / 1000 - (samples[0].t ?? 0));
console.log(`\n== soak: ${target}, ${stats.total} scenarios in ${duration} s (${rate.toFixed(0)}/s) ==`);
const row = (name, unit, key, scale = 1) =>
  console.log(`${name.padEnd(16)} start ${(first[key] / scale).toFixed(1)} ${unit}, peak ${(peak(key) / scale).toFixed(1)}, end of load ${((during.at(-1)?.[key] ?? NaN) / scale).toFixed(1)}, after ${idle} s idle ${(last[key] / scale).toFixed(1)}`);
row('rss', 'MB', 'rssKB', 1024);
row('fds', '', 'fds');
row('sockets', '', 'sockets');
row('threads', '', 'threads');
row('index lines', '', 'indexLines');
row('segments', '', 'segments');
row('profiler dir', 'KB', 'profilerKB');
if (target === 'app') {
  row('heap after gc', 'MB', 'heapMB');
  if (options['thread-heap']) row('storage thread', 'MB', 'workerHeapMB');
}
const sorted = (map) => [...map].sort((a, b) => b[1] - a[1]).map(([key, value]) => `${key} ${value}`).join(', ');
console.log(`scenarios: ${sorted(stats.byScenario)}`);
if (killer !== null) console.log(`storage threads ended: ${storageKills}`);
console.log(`statuses: ${sorted(stats.statuses)}`);
console.log(`client failures: ${stats.failures.size === 0 ? 'none' : sorted(stats.failures)}`);
console.log(`stderr: ${stderrCount} lines: ${sorted(stderrLevels)}`);
// Every kind of line but the 4xx errors the traffic asks for (logged at ERROR by design), and the five commonest of those.
const byCount = [...stderrKinds].sort((a, b) => b[1] - a[1]);
for (const [message, times] of [...byCount.filter(([message]) => !message.startsWith('error: ')), ...byCount.filter(([message]) => message.startsWith('error: ')).slice(0, 5)]) {
  console.log(`  ${times} x ${message}`);
}
const underLoad = busy === null ? '' : ' (under load)';
console.log(exit === null ? `SIGTERM${underLoad}: still running after 20 s (killed)` : `SIGTERM${underLoad}: exit ${exit.code ?? exit.signal} after ${Math.round(exit.at - killedAt)} ms`);
if (options.keep) writeFileSync(join(work, 'samples.json'), JSON.stringify({ samples, stderr: stderrTail }, null, 1));
process.exitCode = exit?.code === 0 ? 0 : 1;
