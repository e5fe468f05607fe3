import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, closeSync, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { join, sep } from 'node:path';
import { generate } from 'selfsigned';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent, request } from 'undici';
import { exitOf, isRunning, serveBin, serveEnv, serveWorkDir, spawnServe, startServe, stopServes } from './serve-process.js';

const test = suite('node bin/serve');
test.after.each(stopServes);

/** Sends `signal` and checks the server drains and exits 0. */
async function stopsCleanly(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const exited = exitOf(child);
  child.kill(signal);
  assert.is(await exited, 0, `exit code after ${signal}`);
}

test('serves http and https, prints one line per listener, exits 0 on SIGTERM', async () => {
  const cwd = serveWorkDir();
  const { child, urls } = await startServe(['--port', '0', '--https-port', '0'], cwd);
  assert.is(urls.length, 2);
  assert.match(urls[0]!, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.match(urls[1]!, /^https:\/\/127\.0\.0\.1:\d+$/);
  const agent = new Agent({ connect: { rejectUnauthorized: false } });
  for (const url of urls) {
    const response = await request(`${url}/health`, { dispatcher: agent });
    assert.is(response.statusCode, 200);
    assert.equal(await response.body.json(), { status: 'ok' });
    const missing = await request(`${url}/robots.txt`, { dispatcher: agent });
    assert.is(missing.statusCode, 404);
    assert.match(await missing.body.text(), /Stack Trace/);
  }
  await agent.close();
  await stopsCleanly(child);
});

test('without --tls-cert, a self-signed certificate for localhost and 127.0.0.1 is made under var/tls/ and served over https; the next start serves it again', async () => {
  const cwd = serveWorkDir();
  const certFile = join(cwd, 'var', 'tls', 'dev-cert.pem');
  const fingerprints: string[] = [];
  for (const run of ['first', 'second']) {
    const { child, urls, stderr } = await startServe(['--port', '0', '--https-port', '0'], cwd);
    assert.ok(existsSync(certFile), `${run} start: the certificate is cached in var/tls/`);
    const cached = readFileSync(certFile, 'utf8');
    assert.match(new X509Certificate(cached).subjectAltName ?? '', /DNS:localhost.*IP Address:127\.0\.0\.1/);
    // A client that trusts the cached certificate alone checks it against 127.0.0.1 and gets its answer.
    const agent = new Agent({ connect: { ca: cached } });
    const response = await request(`${urls[1]}/health`, { dispatcher: agent });
    assert.is(response.statusCode, 200);
    await response.body.dump();
    await agent.close();
    fingerprints.push(new X509Certificate(cached).fingerprint256);
    assert.is(stderr().includes('created a self-signed development certificate'), run === 'first', `${run} start: made only once`);
    await stopsCleanly(child);
  }
  assert.is(fingerprints[0], fingerprints[1], 'the same certificate both times');
});

test('a cached development key open to group or others is made 0600 at start, with one line on stderr saying so', async () => {
  const cwd = serveWorkDir();
  const keyFile = join(cwd, 'var', 'tls', 'dev-key.pem');
  const first = await startServe(['--port', '0', '--https-port', '0', '--no-profiler'], cwd);
  await stopsCleanly(first.child);
  chmodSync(keyFile, 0o644);
  const { child, stderr } = await startServe(['--port', '0', '--https-port', '0', '--no-profiler'], cwd);
  assert.is(statSync(keyFile).mode & 0o777, 0o600);
  await untilSaid(stderr, 'dev-key.pem');
  const lines = stderr().split('\n').filter((line) => line.includes('dev-key.pem'));
  assert.equal(lines, ['serve: the development key var/tls/dev-key.pem was open to group or others (mode 0644): made it 0600']);
  await stopsCleanly(child);
});

test('source maps are on before any module loads: the stack traces of the ERROR lines on stderr name the .ts sources', async () => {
  const cwd = serveWorkDir();
  const { child, urls, stderr } = await startServe(['--port', '0', '--https-port', 'off', '--no-profiler'], cwd);
  const missing = await request(`${urls[0]}/robots.txt`);
  assert.is(missing.statusCode, 404);
  await missing.body.dump();
  await stopsCleanly(child);
  const line = stderr().split('\n').find((text) => text.includes('"level":"error"'));
  assert.ok(line, stderr());
  const stack = (JSON.parse(line) as { context: { exception: { stack: string } } }).context.exception.stack;
  // The kernel's modules load with the CLI's, before its main() runs.
  assert.match(stack, /kernel[\\/]http-kernel\.ts:\d+/);
  assert.not.match(stack, /dist[\\/](kernel|lib)[\\/]/);
});

test('the first request after the listening lines has its whole stack trace: the profiler\'s tokens are ready before the server listens', async () => {
  const cwd = serveWorkDir();
  const { child, urls } = await startServe(['--port', '0', '--https-port', 'off'], cwd);
  // At once: with no token waiting, the listeners after the profiler's ran asynchronously, and the stack stopped at the dispatcher.
  const missing = await request(`${urls[0]}/robots.txt`, { headers: { accept: 'application/json' } });
  assert.is(missing.statusCode, 404);
  const problem = (await missing.body.json()) as { trace: Array<{ function?: string | null }> };
  const functions = problem.trace.map((frame) => frame.function ?? '');
  assert.ok(functions.some((name) => name.includes('HttpKernel')), `the kernel's frames are in the trace: ${functions.join(', ')}`);
  await stopsCleanly(child);
});

test('--profiler-allow, --trusted-proxies and --env reach the app', async () => {
  const cwd = serveWorkDir();
  const args = ['--port', '0', '--https-port', 'off', '--env', 'prod', '--debug', '--profiler-allow', '10.0.0.0/8', '--trusted-proxies', 'loopback'];
  const { child, urls } = await startServe(args, cwd);
  // Debug mode, but this loopback client is outside --profiler-allow: no profiler, no debug page.
  const profiler = await request(`${urls[0]}/_profiler/`);
  assert.is(profiler.statusCode, 404);
  assert.not.match(await profiler.body.text(), 'results found');
  const missing = await request(`${urls[0]}/robots.txt`);
  assert.is(missing.statusCode, 404);
  assert.not.match(await missing.body.text(), 'Stack Trace');
  assert.is(missing.headers['x-debug-exception'], undefined);
  // A trusted proxy's X-Forwarded-Proto and -Host make the redirect's URL.
  const forwarded = await request(`${urls[0]}/health/`, { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'shop.example' } });
  assert.is(forwarded.statusCode, 301);
  assert.is(forwarded.headers.location, 'https://shop.example/health');
  await forwarded.body.dump();
  // The prod environment: no X-Robots-Tag.
  const health = await request(`${urls[0]}/health`);
  assert.is(health.statusCode, 200);
  assert.is(health.headers['x-robots-tag'], undefined);
  await health.body.dump();
  await stopsCleanly(child);
});

