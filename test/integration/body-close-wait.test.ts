// A stream body whose clean-up hangs (its `close` never comes) after the client left: the request
// still terminates, once `bodyCloseWaitMs` has passed, and a process that awaits `settled()` on its
// way out (app.close() does) stays alive until then instead of exiting with the profiles unsaved.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { request as undiciRequest, type Agent } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Response, type TerminateEvent } from '../../kernel/index.js';
import { createKernel, type KernelApp } from '../../lib/app/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { createRequestListener, type KernelRequestListener } from '../../lib/server/index.js';
import { SCHEMES, serveListener, type ListenerServer } from './harness.js';

const WAIT_MS = 300;

/** A body that sends forever and whose clean-up never ends: `_destroy` never calls back, so no `close`. */
function hangingBody(): Readable {
  return new Readable({
    read() {
      this.push('.'.repeat(16 * 1024));
    },
    destroy() {
      // The clean-up hangs (a connection pool that never answers, say).
    },
  });
}

/** A body that sends all of itself and ends, and whose clean-up then never ends. */
function endedHangingBody(): Readable {
  return new Readable({
    read() {
      this.push('all of it');
      this.push(null);
    },
    destroy() {
      // The clean-up hangs.
    },
  });
}

function routes(): RouteCollection {
  return new RouteCollection()
    .add('hang', new Route('/hang', { defaults: { _controller: () => new Response(hangingBody(), 200, { 'content-type': 'text/plain' }) } }))
    .add('ended', new Route('/ended', { defaults: { _controller: () => new Response(endedHangingBody(), 200, { 'content-type': 'text/plain' }) } }));
}

/** Reads the first chunk of /hang, then leaves. */
async function readAndLeave(url: string, agent: Agent): Promise<void> {
  const response = await undiciRequest(`${url}/hang`, { dispatcher: agent });
  assert.is(response.statusCode, 200);
  for await (const _chunk of response.body) break;
}

const test = suite('a stream body whose clean-up hangs');
/** Where the child processes' scripts are written. */
const scriptDir = mkdtempSync(join(tmpdir(), 'http-kernel-close-wait-'));
const terminated: number[] = [];
let app: KernelApp;
let listener: KernelRequestListener;
let server: ListenerServer;

test.before(async () => {
  const recorder = {
    getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }),
    onTerminate: (_event: TerminateEvent): void => void terminated.push(Date.now()),
  };
  app = createKernel({ debug: false, stderrLogLevel: false, routes: routes(), subscribers: [recorder] });
  listener = createRequestListener(app.kernel, { bodyCloseWaitMs: WAIT_MS });
  server = await serveListener(listener);
});

test.after(async () => {
  await server.close();
  await app.close();
  rmSync(scriptDir, { recursive: true, force: true });
});

for (const scheme of SCHEMES) {
  test(`over ${scheme}: the request terminates once the wait is over, and settled() resolves after it`, async () => {
    const before = terminated.length;
    const left = Date.now();
    await readAndLeave(server.urls[scheme], server.agent);
    for (let k = 0; k < 250 && terminated.length === before; k++) await sleep(20);
    assert.is(terminated.length, before + 1, 'terminated once');
    // Not at once: the wait for the clean-up came first (less a little for the clocks' grain).
    assert.ok(terminated[before]! - left >= WAIT_MS - 50, `terminated ${terminated[before]! - left} ms after the client left`);
    await listener.settled();
  });
}

for (const scheme of SCHEMES) {
  test(`over ${scheme}: a body sent whole whose clean-up hangs terminates once the wait is over`, async () => {
    const before = terminated.length;
    const response = await undiciRequest(`${server.urls[scheme]}/ended`, { dispatcher: server.agent });
    assert.is(await response.body.text(), 'all of it');
    const sent = Date.now();
    for (let k = 0; k < 100 && terminated.length === before; k++) await sleep(20);
    assert.is(terminated.length, before + 1, 'terminated once');
    assert.ok(terminated[before]! - sent >= WAIT_MS - 50, `terminated ${terminated[before]! - sent} ms after the body was sent`);
    await listener.settled();
  });
}

