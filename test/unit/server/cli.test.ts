import { spawnSync } from 'node:child_process';
import type { LookupAllOptions } from 'node:dns';
import dnsPromises from 'node:dns/promises';
import { Server, createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { debugExposureNote } from '../../../lib/server/cli.js';
import { parseServeOptions } from '../../../lib/server/serve-options.js';

const serve = fileURLToPath(new URL('../../../../bin/serve', import.meta.url));

/** Runs `node bin/serve` as a user would, with a clean environment and a hard time limit. */
function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [serve, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, ...env },
    timeout: 10_000,
  });
  if (result.error) throw result.error;
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('node bin/serve --help prints every flag on stdout and exits 0', () => {
  const { code, stdout, stderr } = run(['--help']);
  assert.is(code, 0);
  assert.is(stderr, '');
  assert.match(stdout, /^Usage: node bin\/serve \[options\]   \(installed as a dependency: npx http-kernel-serve \[options\]\)\n/);
  for (const flag of ['--host', '--port', '--https-port', '--env', '--no-debug', '--tls-cert', '--tls-key']) assert.match(stdout, flag);
});

test('an unknown flag exits 2 with one line on stderr naming it, and no stack trace', () => {
  const { code, stdout, stderr } = run(['--prot', '80']);
  assert.is(code, 2);
  assert.is(stdout, '');
  assert.is(stderr, 'serve: unknown option --prot (see --help)\n');
});

test('a bad port in the environment exits 2 naming the variable', () => {
  const { code, stderr } = run([], { PORT: 'eighty' });
  assert.is(code, 2);
  assert.match(stderr, 'PORT must be an integer from 0 to 65535 (got "eighty")');
  assert.not.match(stderr, '    at ');
});

