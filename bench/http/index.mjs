// The HTTP bench: requests/s and p99 latency of GET /health on http-kernel and its peers, each
// server in its own process on one core and autocannon in another process on the other core.
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { detectPinning, startChild, stopChild, waitForLine } from '../lib/children.mjs';
import { machineBusySeconds, processCpuSeconds } from '../lib/cpu.mjs';
import { median, spread } from '../lib/stats.mjs';
import { closingDropTotal } from '../lib/profiler-log.mjs';
import { makeTempDir, removeTempDir } from '../lib/temp-dirs.mjs';
import { formatRatio, formatTable } from '../lib/table.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const node = process.execPath;
const listening = /^listening on (http:\/\/127\.0\.0\.1:\d+)\s*$/m;
const listeningText = 'listening on http://127.0.0.1:PORT';
const path = '/health';
// Below this share of a CPU the server was not the bottleneck; above `busy`, something else ran.
const saturated = 0.9;
const busy = 0.15;

/**
 * Run settings; `quick` overrides the first three for a smoke run of about a minute. Five short
 * rounds rather than three long ones: on the reference VM single samples swing by 20-30% for
 * reasons the guest cannot see, and a median of five survives two such outliers.
 */
export const defaults = {
  rounds: 5,
  duration: 4,
  warmup: 2,
  connections: 100,
  pipelining: [1, 10],
  only: null,
  startTimeout: 20,
};
const quick = { rounds: 1, duration: 2, warmup: 2 };

/** The servers under test: `name` is what --only takes, `label` is what the tables show. */
export const servers = [
  { name: 'node-http', label: 'node:http', command: [node, 'bench/http/servers/node-http.mjs'] },
  { name: 'fastify', label: 'fastify', command: [node, 'bench/http/servers/fastify.mjs'] },
  { name: 'koa', label: 'koa', command: [node, 'bench/http/servers/koa.mjs'] },
  { name: 'express', label: 'express', command: [node, 'bench/http/servers/express.mjs'] },
  { name: 'hono', label: 'hono', command: [node, 'bench/http/servers/hono.mjs'] },
  {
    name: 'http-kernel',
    label: 'http-kernel',
    command: [node, 'bin/serve', '--no-debug', '--port', '0', '--https-port', 'off'],
    needs: 'bin/serve',
  },
  {
    name: 'http-kernel-debug',
    label: 'http-kernel (debug)',
    command: [node, 'bin/serve', '--port', '0', '--https-port', 'off'],
    needs: 'bin/serve',
    // Runs in a fresh temp dir (its cwd) with `--profiler-dir <tmp>/profiler`, removed after
    // each round: profiles never land in the repository and each round starts empty.
    tempDir: true,
  },
  {
    // Debug mode (per-request logs, AsyncLocalStorage; no listener tracing) without the profiler:
    // where a debug request's cost goes, between debug off and the profiler recording it.
    name: 'http-kernel-debug-noprofiler',
    label: 'http-kernel (debug, no profiler)',
    command: [node, 'bin/serve', '--no-profiler', '--port', '0', '--https-port', 'off'],
    needs: 'bin/serve',
  },
];

/** Targets checked at the end, per pipelining level: `server` must reach `min` x `base`. */
const targets = [
  { server: 'http-kernel', base: 'node-http', min: 0.95, text: 'http-kernel (debug off) >= 0.95x node:http' },
  { server: 'http-kernel', base: 'fastify', min: 1, text: 'http-kernel (debug off) >= fastify' },
  // Issue 3: the profiler recording every request costs at most a quarter of the throughput.
  { server: 'http-kernel-debug', base: 'http-kernel', min: 0.75, text: 'profiler on >= 0.75x debug off', p99: true },
];

/** Fills in defaults (and the quick ones when asked) and checks the server names. */
export function resolveOptions(options = {}) {
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  const resolved = { ...defaults, ...(given.quick ? quick : {}), ...given };
  if (resolved.only) {
    const known = new Set(servers.map((server) => server.name));
    const unknown = resolved.only.filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new Error(`unknown server ${unknown.join(', ')} in --only; known: ${[...known].join(', ')}`);
    }
  }
  for (const key of ['rounds', 'duration', 'warmup', 'connections']) {
    if (!(Number.isFinite(resolved[key]) && resolved[key] > 0)) throw new Error(`--${key} must be a positive number`);
  }
  if (resolved.pipelining.length === 0 || resolved.pipelining.some((level) => !(Number.isInteger(level) && level > 0))) {
    throw new Error('--pipelining must be a comma-separated list of positive integers');
  }
  return resolved;
}

