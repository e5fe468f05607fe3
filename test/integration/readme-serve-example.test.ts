// The README's startServers example is what an embedder copies to serve as bin/serve does: it is
// compiled against the built package and run as written, in a child process, and must serve http
// and https on the ports it picked, exit 0 once SIGTERM has let it close (SIGTERM again too), and at once on SIGINT after it.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent, request } from 'undici';
import { loadOrCreateDevCertificate } from '../../lib/server/tls-certificate.js';
import { exitOf } from './serve-process.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** The README's standalone ```ts example that calls startServers, or null. */
function serveExample(): string | null {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  for (const [, code] of readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)) {
    if (code!.startsWith('import ') && code!.includes('startServers(')) return code!;
  }
  return null;
}

/** Resolves with the `listening on` URLs once there are two, or rejects when the child exits first or 20 s pass. */
function listeningUrls(child: ChildProcess, output: { stderr: string }): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`the example did not listen within 20 s: ${stdout} ${output.stderr}`)), 20_000);
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const urls = [...stdout.matchAll(/^listening on (\S+)$/gm)].map((found) => found[1]!);
      if (urls.length === 2) {
        clearTimeout(timer);
        resolve(urls);
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
let agent: Agent;

test.before(async () => {
  const code = serveExample();
  assert.ok(code !== null, 'the README has no example that calls startServers');
  // Inside the package (under var/, ignored by git), so that `http-kernel` resolves to itself.
  dir = join(root, 'var', 'readme-serve-example');
  cwd = mkdtempSync(join(tmpdir(), 'http-kernel-readme-serve-'));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // Run where the certificate made here is: the example finds it in its var/tls/ and serves it.
  agent = new Agent({ connect: { ca: (await loadOrCreateDevCertificate(join(cwd, 'var', 'tls'))).cert } });
  writeFileSync(join(dir, 'example.ts'), `${code}\nexport {};\n`);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2023'], types: ['node'], skipLibCheck: true },
    files: ['example.ts'],
  }));
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8', stdio: 'pipe' });
});

test.after(async () => {
  await agent.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(cwd, { recursive: true, force: true });
});

/** Runs the compiled example, `body` once it listens; it is killed if still running after. */
async function withExample(body: (child: ChildProcess, urls: string[], output: { stderr: string }) => Promise<void>): Promise<void> {
  const child = spawn(process.execPath, [join(dir, 'example.js')], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const output = { stderr: '' };
    child.stderr!.on('data', (chunk) => (output.stderr += chunk));
    await body(child, await listeningUrls(child, output), output);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

test('the README startServers example serves http and https on free ports and exits 0 on SIGTERM', async () => {
  await withExample(async (child, urls, output) => {
    assert.match(urls[0]!, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(urls[1]!, /^https:\/\/127\.0\.0\.1:\d+$/);
    for (const url of urls) {
      const response = await request(`${url}/nope`, { dispatcher: agent, headersTimeout: 10_000, bodyTimeout: 10_000 });
      await response.body.text();
      assert.is(response.statusCode, 404, url);
    }
    const exited = exitOf(child);
    child.kill('SIGTERM');
    assert.is(await exited, 0, `exit code after SIGTERM: ${output.stderr}`);
  });
});

test('a second signal while the README example waits for a request in flight exits at once with 1, as bin/serve does', async () => {
  await withExample(async (child, urls) => {
    // A request whose head is still arriving holds the shutdown for up to 10 s (headersTimeout).
    const { socket } = await headStillArriving(urls[0]!);
    try {
      const exited = exitOf(child);
      child.kill('SIGTERM');
      await sleep(300);
      child.kill('SIGINT');
      assert.is(await exited, 1, 'Ctrl-C after SIGTERM exits without waiting');
    } finally {
      socket.destroy();
    }
  });
});

test('the first signal again (SIGTERM twice, as a supervisor may repeat it) lets the README example finish the request in flight and exit 0, as bin/serve does', async () => {
  await withExample(async (child, urls) => {
    const { socket, answer } = await headStillArriving(urls[0]!);
    try {
      const exited = exitOf(child);
      child.kill('SIGTERM');
      await sleep(300);
      child.kill('SIGTERM');
      await sleep(300);
      socket.write('\r\n');
      assert.is(await exited, 0, 'SIGTERM again does not cut the drain');
      assert.match(answer(), /^HTTP\/1\.1 404 /);
    } finally {
      socket.destroy();
    }
  });
});

test.run();

/** A request to the example whose head is still arriving: its socket and what came back so far. */
async function headStillArriving(url: string): Promise<{ socket: Socket; answer: () => string }> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk));
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write('GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  return { socket, answer: () => answer };
}
