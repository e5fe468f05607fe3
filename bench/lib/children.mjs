// Child processes for the benches: pinned to a core with taskset when it works, always killed
// when the bench ends (normally, on error, on Ctrl-C), and never waited on without a deadline.
import { spawn, spawnSync } from 'node:child_process';

const live = new Set();
let pinning;

/** Parses a CPU list such as "0-3,6" into [0, 1, 2, 3, 6]. */
function parseCpuList(list) {
  const cpus = [];
  for (const part of list.trim().split(',')) {
    const [from, to = from] = part.split('-').map(Number);
    for (let cpu = from; cpu <= to; cpu++) cpus.push(cpu);
  }
  return cpus;
}

/**
 * Finds two CPUs this process may use and checks that taskset can pin to them; the answer is
 * { cores: [server, loader] } or { cores: null, reason } to run unpinned.
 */
export function detectPinning() {
  if (pinning) return pinning;
  const probe = spawnSync('taskset', ['-cp', String(process.pid)], { encoding: 'utf8', timeout: 5000 });
  if (probe.error || probe.status !== 0) {
    pinning = { cores: null, reason: `taskset is not usable (${probe.error?.code ?? probe.stderr.trim()})` };
    return pinning;
  }
  const cpus = parseCpuList(probe.stdout.split(':').pop());
  if (cpus.length < 2) {
    pinning = { cores: null, reason: `only ${cpus.length} CPU available (${cpus.join(',')}), need 2` };
    return pinning;
  }
  const cores = [cpus[0], cpus[1]];
  const check = spawnSync('taskset', ['-c', String(cores[1]), process.execPath, '-e', ''], { timeout: 10000 });
  pinning = check.status === 0
    ? { cores }
    : { cores: null, reason: `taskset -c ${cores[1]} failed (${check.stderr?.toString().trim() || check.error?.code})` };
  return pinning;
}

/** Keeps the last `limit` characters written to a stream, for error messages. */
function tail(stream, limit = 4000) {
  const buffer = { text: '' };
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    buffer.text = (buffer.text + chunk).slice(-limit);
  });
  return buffer;
}

/**
 * Starts `command` (an argv array) on `core` (or unpinned when core is null). stdout and stderr
 * are drained continuously so a chatty child never blocks on a full pipe.
 */
export function startChild(command, { core = null, cwd, env = process.env, stdin = 'ignore' } = {}) {
  const argv = core === null ? command : ['taskset', '-c', String(core), ...command];
  const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: [stdin, 'pipe', 'pipe'] });
  live.add(child);
  // close, not exit: it comes once stdout and stderr are drained too, so their last lines are in.
  const exited = new Promise((resolve) => {
    child.once('close', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
    child.once('error', (error) => {
      live.delete(child);
      resolve({ code: null, signal: null, error });
    });
  });
  return { child, exited, stdout: tail(child.stdout), stderr: tail(child.stderr), command: argv.join(' ') };
}

/** Resolves with the first match of `pattern` (what `description` says) in the child's stdout; rejects on exit or timeout. */
export function waitForLine(handle, pattern, description, timeoutMs) {
  const { child } = handle;
  return new Promise((resolve, reject) => {
    let seen = '';
    let settled = false;
    const settle = (error, match) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      if (error) reject(error);
      else resolve(match);
    };
    const onData = (chunk) => {
      seen = (seen + chunk).slice(-8000);
      const match = pattern.exec(seen);
      if (match) settle(null, match);
    };
    const output = () => indent(`${seen}\n${handle.stderr.text}`);
    child.stdout.on('data', onData);
    handle.exited.then(({ code, signal, error }) => {
      const why = error ? error.message : `exited (${signal ?? `code ${code}`})`;
      settle(new Error(`\`${handle.command}\` ${why} before printing "${description}"\n${output()}`));
    });
    const timer = setTimeout(() => {
      settle(new Error(`\`${handle.command}\` did not print "${description}" within ${timeoutMs / 1000} s\n${output()}`));
    }, timeoutMs);
  });
}

function indent(text) {
  const trimmed = text.trim();
  return trimmed === '' ? '  (no output)' : trimmed.split('\n').slice(-20).map((line) => `  | ${line}`).join('\n');
}

/** Stops a child: SIGTERM, then SIGKILL if it is still alive after `graceMs`. */
export async function stopChild(handle, graceMs = 2000) {
  if (handle.child.exitCode !== null || handle.child.signalCode !== null) return;
  handle.child.kill('SIGTERM');
  const timer = setTimeout(() => handle.child.kill('SIGKILL'), graceMs);
  await handle.exited;
  clearTimeout(timer);
}

/** Kills every child still running; synchronous so it can run in an 'exit' handler. */
export function killAll() {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}

/** Makes sure no child outlives the bench, whatever way it ends. */
export function killChildrenOnExit() {
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping children\n`);
      killAll();
      process.exit(128 + ({ SIGINT: 2, SIGTERM: 15, SIGHUP: 1 })[signal]);
    });
  }
}