test('a second SIGINT (Ctrl-C again) during a graceful shutdown exits at once with 1', async () => {
  const cwd = serveWorkDir();
  const { child, urls, stderr } = await startServe(['--port', '0', '--https-port', 'off', '--no-profiler'], cwd);
  const port = Number(new URL(urls[0]!).port);
  // A request whose body never comes in full: answered (405), but its connection is not idle, so the shutdown waits for it.
  const socket = connect(port, '127.0.0.1');
  const answered = new Promise<string>((resolve) => {
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk;
      if (text.includes('\r\n\r\n')) resolve(text);
    });
  });
  socket.write('POST /health HTTP/1.1\r\nHost: a.test\r\nContent-Length: 10\r\n\r\nab');
  assert.match(await answered, /^HTTP\/1\.1 405 /);
  const exited = exitOf(child);
  child.kill('SIGINT');
  // The first signal has been handled once the listener refuses connections.
  while (await accepts(port)) { /* the shutdown has not begun yet */ }
  child.kill('SIGINT');
  assert.is(await exited, 1);
  assert.match(stderr(), 'serve: SIGINT again, exiting without waiting\n');
  socket.destroy();
});

test('the first signal again during the drain (SIGHUP twice from a closing terminal, SIGTERM twice) is said and the drain goes on: the request in flight is answered, exit 0', async () => {
  const cwd = serveWorkDir();
  for (const signal of ['SIGHUP', 'SIGTERM'] as const) {
    const { child, urls, stderr } = await startServe(['--port', '0', '--https-port', 'off', '--no-profiler'], cwd);
    const port = Number(new URL(urls[0]!).port);
    const { socket, answer, ended } = await halfSentRequest(port);
    const exited = exitOf(child);
    child.kill(signal);
    while (isRunning(child) && (await accepts(port))) { /* the shutdown has not begun yet */ }
    child.kill(signal);
    await untilSaid(stderr, `${signal} again`);
    assert.ok(isRunning(child), `${signal}: still draining`);
    socket.write('\r\n');
    await ended;
    assert.is(await exited, 0, `${signal}: ${stderr()}`);
    assert.match(answer(), /^HTTP\/1\.1 200 /, signal);
    assert.match(stderr(), `serve: ${signal} again, still shutting down (SIGINT exits at once)\n`);
  }
});