/** Upper bound of the run time in seconds, for the progress line. */
export function estimateSeconds(options) {
  const opts = resolveOptions(options);
  const count = opts.only ? opts.only.length : servers.length;
  return opts.rounds * count * (1 + opts.warmup + opts.duration * opts.pipelining.length);
}

/** Measures every selected server and returns a JSON-serialisable result (see format()). */
export async function run(options = {}, log = (line) => process.stderr.write(`${line}\n`)) {
  const opts = resolveOptions(options);
  const selected = opts.only ? servers.filter((server) => opts.only.includes(server.name)) : servers;
  const pinning = detectPinning();
  if (!pinning.cores) log(`WARNING: running unpinned: ${pinning.reason}. Server and load generator will share CPUs.`);
  const idleLoad = await backgroundLoad();
  if (idleLoad !== null && idleLoad > busy) {
    log(`WARNING: before starting, other processes used ${Math.round(idleLoad * 100)}% of a CPU; figures will be noisy.`);
  }

  const states = selected.map((server) => ({
    name: server.name,
    label: server.label,
    command: server.command.slice(1).join(' '),
    error: server.needs && !existsSync(join(root, server.needs)) ? `${server.needs} does not exist` : null,
    samples: Object.fromEntries(opts.pipelining.map((level) => [level, []])),
  }));

  const loader = await startLoader(pinning.cores?.[1] ?? null);
  try {
    for (let round = 0; round < opts.rounds; round++) {
      // Rotate the order each round and alternate the pipelining order, so neither drift nor
      // position (first after a restart, last before a stop) favours one server or level.
      const order = states.map((_, index) => states[(index + round) % states.length]);
      const levels = round % 2 === 0 ? opts.pipelining : [...opts.pipelining].reverse();
      for (const state of order) {
        if (state.error) continue;
        const server = selected.find((candidate) => candidate.name === state.name);
        try {
          const measured = await measureServer(server, levels, opts, loader, pinning);
          for (const level of levels) state.samples[level].push(measured[level]);
          log(`[round ${round + 1}/${opts.rounds}] ${state.label.padEnd(20)} ${levels
            .map((level) => `p${level}: ${Math.round(measured[level].rps)} req/s, p99 ${measured[level].p99} ms`)
            .join(' | ')}`);
        } catch (error) {
          if (error.fatal) throw error;
          state.error = error.message;
          log(`[round ${round + 1}/${opts.rounds}] ${state.label}: FAILED\n${error.message}`);
        }
      }
    }
  } finally {
    await loader.stop();
  }

  const result = {
    name: 'http',
    request: `GET ${path}`,
    options: { rounds: opts.rounds, duration: opts.duration, warmup: opts.warmup, connections: opts.connections, pipelining: opts.pipelining },
    backgroundLoad: idleLoad,
    pinning: pinning.cores ? { server: pinning.cores[0], loader: pinning.cores[1] } : { unpinned: pinning.reason },
    servers: states.map(summarise),
  };
  result.targets = checkTargets(result);
  result.failed = result.servers.some((server) => server.error);
  return result;
}

/** Share of a CPU the rest of the machine uses over one second while the bench is idle. */
async function backgroundLoad() {
  const before = machineBusySeconds();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const after = machineBusySeconds();
  return before === null || after === null ? null : (after - before) / ((performance.now() - started) / 1000);
}

/** Starts one fresh server process, checks its answer, warms it up, then measures each level. */
async function measureServer(server, levels, opts, loader, pinning) {
  const dir = server.tempDir ? makeTempDir('http-kernel-bench-debug-') : null;
  const command = dir
    ? [server.command[0], join(root, server.command[1]), ...server.command.slice(2), '--profiler-dir', join(dir, 'profiler')]
    : server.command;
  const handle = startChild(command, { core: pinning.cores?.[0] ?? null, cwd: dir ?? root });
  let measured;
  try {
    const [, origin] = await waitForLine(handle, listening, listeningText, opts.startTimeout * 1000);
    const url = `${origin}${path}`;
    const body = await verify(url);
    const job = { url, connections: opts.connections, expectBody: body };
    await loader.run({ ...job, pipelining: levels[0], duration: opts.warmup });
    measured = {};
    for (const level of levels) {
      const before = cpuSnapshot(handle.child.pid, loader.pid);
      const sample = await loader.run({ ...job, pipelining: level, duration: opts.duration });
      Object.assign(sample, cpuShares(before, cpuSnapshot(handle.child.pid, loader.pid)));
      // Server CPU per answered request: unlike req/s it barely moves when the loader is the limit.
      sample.cpuMicrosPerRequest = sample.serverCpu === null || sample.rps === 0 ? null : (sample.serverCpu / sample.rps) * 1e6;
      measured[level] = sample;
      if (handle.child.exitCode !== null || handle.child.signalCode !== null) {
        const how = handle.child.signalCode ?? `code ${handle.child.exitCode}`;
        throw new Error(`the server exited (${how}) during the measurement\n${handle.stderr.text.trim()}`);
      }
    }
    await verify(url);
    return measured;
  } finally {
    await stopChild(handle);
    if (dir) removeTempDir(dir);
    if (server.tempDir && measured !== undefined) {
      // The profiler says on the way out how many profiles it dropped (none: no such line).
      const dropped = profilesDropped(handle.stderr.text);
      for (const level of levels) if (measured[level]) measured[level].profilesDropped = dropped;
    }
  }
}