test('blank environment variables count as unset over the CLI, each of them (LOG_LEVEL=" " and HTTP_KERNEL_IDE=" " alike)', () => {
  const help = run(['--help']).stdout;
  const names = [...help.matchAll(/\[env ([A-Z_]+)/g)].map((match) => match[1]!);
  assert.ok(names.includes('LOG_LEVEL') && names.includes('HTTP_KERNEL_IDE') && names.includes('APP_DEBUG'), names.join(', '));
  const blank = Object.fromEntries(names.map((name) => [name, ' ']));
  // The response timeout is checked last: its usage error, alone, shows that none of the blank variables was one.
  const { code, stdout, stderr } = run(['--response-timeout', 'soon'], blank);
  assert.is(code, 2);
  assert.is(stdout, '');
  assert.match(stderr, /^serve: --response-timeout must be a number of seconds from 0 to \d+, with at most three decimals \(30, 0\.5\), or off \(got "soon"\)\n$/);
});

test('a blank flag value exits 2 as an empty one does', () => {
  const { code, stderr } = run(['--ide', ' ']);
  assert.is(code, 2);
  assert.is(stderr, 'serve: option --ide needs a value (see --help)\n');
});

test('an unreadable certificate exits 1 with one line naming the file', () => {
  const { code, stdout, stderr } = run(['--port', '0', '--https-port', '0', '--tls-cert', 'no-such-cert.pem', '--tls-key', 'no-such-key.pem']);
  assert.is(code, 1);
  assert.is(stdout, '');
  assert.match(stderr, /^serve: cannot read TLS certificate no-such-cert\.pem: ENOENT[^\n]*\n$/);
});

test('bin/serve runs regular expressions that backtrack too much on V8\'s linear-time engine', () => {
  // A catastrophic pattern: exponential on a backtracking engine (minutes here), linear on the other.
  const script = `
    const { setFlagsFromString } = await import('node:v8');
    const { REGEXP_FALLBACK } = await import(${JSON.stringify(new URL('../../../lib/server/cli.js', import.meta.url).href)});
    setFlagsFromString(REGEXP_FALLBACK);
    process.stdout.write(String(/^(a|a)*$/.test('a'.repeat(40) + 'b')));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 10_000 });
  assert.is(result.error, undefined, 'the match did not finish within 10 s');
  assert.is(result.stdout, 'false', result.stderr);
});

test('a debug server listening beyond loopback (0.0.0.0, ::, an interface\'s address) says on stderr who sees its debug details, and how to turn them off', () => {
  for (const host of ['0.0.0.0', '::', '192.0.2.10', 'example.com']) {
    assert.is(
      debugExposureNote(parseServeOptions(['--host', host], {})),
      `debug mode listens on ${host}, beyond loopback: stack traces, logs and the profiler are shown to loopback clients only (--profiler-allow); a public server runs with --env prod or --no-debug`,
      host,
    );
  }
  assert.match(debugExposureNote(parseServeOptions(['--host', '0.0.0.0', '--profiler-allow', '10.0.0.0/8,loopback'], {}))!, 'shown to 10.0.0.0/8, loopback clients only');
  for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost', 'LOCALHOST', 'localhost.']) assert.is(debugExposureNote(parseServeOptions(['--host', host], {})), null, host);
  assert.is(debugExposureNote(parseServeOptions(['--host', '0.0.0.0', '--no-debug'], {})), null, 'no debug details to show');
});

test('the debug exposure note says "any client" when --profiler-allow takes every address (0.0.0.0/0, ::/0), and leaves the profiler out under --no-profiler', () => {
  for (const allow of ['0.0.0.0/0', '::/0', 'loopback,0.0.0.0/0,::/0']) {
    assert.is(
      debugExposureNote(parseServeOptions(['--host', '0.0.0.0', '--profiler-allow', allow], {})),
      `debug mode listens on 0.0.0.0, beyond loopback, and shows stack traces, logs and the profiler to any client (--profiler-allow ${allow}); a public server runs with --env prod or --no-debug`,
      allow,
    );
  }
  assert.is(
    debugExposureNote(parseServeOptions(['--host', '::', '--no-profiler'], {})),
    'debug mode listens on ::, beyond loopback: stack traces and logs are shown to loopback clients only (--profiler-allow); a public server runs with --env prod or --no-debug',
  );
});

test('main() called in a process of its own caller takes its SIGTERM and SIGINT handlers away when it returns, stopped while starting or after serving', async () => {
  const { main } = await import('../../../lib/server/cli.js');
  const args = ['--port', '0', '--https-port', 'off', '--no-debug', '--log-level', 'off'];
  const handlers = () => ({ SIGTERM: process.listenerCount('SIGTERM'), SIGINT: process.listenerCount('SIGINT') });
  const before = handlers();
  const { stdout, stderr, restore } = captureOutput();
  try {
    // Handlers are in place once main() has been called: the signal comes while it starts.
    const starting = main(args, {});
    process.emit('SIGTERM', 'SIGTERM');
    assert.is(await starting, 0);
    assert.equal(handlers(), before, 'stopped while starting');
    assert.equal(stderr, ['serve: SIGTERM while starting, stopping\n']);
    assert.equal(stdout, []);

    const serving = main(args, {});
    while (stdout.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.match(stdout[0]!, /^listening on http:\/\/127\.0\.0\.1:\d+\n$/);
    process.emit('SIGINT', 'SIGINT');
    assert.is(await serving, 0);
    assert.equal(handlers(), before, 'stopped after serving');
  } finally {
    restore();
  }
});

test('--host localhost prints one listening line per address localhost resolves to, and one line on stderr for an address it cannot listen on', async () => {
  const { main } = await import('../../../lib/server/cli.js');
  const real = dnsPromises.lookup;
  dnsPromises.lookup = (async (host: string, options: LookupAllOptions) =>
    host === 'localhost' ? ['127.0.0.1', '::1', '::2'].map((address) => ({ address, family: address.includes(':') ? 6 : 4 })) : real(host, options)) as typeof real;
  const { stdout, stderr, restore } = captureOutput();
  try {
    const serving = main(['--host', 'localhost', '--port', '0', '--https-port', 'off', '--no-debug', '--log-level', 'off'], {});
    for (let waited = 0; stdout.length < 2 && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    const port = /:(\d+)\n$/.exec(stdout[0]!)![1];
    assert.equal(stdout, [`listening on http://127.0.0.1:${port}\n`, `listening on http://[::1]:${port}\n`]);
    assert.equal(stderr, [`serve: not listening on http://[::2]:${port}: address not available on this machine (EADDRNOTAVAIL)\n`]);
    process.emit('SIGTERM', 'SIGTERM');
    assert.is(await serving, 0);
  } finally {
    restore();
    dnsPromises.lookup = real;
  }
});