test('SIGHUP (a closed terminal) and SIGUSR2 (nodemon) shut down gracefully as SIGTERM does: the request in flight is answered, with Connection: close, and the exit is 0', async () => {
  const cwd = serveWorkDir();
  for (const signal of ['SIGHUP', 'SIGUSR2'] as const) {
    const { child, urls, stderr } = await startServe(['--port', '0', '--https-port', 'off', '--no-profiler'], cwd);
    const port = Number(new URL(urls[0]!).port);
    const { socket, answer, ended } = await halfSentRequest(port);
    const exited = exitOf(child);
    child.kill(signal);
    // The shutdown has begun once the listener refuses connections (without it, the process dies of the signal).
    while (isRunning(child) && (await accepts(port))) { /* not yet */ }
    socket.write('\r\n');
    await ended;
    assert.is(await exited, 0, `${signal}: ${stderr()}`);
    assert.match(answer(), /^HTTP\/1\.1 200 /, signal);
    assert.match(answer(), /\r\nconnection: close\r\n/i, signal);
  }
});

test('SIGTERM while starting (the certificate just made, the app not yet up) exits 0 without listening, as a supervisor stopping it expects', async () => {
  const cwd = serveWorkDir();
  const child = spawnServe(['--port', '0', '--https-port', '0'], cwd);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  const exited = exitOf(child);
  // The line goes out once the certificate is made, before the app (the profiler's storage) is opened.
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (stderr.includes('created a self-signed development certificate')) resolve();
    });
    child.once('exit', () => reject(new Error(`bin/serve exited before making its certificate: ${stderr}`)));
  });
  child.kill('SIGTERM');
  assert.is(await exited, 0, stderr);
  // On a loaded machine the listeners may be up before the signal is handled: then it is the usual shutdown.
  if (stdout.includes('listening on')) return;
  assert.match(stderr, 'serve: SIGTERM while starting, stopping\n');
  assert.is(stdout, '');
});

/** Whether a TCP connection to the port is accepted (and closes it at once). */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

test('--no-debug serves plain error pages', async () => {
  const cwd = serveWorkDir();
  const { child, urls } = await startServe(['--port', '0', '--https-port', 'off', '--no-debug'], cwd);
  const response = await request(`${urls[0]}/robots.txt`);
  assert.is(response.statusCode, 404);
  const body = await response.body.text();
  assert.not.ok(body.includes('Stack Trace'));
  assert.not.ok(body.includes('No route found'));
  await stopsCleanly(child, 'SIGINT');
});

test('--env prod without --debug has no profiler at all: no token, no profiler pages, the plain error page, no profile directory', async () => {
  const cwd = serveWorkDir();
  const { child, urls } = await startServe(['--port', '0', '--https-port', 'off', '--env', 'prod'], cwd);
  const response = await request(`${urls[0]}/robots.txt`);
  assert.is(response.statusCode, 404);
  assert.is(response.headers['x-debug-token'], undefined);
  assert.is(response.headers['x-debug-exception'], undefined);
  const body = await response.body.text();
  assert.not.ok(body.includes('Stack Trace') || body.includes('No route found'), 'the plain page');
  for (const path of ['/_profiler/', '/_profiler/latest', '/_wdt/abcdef']) {
    const page = await request(`${urls[0]}${path}`);
    assert.is(page.statusCode, 404, path);
    await page.body.dump();
  }
  await stopsCleanly(child);
  assert.not.ok(existsSync(join(cwd, 'var', 'profiler')), 'no profile directory made');
});