/** `{ dropped, recorded }` from a debug server's closing warning, or zeros when it dropped none. */
function profilesDropped(stderr) {
  for (const line of stderr.split('\n').reverse()) {
    const total = closingDropTotal(line);
    if (total) return total;
  }
  return { dropped: 0, recorded: null };
}

function cpuSnapshot(serverPid, loaderPid) {
  return {
    at: performance.now(),
    server: processCpuSeconds(serverPid),
    loader: processCpuSeconds(loaderPid),
    machine: machineBusySeconds(),
  };
}

/**
 * Shares of one CPU used during a sample by the server, the load generator, and everything else
 * on the machine (other processes, or the hypervisor stealing time): null where unknown.
 */
function cpuShares(before, after) {
  const seconds = (after.at - before.at) / 1000;
  const share = (key) => (before[key] === null || after[key] === null ? null : (after[key] - before[key]) / seconds);
  const serverCpu = share('server');
  const loaderCpu = share('loader');
  const machine = share('machine');
  const otherCpu = machine === null || serverCpu === null || loaderCpu === null ? null : Math.max(0, machine - serverCpu - loaderCpu);
  // The loader measures its own CPU too; the /proc figure, when there is one, is over the same window.
  return { serverCpu, otherCpu, ...(loaderCpu === null ? {} : { loaderCpu }) };
}

/**
 * Checks that GET /health answers 200, a JSON content type and {"status":"ok"}, and returns the
 * exact body so autocannon can count every later response that differs from it.
 */
function verify(url) {
  return new Promise((resolve, reject) => {
    const fail = (message) => reject(new Error(`GET ${url}: ${message}`));
    const req = request(url, { agent: false, headers: { connection: 'close' }, timeout: 5000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        text += chunk;
      });
      res.on('error', (error) => fail(error.message));
      res.on('end', () => {
        const type = res.headers['content-type'] ?? '';
        let parsed;
        try {
          parsed = JSON.parse(text);
        } catch {}
        if (res.statusCode !== 200) return fail(`status ${res.statusCode}, expected 200; body: ${text.slice(0, 200)}`);
        if (!/^application\/json\b/i.test(type)) return fail(`Content-Type "${type}", expected application/json`);
        const ok = parsed && typeof parsed === 'object' && Object.keys(parsed).length === 1 && parsed.status === 'ok';
        if (!ok) return fail(`body ${JSON.stringify(text.slice(0, 200))}, expected {"status":"ok"}`);
        resolve(text);
      });
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', (error) => fail(error.message));
    req.end();
  });
}

/** Starts the load generator process; its run(job) resolves with one autocannon summary. */
async function startLoader(core) {
  const handle = startChild([node, 'bench/http/load.mjs'], { core, cwd: root, stdin: 'pipe' });
  handle.child.stdin.on('error', () => {}); // a dead loader is reported through `exited` below
  const pending = new Map();
  let nextId = 1;
  createInterface({ input: handle.child.stdout }).on('line', (line) => {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    pending.get(message.id)?.(message);
  });
  handle.exited.then(({ code, signal }) => {
    const reason = `load generator exited (${signal ?? `code ${code}`})\n${handle.stderr.text}`;
    for (const settle of pending.values()) settle({ ok: false, fatal: true, error: reason });
  });
  return {
    pid: handle.child.pid,
    run(job) {
      const id = nextId++;
      const limitMs = (job.duration + 30) * 1000;
      return new Promise((resolve, reject) => {
        // A loader that is dead or stuck would spoil every later sample: such errors are fatal.
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(Object.assign(new Error(`load generator gave no result within ${limitMs / 1000} s`), { fatal: true }));
        }, limitMs);
        pending.set(id, (message) => {
          clearTimeout(timer);
          pending.delete(id);
          if (message.ok) resolve(message.result);
          else reject(Object.assign(new Error(`load generator: ${message.error}`), { fatal: message.fatal === true }));
        });
        handle.child.stdin.write(`${JSON.stringify({ id, ...job })}\n`);
      });
    },
    async stop() {
      handle.child.stdin.end();
      await stopChild(handle);
    },
  };
}