test('bodyCloseWaitMs must be a whole number of milliseconds', () => {
  for (const bad of [-1, 1.5, Number.NaN, 2 ** 31]) {
    assert.throws(() => createRequestListener(app.kernel, { bodyCloseWaitMs: bad }), (error: Error) => error instanceof RangeError && error.message.startsWith('bodyCloseWaitMs is a whole number'));
  }
});

/**
 * Runs `steps` in a child process after a server with /hang (a body whose clean-up never ends) and
 * /slow (one whose clean-up takes 100 ms) has started (`leave(path)` reads a chunk, then leaves).
 * Resolves with its stdout (each line prefixed with the milliseconds since start), exit code and stderr.
 */
async function runChild(waitMs: number, steps: string): Promise<{ lines: Array<{ at: number; text: string }>; code: number | null; exitAt: number; stderr: string }> {
  const compiled = (path: string): string => JSON.stringify(new URL(path, import.meta.url).href);
  const script = join(scriptDir, `child-${Math.random().toString(16).slice(2)}.mjs`);
  writeFileSync(
    script,
    `import { createServer, get } from 'node:http';
import { Readable } from 'node:stream';
import { Response } from ${compiled('../../kernel/index.js')};
import { createKernel } from ${compiled('../../lib/app/index.js')};
import { Route, RouteCollection } from ${compiled('../../lib/routing/index.js')};
import { createRequestListener } from ${compiled('../../lib/server/index.js')};
const hung = () => new Readable({ read() { this.push('.'.repeat(16384)); }, destroy() {} });
const slow = () => new Readable({ read() { this.push('.'.repeat(16384)); }, destroy(error, callback) { setTimeout(callback, 100); } });
const routes = new RouteCollection()
  .add('hang', new Route('/hang', { defaults: { _controller: () => new Response(hung(), 200) } }))
  .add('slow', new Route('/slow', { defaults: { _controller: () => new Response(slow(), 200) } }));
const app = createKernel({ debug: false, stderrLogLevel: false, routes });
const listener = createRequestListener(app.kernel, { bodyCloseWaitMs: ${waitMs} });
const server = createServer(listener);
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address();
const leave = (path) => new Promise((resolve, reject) => {
  get({ port, host: '127.0.0.1', path }, (res) => res.once('data', () => { res.destroy(); setTimeout(resolve, 50); })).on('error', reject);
});
${steps}
`,
  );
  const started = Date.now();
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Array<{ at: number; text: string }> = [];
  let stderr = '';
  let carry = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (carry + chunk.toString()).split('\n');
    carry = parts.pop()!;
    for (const text of parts) lines.push({ at: Date.now() - started, text });
  });
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(killer);
  return { lines, code, exitAt: Date.now() - started, stderr };
}

test('a process that awaits settled() on its way out stays alive until the hung body is given up', async () => {
  // Node ends a process whose event loop is empty; with an unsettled top-level await, with code 13.
  const { lines, code, stderr } = await runChild(
    WAIT_MS,
    `await leave('/hang');
server.close();
server.closeAllConnections();
await listener.settled();
process.stdout.write('settled\\n');`,
  );
  assert.equal(lines.map((line) => line.text), ['settled'], stderr);
  assert.is(code, 0, stderr);
});

test('once settled() has resolved, a later hung clean-up no longer holds the process', async () => {
  // The first body closes 100 ms after its client left, which settles the wait; the second never
  // closes, and its wait (10 s) must not keep a process that has nothing else to do.
  const { lines, code, exitAt, stderr } = await runChild(
    10_000,
    `await leave('/slow');
await listener.settled();
await leave('/hang');
server.close();
server.closeAllConnections();
process.stdout.write('done\\n');`,
  );
  assert.equal(lines.map((line) => line.text), ['done'], stderr);
  assert.is(code, 0, stderr);
  assert.ok(exitAt - lines[0]!.at < 5_000, `the process lived ${exitAt - lines[0]!.at} ms after its last step`);
});

test.run();