test('bin/serve as the tests start it is the debug server their flags ask for, whatever NODE_ENV, APP_ENV, APP_DEBUG or PROFILER the test run was started with', async () => {
  const saved = { NODE_ENV: process.env.NODE_ENV, APP_ENV: process.env.APP_ENV, APP_DEBUG: process.env.APP_DEBUG, PROFILER: process.env.PROFILER };
  Object.assign(process.env, { NODE_ENV: 'production', APP_ENV: 'prod', APP_DEBUG: '0', PROFILER: '0' });
  try {
    const { child, urls } = await startServe(['--port', '0', '--https-port', 'off'], serveWorkDir());
    const response = await request(`${urls[0]}/robots.txt`);
    assert.is(response.statusCode, 404);
    assert.match(await response.body.text(), /Stack Trace/);
    assert.type(response.headers['x-debug-token'], 'string');
    await stopsCleanly(child);
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
});

test('--no-profiler keeps the debug error pages and records nothing', async () => {
  const cwd = serveWorkDir();
  const { child, urls } = await startServe(['--port', '0', '--https-port', 'off', '--no-profiler'], cwd);
  const response = await request(`${urls[0]}/robots.txt`);
  assert.is(response.statusCode, 404);
  assert.match(await response.body.text(), /Stack Trace/);
  assert.is(response.headers['x-debug-token'], undefined);
  const profiler = await request(`${urls[0]}/_profiler/`);
  assert.is(profiler.statusCode, 404, 'no profiler pages');
  await profiler.body.dump();
  await stopsCleanly(child);
  assert.not.ok(existsSync(join(cwd, 'var', 'profiler')), 'no profile directory made');
});

test('a bad flag is a usage error with exit code 2', async () => {
  const child = spawnServe(['--port', 'eighty']);
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  assert.is(await exitOf(child), 2);
  assert.match(stderr, /port/);
});

test('--tls-cert and --tls-key with --https-port off is a usage error with exit code 2, before anything starts', async () => {
  const child = spawnServe(['--port', '0', '--https-port', 'off', '--tls-cert', 'c.pem', '--tls-key', 'k.pem']);
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  assert.is(await exitOf(child), 2);
  assert.match(stderr, /^serve: --tls-cert and --tls-key are for https, which --https-port off turns off/);
});

test('an expired --tls-cert is served, with a WARNING on stderr naming the file and its notAfter date', async () => {
  const cwd = serveWorkDir();
  const { notAfter, pems } = await expiredCertificate([{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }]);
  writeFileSync(join(cwd, 'expired-cert.pem'), pems.cert);
  writeFileSync(join(cwd, 'expired-key.pem'), pems.private);
  const { child, urls, stderr } = await startServe(['--port', '0', '--https-port', '0', '--no-profiler', '--tls-cert', 'expired-cert.pem', '--tls-key', 'expired-key.pem'], cwd);
  await untilSaid(stderr, 'expired-cert.pem');
  const line = stderr().split('\n').find((text) => text.includes('expired-cert.pem'));
  assert.ok(line !== undefined, `a line names the file: ${stderr().slice(0, 500)}`);
  const record = JSON.parse(line!) as { level: string; channel: string; message: string };
  assert.is(record.level, 'warning');
  assert.is(record.message, `The TLS certificate expired-cert.pem is expired (notAfter ${notAfter.toISOString()}): https clients will refuse it`);
  const agent = new Agent({ connect: { rejectUnauthorized: false } });
  const response = await request(`${urls[1]}/health`, { dispatcher: agent });
  assert.is(response.statusCode, 200, 'served anyway');
  await response.body.dump();
  await agent.close();
  await stopsCleanly(child);
});

test('an expired development certificate cached in var/tls/ is replaced, never served, and a line on stderr says why', async () => {
  const cwd = serveWorkDir();
  const { notAfter, pems: expired } = await expiredCertificate([
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
  ]);
  mkdirSync(join(cwd, 'var', 'tls'), { recursive: true });
  writeFileSync(join(cwd, 'var', 'tls', 'dev-cert.pem'), expired.cert);
  writeFileSync(join(cwd, 'var', 'tls', 'dev-key.pem'), expired.private, { mode: 0o600 });
  const { child, urls, stderr } = await startServe(['--port', '0', '--https-port', '0', '--no-profiler'], cwd);
  await untilSaid(stderr, 'var/tls/');
  assert.match(stderr(), `serve: replaced the development certificate in var/tls/ with a new self-signed one (localhost, 127.0.0.1, ::1): it has expired (notAfter ${notAfter.toISOString()})\n`);
  const cached = readFileSync(join(cwd, 'var', 'tls', 'dev-cert.pem'), 'utf8');
  assert.ok(Date.parse(new X509Certificate(cached).validTo) > Date.now(), 'the cache holds a valid one');
  // A client that trusts the new certificate alone gets its answer: the expired one is not served.
  const agent = new Agent({ connect: { ca: cached } });
  const response = await request(`${urls[1]}/health`, { dispatcher: agent });
  assert.is(response.statusCode, 200);
  await response.body.dump();
  await agent.close();
  await stopsCleanly(child);
});

test('--trusted-hosts answers the listed hosts and refuses others with a 400 "Untrusted Host", over http and https', async () => {
  const cwd = serveWorkDir();
  const { child, urls } = await startServe(['--port', '0', '--https-port', '0', '--no-profiler', '--trusted-hosts', 'localhost,127.0.0.1'], cwd);
  // The TLS client checks the certificate against the Host it sends: the forged name is the point here.
  const agent = new Agent({ connect: { rejectUnauthorized: false } });
  for (const url of urls) {
    const trusted = await request(`${url}/health`, { dispatcher: agent });
    assert.is(trusted.statusCode, 200, url);
    await trusted.body.dump();
    const untrusted = await request(`${url}/health/`, { dispatcher: agent, headers: { host: 'evil.test', accept: 'application/json' } });
    assert.is(untrusted.statusCode, 400, url);
    assert.is(untrusted.headers.location, undefined);
    // The plain answer, as any client gets it there: a rebinding page could read a debug one.
    assert.is(untrusted.headers['x-debug-exception'], undefined);
    assert.is(((await untrusted.body.json()) as { detail: string }).detail, 'Untrusted Host "evil.test".');
  }
  await agent.close();
  await stopsCleanly(child);
});

test('an ERROR line on stderr names its request: method, path and query, client IP and the X-Debug-Token of the response, over http and https', async () => {
  const cwd = serveWorkDir();
  const { child, urls, stderr } = await startServe(['--port', '0', '--https-port', '0'], cwd);
  const agent = new Agent({ connect: { rejectUnauthorized: false } });
  // An encoded CR LF stays encoded: the path is written as it was received.
  const path = '/missing%0d%0a[2026-01-01]%20app.CRITICAL:%20forged?q=%0D%0A';
  const tokens: string[] = [];
  for (const url of urls) {
    const missing = await request(`${url}${path}`, { dispatcher: agent });
    assert.is(missing.statusCode, 404, url);
    await missing.body.dump();
    const token = missing.headers['x-debug-token'];
    assert.type(token, 'string', url);
    tokens.push(token as string);
  }
  await agent.close();
  // Everything the server wrote has arrived once its stderr is closed.
  const closed = new Promise((resolve) => child.once('close', resolve));
  await stopsCleanly(child);
  await closed;
  // The CLI's own notes (`serve: ...`) are text; the log records are JSON lines.
  const lines = stderr().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: string; message: string; request?: Record<string, unknown> });
  const errors = lines.filter((line) => line.level === 'error');
  assert.is(errors.length, 2, stderr());
  assert.equal(errors.map((line) => line.request), tokens.map((token) => ({ method: 'GET', path, ip: '127.0.0.1', token })));
  assert.ok(stderr().split('\n').every((line) => line === '' || line.startsWith('{') || line.startsWith('serve: ')), 'no line made by the path');
});