/** Sums the profilers' drop counts of a server's rounds (each round is its own process). */
function dropTotals(counts) {
  return counts.reduce((total, count) => ({ dropped: total.dropped + (count?.dropped ?? 0), rounds: total.rounds + 1, droppedRounds: total.droppedRounds + ((count?.dropped ?? 0) > 0 ? 1 : 0) }), { dropped: 0, rounds: 0, droppedRounds: 0 });
}

/** Reduces one server's samples to medians, spread and the problems seen. */
function summarise(state) {
  const levels = {};
  for (const [level, samples] of Object.entries(state.samples)) {
    if (samples.length === 0) continue;
    const rps = samples.map((sample) => sample.rps);
    const sum = (key) => samples.reduce((total, sample) => total + (sample[key] ?? 0), 0);
    const known = (key) => samples.map((sample) => sample[key]).filter((value) => value !== null && value !== undefined);
    const serverCpu = known('serverCpu');
    const otherCpu = known('otherCpu');
    const cpuPerRequest = known('cpuMicrosPerRequest');
    levels[level] = {
      rps: median(rps),
      p99: median(samples.map((sample) => sample.p99)),
      spread: spread(rps),
      non2xx: sum('non2xx'),
      errors: sum('errors'),
      timeouts: sum('timeouts'),
      mismatches: sum('mismatches'),
      profilesDropped: samples.some((sample) => sample.profilesDropped) ? dropTotals(samples.map((sample) => sample.profilesDropped)) : null,
      silent: samples.filter((sample) => sample.ok === 0).length,
      serverCpu: serverCpu.length > 0 ? median(serverCpu) : null,
      cpuMicrosPerRequest: cpuPerRequest.length > 0 ? median(cpuPerRequest) : null,
      loaderCpu: median(samples.map((sample) => sample.loaderCpu)),
      otherCpu: otherCpu.length > 0 ? Math.max(...otherCpu) : null,
      samples,
    };
  }
  return { name: state.name, label: state.label, command: state.command, error: state.error, levels };
}

function checkTargets(result) {
  const byName = new Map(result.servers.map((server) => [server.name, server]));
  const checks = [];
  for (const level of result.options.pipelining) {
    for (const target of targets) {
      const server = byName.get(target.server);
      const base = byName.get(target.base);
      if (!server || !base) {
        checks.push({ level, text: target.text, status: 'n/a', note: 'not measured: filtered out by --only' });
        continue;
      }
      const value = server.levels[level]?.rps;
      const baseValue = base.levels[level]?.rps;
      if (server.error || base.error || value === undefined || baseValue === undefined) {
        const broken = server.error || value === undefined ? server : base;
        checks.push({ level, text: target.text, status: 'FAIL', note: `${broken.label} FAILED, see above` });
        continue;
      }
      const ratio = value / baseValue;
      const cpu = server.levels[level].cpuMicrosPerRequest;
      const baseCpu = base.levels[level].cpuMicrosPerRequest;
      const problems = problemsOf(server.levels[level]).map((problem) => `${server.label} had ${problem}`);
      const doubtful = [server, base].filter((row) => doubtsOf(row.levels[level]));
      if (doubtful.length > 0) {
        problems.push(`unreliable: ${doubtful.map((row) => row.label).join(' and ')} starved or unsaturated, see flags`);
      }
      checks.push({
        level,
        text: target.text,
        status: ratio >= target.min ? 'PASS' : 'FAIL',
        ratio,
        // The same comparison by server CPU per request, which does not depend on the loader.
        cpuRatio: cpu && baseCpu ? baseCpu / cpu : undefined,
        note: problems.length > 0 ? problems.join('; ') : undefined,
        ...(target.p99 ? { p99: server.levels[level].p99, baseP99: base.levels[level].p99, label: server.label, baseLabel: base.label } : {}),
      });
    }
  }
  return checks;
}

/** Whether a row's req/s may not be the server's own limit: it was starved or not saturated. */
function doubtsOf(level) {
  return (level.serverCpu !== null && level.serverCpu < saturated) || (level.otherCpu !== null && level.otherCpu > busy);
}