test('--host localhost on a machine whose kernel has no IPv6 at all (EAFNOSUPPORT) says so in words on its stderr line', async () => {
  const { main } = await import('../../../lib/server/cli.js');
  const real = dnsPromises.lookup;
  dnsPromises.lookup = (async (host: string, options: LookupAllOptions) =>
    host === 'localhost' ? ['127.0.0.1', '::1'].map((address) => ({ address, family: address.includes(':') ? 6 : 4 })) : real(host, options)) as typeof real;
  // What listen() meets where IPv6 is compiled out or disabled at boot (ipv6.disable=1): no socket of that family can be made.
  const realListen = Server.prototype.listen;
  Server.prototype.listen = function (this: Server, ...args: unknown[]) {
    if ((args[0] as { host?: string }).host !== '::1') return realListen.apply(this, args as Parameters<typeof realListen>);
    const error = Object.assign(new Error('listen EAFNOSUPPORT: address family not supported ::1'), { code: 'EAFNOSUPPORT', errno: -97, syscall: 'listen', address: '::1' });
    process.nextTick(() => this.emit('error', error));
    return this;
  } as typeof realListen;
  const { stdout, stderr, restore } = captureOutput();
  try {
    const serving = main(['--host', 'localhost', '--port', '0', '--https-port', 'off', '--no-debug', '--log-level', 'off'], {});
    for (let waited = 0; stdout.length < 1 && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    const port = /:(\d+)\n$/.exec(stdout[0]!)![1];
    assert.equal(stderr, [`serve: not listening on http://[::1]:${port}: address family not supported on this machine (EAFNOSUPPORT)\n`]);
    process.emit('SIGTERM', 'SIGTERM');
    assert.is(await serving, 0);
  } finally {
    restore();
    Server.prototype.listen = realListen;
    dnsPromises.lookup = real;
  }
});

/** An app for main() whose close() fails, counting its calls. */
function appFailingToClose() {
  const app = {
    closes: 0,
    listener: () => {},
    logger: undefined as never,
    async close() {
      app.closes++;
      throw new Error('the profiler storage would not close');
    },
  };
  return app;
}

const failedClose = (after: string) => `serve: shutdown after ${after} failed: the profiler storage would not close\n`;

test('a close that fails after a signal while starting runs once and is said as a failed shutdown, exit 1, not as a start-up error', async () => {
  const { main } = await import('../../../lib/server/cli.js');
  const app = appFailingToClose();
  const { stdout, stderr, restore } = captureOutput();
  try {
    const starting = main(['--port', '0', '--https-port', 'off', '--no-debug', '--log-level', 'off'], {}, () => app);
    process.emit('SIGTERM', 'SIGTERM');
    assert.is(await starting, 1);
  } finally {
    restore();
  }
  assert.is(app.closes, 1);
  assert.equal(stderr, ['serve: SIGTERM while starting, stopping\n', failedClose('SIGTERM')]);
  assert.equal(stdout, []);
});

test('a close that fails after a start-up error (the port taken) runs once and has its own line after the error\'s, exit 1', async () => {
  const { main } = await import('../../../lib/server/cli.js');
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as AddressInfo;
  const app = appFailingToClose();
  const { stderr, restore } = captureOutput();
  try {
    assert.is(await main(['--host', '127.0.0.1', '--port', String(port), '--https-port', 'off', '--no-debug', '--log-level', 'off'], {}, () => app), 1);
  } finally {
    restore();
    await new Promise((resolve) => taken.close(resolve));
  }
  assert.is(app.closes, 1);
  assert.equal(stderr, [`serve: cannot listen on 127.0.0.1:${port}: address already in use (EADDRINUSE)\n`, failedClose('the start-up error')]);
});

test('a close that fails after serving, on SIGINT, runs once and is said as a failed shutdown, exit 1', async () => {
  const { main } = await import('../../../lib/server/cli.js');
  const app = appFailingToClose();
  const { stdout, stderr, restore } = captureOutput();
  try {
    const serving = main(['--host', '127.0.0.1', '--port', '0', '--https-port', 'off', '--no-debug', '--log-level', 'off'], {}, () => app);
    for (let waited = 0; stdout.length === 0 && waited < 10_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.match(stdout[0] ?? '', /^listening on http:\/\/127\.0\.0\.1:\d+\n$/);
    process.emit('SIGINT', 'SIGINT');
    assert.is(await serving, 1);
  } finally {
    restore();
  }
  assert.is(app.closes, 1);
  assert.equal(stderr, [failedClose('SIGINT')]);
});

/** What process.stdout and process.stderr are given from now until restore(), kept from the terminal. */
function captureOutput() {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  process.stdout.write = (chunk: string | Uint8Array) => stdout.push(String(chunk)) > 0;
  process.stderr.write = (chunk: string | Uint8Array) => stderr.push(String(chunk)) > 0;
  const restore = () => {
    process.stdout.write = writes.stdout;
    process.stderr.write = writes.stderr;
  };
  return { stdout, stderr, restore };
}

test.run();