test('SIGTERM ends the process within seconds while a stalled reader leaves stderr unread, with its exit code 0', async () => {
  const cwd = serveWorkDir();
  const { child, urls } = await startServe(['--port', '0', '--https-port', 'off', '--no-profiler'], cwd);
  // Nobody reads stderr from now on: the pipe fills with the 404s' ERROR lines, and more wait in the process.
  child.stderr!.removeAllListeners('data');
  child.stderr!.pause();
  for (let i = 0; i < 40; i++) await Promise.all(Array.from({ length: 10 }, (_, j) => request(`${urls[0]}/missing-${i}-${j}`).then((answer) => answer.body.dump())));
  const started = Date.now();
  await stopsCleanly(child);
  assert.ok(Date.now() - started < 8_000, `exited ${Date.now() - started} ms after SIGTERM`);
  child.stderr!.destroy();
});

test('stdout whose reader has gone (`serve | head -1`) or that is a full disk does not end the server: it serves on, and exits 0 on SIGTERM', async () => {
  for (const closed of ['a closed pipe', 'a full disk'] as const) {
    if (closed === 'a full disk' && !existsSync('/dev/full')) continue;
    const port = await freePort();
    // Gone before the listening lines are written: each of them fails (EPIPE, ENOSPC).
    const stdout = closed === 'a full disk' ? openSync('/dev/full', 'w') : 'pipe';
    const child = spawn(process.execPath, [serveBin, '--port', String(port), '--https-port', 'off', '--no-profiler'], { cwd: serveWorkDir(), env: serveEnv(), stdio: ['ignore', stdout, 'pipe'] });
    if (typeof stdout === 'number') closeSync(stdout);
    child.stdout?.destroy();
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const exited = exitOf(child);
    assert.is(await answersHealth(child, port), 200, `${closed}: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(isRunning(child), `${closed}: still running: ${stderr}`);
    child.kill('SIGTERM');
    assert.is(await exited, 0, `${closed}: ${stderr}`);
  }
});

test('stderr whose reader has gone, or that is a full disk, from the start (the certificate line, the ERROR lines of 404s) does not end the server: it serves, and exits 0 on SIGTERM', async () => {
  for (const closed of ['a closed pipe', 'a full disk'] as const) {
    if (closed === 'a full disk' && !existsSync('/dev/full')) continue;
    const stderr = closed === 'a full disk' ? openSync('/dev/full', 'w') : 'pipe';
    // A fresh working directory: the development certificate is made, and said so on stderr, before the app starts.
    const child = spawn(process.execPath, [serveBin, '--port', '0', '--https-port', '0'], { cwd: serveWorkDir(), env: serveEnv(), stdio: ['ignore', 'pipe', stderr] });
    if (typeof stderr === 'number') closeSync(stderr);
    child.stderr?.destroy();
    const exited = exitOf(child);
    const urls = await new Promise<string[]>((resolve, reject) => {
      let stdout = '';
      child.stdout!.on('data', (chunk) => {
        stdout += chunk;
        const found = [...stdout.matchAll(/^listening on (\S+)$/gm)].map((m) => m[1]!);
        if (found.length === 2) resolve(found);
      });
      child.once('exit', (code) => reject(new Error(`${closed}: bin/serve exited early with ${code}`)));
    });
    const agent = new Agent({ connect: { rejectUnauthorized: false } });
    for (const url of urls) {
      for (let i = 0; i < 5; i++) {
        const missing = await request(`${url}/missing-${i}`, { dispatcher: agent });
        assert.is(missing.statusCode, 404);
        await missing.body.dump();
      }
    }
    await agent.close();
    assert.ok(isRunning(child), closed);
    child.kill('SIGTERM');
    assert.is(await exited, 0, closed);
  }
});

/** A port nothing listens on (just released by a listener of our own). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The status of GET /health once the server answers (tried every 100 ms for at most 20 s); null if the child exits first. */
async function answersHealth(child: ChildProcess, port: number): Promise<number | null> {
  for (let waited = 0; waited < 20_000 && isRunning(child); waited += 100) {
    try {
      const answer = await request(`http://127.0.0.1:${port}/health`);
      await answer.body.dump();
      return answer.statusCode;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return null;
}

test('without dist/ (a clone not built, a package installed from git with --ignore-scripts) it names the missing directory and how each gets it built, and exits 1', () => {
  const pkg = join(serveWorkDir(), 'http-kernel');
  mkdirSync(join(pkg, 'bin'), { recursive: true });
  copyFileSync(serveBin, join(pkg, 'bin', 'serve'));
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ type: 'module' }));
  const run = spawnSync(process.execPath, [join(pkg, 'bin', 'serve')], { env: serveEnv(), encoding: 'utf8' });
  assert.is(run.status, 1);
  assert.ok(run.stderr.includes(`serve: ${join(pkg, 'dist')}${sep} is missing.`), run.stderr);
  assert.match(run.stderr, /In a clone, run npm install/);
  assert.match(run.stderr, /Installed from git, .*install again with scripts allowed \(without --ignore-scripts\)/);
});

