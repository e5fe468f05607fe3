// The README's node:cluster example is what an embedder copies to run the kernel in several processes
// on one port: it is compiled against the built package and run as written, in a child process (a
// primary and its workers), over real sockets. Its workers must share the ports port 0 picked and one
// profiler directory, and SIGTERM to the primary must let a request in flight finish and its profile be
// saved before every process exits 0 (node's default ends the workers at once with their primary).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { connect } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FileStorage } from '../../lib/profiler/index.js';
import { loadOrCreateDevCertificate } from '../../lib/server/tls-certificate.js';
import { exitOf } from './serve-process.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
/** How many workers the example forks. */
const WORKERS = Math.min(availableParallelism(), 4);

/** The README's standalone ```ts example that forks cluster workers, or null. */
function clusterExample(): string | null {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  for (const [, code] of readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)) {
    if (code!.startsWith('import ') && code!.includes('cluster.fork(')) return code!;
  }
  return null;
}

interface Listening {
  /** Each worker's pid and the URLs it printed. */
  workers: Map<number, string[]>;
}

/** Resolves once every worker has printed both its `listening on` lines, or rejects when the primary exits first or 30 s pass. */
function listening(child: ChildProcess, output: { stderr: string }): Promise<Listening> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`the example's workers did not listen within 30 s: ${stdout} ${output.stderr}`)), 30_000);
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const workers = new Map<number, string[]>();
      for (const [, url, pid] of stdout.matchAll(/^listening on (\S+) \(worker (\d+)\)$/gm)) workers.set(Number(pid), [...(workers.get(Number(pid)) ?? []), url!]);
      if (workers.size === WORKERS && [...workers.values()].every((urls) => urls.length === 2)) {
        clearTimeout(timer);
        resolve({ workers });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the example exited early with ${code}: ${output.stderr}`));
    });
  });
}

let dir = '';
let cwd = '';
let ca = '';

test.before(async () => {
  const code = clusterExample();
  assert.ok(code !== null, 'the README has no example that forks cluster workers');
  // Inside the package (under var/, ignored by git), so that `http-kernel` resolves to itself.
  dir = join(root, 'var', 'readme-cluster-example');
  cwd = mkdtempSync(join(tmpdir(), 'http-kernel-readme-cluster-'));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  ca = (await loadOrCreateDevCertificate(join(cwd, 'var', 'tls'))).cert;
  writeFileSync(join(dir, 'example.ts'), `${code}\nexport {};\n`);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2023'], types: ['node'], skipLibCheck: true },
    files: ['example.ts'],
  }));
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8', stdio: 'pipe' });
});

test.after(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(cwd, { recursive: true, force: true });
});

/** Whether a process of that pid is still there. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids of the children of `pid`, as Linux lists them. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A GET on a connection of its own, so that the cluster hands each to the next worker. */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const options = { agent: false as const, headers, ca, timeout: 10_000 };
    const request = (url.startsWith('https:') ? https : http).get(url, options, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`no answer from ${url} within 10 s`)));
    request.on('error', reject);
  });
}

/** Runs the compiled example, `body` once every worker listens; the primary and the workers are killed if still running after. */
async function withExample(body: (child: ChildProcess, listened: Listening, output: { stderr: string }) => Promise<void>): Promise<void> {
  const child = spawn(process.execPath, [join(dir, 'example.js')], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let workers: number[] = [];
  try {
    const output = { stderr: '' };
    child.stderr!.on('data', (chunk) => (output.stderr += chunk));
    const listened = await listening(child, output);
    workers = [...listened.workers.keys()];
    await body(child, listened, output);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const pid of workers) if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
}

test('the README cluster example: every worker listens on the ports port 0 picked, with one profiler directory for all', async () => {
  await withExample(async (child, { workers }, output) => {
    const [first, ...others] = [...workers.values()];
    assert.match(first![0]!, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(first![1]!, /^https:\/\/127\.0\.0\.1:\d+$/);
    for (const urls of others) assert.equal(urls, first, 'each worker has the same URLs');
    const tokens: string[] = [];
    for (let i = 0; i < 60; i++) {
      const response = await get(`${first![i % 2]}/health`);
      assert.is(response.status, 200);
      tokens.push(String(response.headers['x-debug-token']));
    }
    assert.is(new Set(tokens).size, tokens.length, 'tokens are unique across the workers');
    // Each profile opens whichever worker answers the page, the last one too, asked for right after its response.
    for (const token of tokens.reverse()) assert.is((await get(`${first![0]}/_profiler/${token}`, { accept: 'application/json' })).status, 200, token);
    const search = JSON.parse((await get(`${first![0]}/_profiler/search?limit=1000`, { accept: 'application/json' })).body) as { results: Array<{ token: string }> };
    const listed = new Set(search.results.map((summary) => summary.token));
    assert.ok(tokens.every((token) => listed.has(token)), 'the search lists the profiles of every worker');
    const exited = exitOf(child);
    child.kill('SIGTERM');
    assert.is(await exited, 0, `the primary's exit code after SIGTERM: ${output.stderr}`);
    for (const pid of workers.keys()) assert.not.ok(alive(pid), `worker ${pid} is gone`);
  });
});