function problemsOf(level) {
  const problems = [];
  for (const key of ['non2xx', 'errors', 'timeouts', 'mismatches']) {
    if (level[key] > 0) problems.push(`${level[key]} ${key === 'non2xx' ? 'non-2xx' : key}`);
  }
  if (level.silent > 0) problems.push(`${level.silent} round(s) with no 2xx answer at all`);
  return problems;
}

/** Renders a result of run() as the tables and target summary printed at the end of the bench. */
export function format(result) {
  const { options } = result;
  const out = [];
  const base = result.servers.find((server) => server.name === 'node-http');
  const fastify = result.servers.find((server) => server.name === 'fastify');
  const notes = new Set();
  for (const level of options.pipelining) {
    out.push(
      `${result.request}, ${options.connections} connections, pipelining ${level} ` +
        `(median of ${options.rounds} x ${options.duration} s)`,
    );
    const rows = result.servers.map((server) => {
      const figures = server.levels[level];
      if (server.error || !figures) return [server.label, 'FAILED', '', '', '', '', '', '! see below'];
      const flags = problemsOf(figures);
      if (figures.serverCpu !== null && figures.serverCpu < saturated) {
        flags.push(`server CPU ${Math.round(figures.serverCpu * 100)}%`);
        notes.add('server CPU below 90%: the server was not saturated; it was starved by other load or held back by the load generator.');
      }
      if (figures.otherCpu !== null && figures.otherCpu > busy) {
        flags.push(`other load ${Math.round(figures.otherCpu * 100)}%`);
        notes.add('other load: in at least one round, other processes (or the hypervisor) used that share of a CPU during the measurement; rerun on a quiet machine.');
      }
      if (figures.profilesDropped && figures.profilesDropped.dropped > 0) {
        flags.push(`profiles dropped: ${figures.profilesDropped.dropped} in ${figures.profilesDropped.droppedRounds} of ${figures.profilesDropped.rounds} rounds`);
        notes.add('profiles dropped: the debug server\'s profiler could not save every request (its storage fell behind); its req/s then does not include the cost of saving those.');
      }
      if (figures.spread > 0.1) notes.add('spread is (max - min) / median of req/s over the rounds; above 10% the ratios are noisy.');
      return [
        server.label,
        String(Math.round(figures.rps)),
        String(figures.p99),
        options.rounds > 1 ? `${Math.round(figures.spread * 100)}%` : '-',
        figures.cpuMicrosPerRequest === null ? '-' : figures.cpuMicrosPerRequest.toFixed(1),
        formatRatio(figures.rps, base?.levels[level]?.rps),
        formatRatio(figures.rps, fastify?.levels[level]?.rps),
        flags.length > 0 ? `! ${flags.join(', ')}` : '',
      ];
    });
    out.push(formatTable(['server', 'req/s', 'p99 ms', 'spread', 'CPU us/req', 'vs node:http', 'vs fastify', 'flags'], rows), '');
  }

  const failed = result.servers.filter((server) => server.error);
  for (const server of failed) out.push(`FAILED ${server.label} (${server.command}):\n${indentBlock(server.error)}`, '');
  out.push('CPU us/req: server CPU time per answered request (lower is better); unlike req/s it does not depend on the load generator keeping up.');
  for (const note of notes) out.push(`Note: ${note}`);
  if (result.backgroundLoad !== null && result.backgroundLoad > busy) {
    out.push(`WARNING: before the run, other processes used ${Math.round(result.backgroundLoad * 100)}% of a CPU.`);
  }
  if (result.pinning.unpinned) out.push(`WARNING: unpinned run (${result.pinning.unpinned}); figures are less reliable.`);
  else out.push(`Servers pinned to CPU ${result.pinning.server}, load generator to CPU ${result.pinning.loader}.`);
  out.push('');

  out.push('Targets (req/s, medians):');
  for (const check of result.targets) {
    const detail = [
      check.ratio === undefined ? null : `${check.ratio.toFixed(2)}x`,
      check.cpuRatio === undefined ? null : `by CPU/req ${check.cpuRatio.toFixed(2)}x`,
      check.p99 === undefined ? null : `p99 ${check.p99} ms ${check.label}, ${check.baseP99} ms ${check.baseLabel}`,
      check.note,
    ].filter(Boolean).join('; ');
    out.push(`  pipelining ${String(check.level).padEnd(2)}  ${check.text}: ${check.status} (${detail})`);
  }
  return out.join('\n');
}

function indentBlock(text) {
  return String(text).split('\n').map((line) => `  ${line}`).join('\n');
}