test('started from / (a systemd unit without WorkingDirectory=), it refuses to keep its files in the system\'s /var: exit 2, nothing made', async () => {
  const before = existsSync('/var/tls') || existsSync('/var/profiler');
  const run = spawnSync(process.execPath, [serveBin, '--port', '0'], { cwd: '/', env: serveEnv(), encoding: 'utf8', timeout: 20_000 });
  assert.is(run.status, 2, run.stderr);
  assert.match(run.stderr, /^serve: the working directory is \/, so the files kept under var\/ would go to \/var\/tls and \/var\/profiler/);
  assert.match(run.stderr, /WorkingDirectory=/);
  if (!before) assert.not.ok(existsSync('/var/tls') || existsSync('/var/profiler'), 'nothing made under /var');
  // Keeping nothing under var/ (no dev certificate, no profiler), it starts from / as usual: the check is about var/ alone.
  const { urls } = await startServe(['--port', '0', '--https-port', 'off', '--no-profiler'], '/');
  assert.is(urls.length, 1);
});

test('--log-level sets what stderr gets: at critical a 404 (an ERROR) writes nothing, at the default warning it writes its line', async () => {
  const cwd = serveWorkDir();
  for (const [args, expected] of [[['--log-level', 'critical'], false], [[], true]] as const) {
    const { child, urls, stderr } = await startServe(['--port', '0', '--https-port', 'off', '--no-profiler', ...args], cwd);
    const answer = await request(`${urls[0]}/missing-page`);
    await answer.body.dump();
    assert.is(answer.statusCode, 404);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await stopsCleanly(child);
    assert.is(stderr().includes('missing-page'), expected, `${args.join(' ') || 'default'}: ${stderr().slice(0, 200)}`);
  }
});