test('SIGTERM to the primary of the README cluster example lets a request in flight finish, saves its profile, and every process exits 0', async () => {
  await withExample(async (child, { workers }, output) => {
    const url = new URL([...workers.values()][0]![0]!);
    // A request whose head is still arriving: a worker cut at once by its primary's end would never answer it.
    const socket = connect(Number(url.port), '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    try {
      const exited = exitOf(child);
      child.kill('SIGTERM');
      await sleep(300);
      socket.write('\r\n');
      const code = await exited;
      assert.match(answer, /^HTTP\/1\.1 200 /, 'the request in flight was answered');
      assert.is(code, 0, `the primary's exit code after SIGTERM: ${output.stderr}`);
      for (const pid of workers.keys()) assert.not.ok(alive(pid), `worker ${pid} is gone`);
      const token = /^x-debug-token: (\w+)\r$/im.exec(answer)?.[1];
      assert.ok(token !== undefined, answer);
      const storage = new FileStorage({ dir: join(cwd, 'var', 'profiler') });
      try {
        assert.ok((await storage.read(token!)) !== null, 'its profile was saved before the worker exited');
      } finally {
        await storage.close();
      }
    } finally {
      socket.destroy();
    }
  });
});

test('SIGTERM to the primary while its workers are still loading their modules (no listener for the word yet): each stops all the same, and every process exits 0', async () => {
  // Where /proc does not list a process's children and caught signals, the moment cannot be told.
  if (!existsSync(`/proc/${process.pid}/task/${process.pid}/children`)) return;
  const child = spawn(process.execPath, [join(dir, 'example.js')], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  child.stdout!.resume();
  let workers: number[] = [];
  try {
    const deadline = Date.now() + 30_000;
    while ((workers = childrenOf(child.pid!)).length < WORKERS) {
      assert.ok(child.exitCode === null && Date.now() < deadline, `the primary did not fork its workers: ${stderr}`);
      await sleep(2);
    }
    // Its handlers are in place a moment after its last fork (the same synchronous turn), while its workers
    // load the modules for a tenth of a second or more, as it did before forking.
    await sleep(20);
    const exited = exitOf(child);
    child.kill('SIGTERM');
    assert.is(await exited, 0, `the primary's exit code after SIGTERM (null: still running 15 s later, killed): ${stderr}`);
    for (const pid of workers) assert.not.ok(alive(pid), `worker ${pid} is gone`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const pid of workers) if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
});

test('SIGTERM to the primary again and again while its workers stop (a supervisor repeating it): the primary does not fail on a worker gone, and every process exits 0', async () => {
  await withExample(async (child, { workers }, output) => {
    const exited = exitOf(child);
    // Until every worker is gone, the primary's only: one after that could reach it in its exit, past its handler.
    for (let tries = 0; tries < 5_000 && [...workers.keys()].some(alive); tries++) {
      child.kill('SIGTERM');
      await sleep(2);
    }
    assert.is(await exited, 0, `the primary's exit code after repeated SIGTERMs: ${output.stderr}`);
    for (const pid of workers.keys()) assert.not.ok(alive(pid), `worker ${pid} is gone`);
  });
});

test.run();