test.run();

/** A certificate for localhost that expired a day ago (a whole second, as X.509 keeps it), with `extensions`. */
async function expiredCertificate(extensions: NonNullable<Parameters<typeof generate>[1]>['extensions']): Promise<{ notAfter: Date; pems: { cert: string; private: string } }> {
  const notAfter = new Date(Math.floor((Date.now() - 24 * 60 * 60 * 1000) / 1000) * 1000);
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate: new Date(notAfter.getTime() - 30 * 24 * 60 * 60 * 1000),
    notAfterDate: notAfter,
    extensions,
  });
  return { notAfter, pems };
}

/** Waits, up to 5 s, for `text` on the server's stderr (the assertions after it say what is missing). */
async function untilSaid(stderr: () => string, text: string): Promise<void> {
  for (let waited = 0; !stderr().includes(text) && waited < 5_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** A request whose head is half sent (the shutdown's signals come meanwhile): its socket, what came back so far, and its close. */
async function halfSentRequest(port: number): Promise<{ socket: Socket; answer: () => string; ended: Promise<unknown> }> {
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk));
  socket.on('error', (error) => (answer += `[${error.message}]`));
  const ended = new Promise((resolve) => socket.once('close', resolve));
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write('GET /health HTTP/1.1\r\nHost: a.test\r\n');
  return { socket, answer: () => answer, ended };
}
