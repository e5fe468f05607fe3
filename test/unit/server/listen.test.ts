import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LookupAllOptions } from 'node:dns';
import dnsPromises from 'node:dns/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { Server, connect, createServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { Agent, request } from 'undici';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_LIMITS, ERROR_PAGE_GRACE_MS, isLocalhost, startServers, type ListenOptions, type RunningServers } from '../../../lib/server/listen.js';
import { createRequestListener } from '../../../lib/server/node-adapter.js';
import { ControllerResolver, EventDispatcher, HttpKernel, KernelEvents, Response, type ExceptionEvent, type RequestEvent, type TerminateEvent } from '../../../kernel/index.js';
import { Logger, createBus } from '../../../lib/log/index.js';
import { loadOrCreateDevCertificate } from '../../../lib/server/tls-certificate.js';

let tmp = '';
let tls: { key: string; cert: string };
let agent: Agent;

test.before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'hk-listen-'));
  const { key, cert } = await loadOrCreateDevCertificate(join(tmp, 'tls'));
  tls = { key, cert };
  agent = new Agent({ connect: { ca: cert } });
});

test.after(async () => {
  await agent.close();
  await rm(tmp, { recursive: true, force: true });
});

/** Rejects instead of hanging when `promise` takes longer than `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Runs `body` against freshly started servers and always closes them. */
async function withServers(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  options: Partial<ListenOptions>,
  body: (running: RunningServers) => Promise<void>,
): Promise<void> {
  const running = await within(startServers(listener, { host: '127.0.0.1', port: 0, httpsPort: 0, tls, ...options }), 5_000, 'startServers');
  try {
    await body(running);
  } finally {
    await within(running.close(), 5_000, 'close');
  }
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** Sends raw bytes and collects everything the server writes back until it closes the connection. */
function rawExchange(port: number, payload: string): Promise<string> {
  return within(
    new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port });
      let received = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (received += chunk));
      socket.on('error', (error) => (received ? resolve(received) : reject(error)));
      socket.on('close', () => resolve(received));
      socket.write(payload);
    }),
    5_000,
    'raw exchange',
  );
}

const hello = (req: IncomingMessage, res: ServerResponse) => {
  res.setHeader('content-type', 'text/plain');
  res.end(`hello over ${(req.socket as TLSSocket).encrypted ? 'https' : 'http'}`);
};

test('serves one listener over http and https on free ports', async () => {
  await withServers(hello, {}, async ({ urls, servers }) => {
    assert.is(urls.length, 2);
    assert.is(servers.length, 2);
    assert.match(urls[0]!, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(urls[1]!, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.is.not(portOf(urls[0]!), 0);

    const overHttp = await within(request(urls[0]!, { dispatcher: agent }), 5_000, 'http request');
    assert.is(overHttp.statusCode, 200);
    assert.is(await overHttp.body.text(), 'hello over http');

    const overHttps = await within(request(`${urls[1]!}/`, { dispatcher: agent }), 5_000, 'https request');
    assert.is(overHttps.statusCode, 200);
    assert.is(await overHttps.body.text(), 'hello over https');
  });
});

test('plain http sent to the https port gets a 400 saying so, not an empty reply; other failed handshakes just close', async () => {
  await withServers(hello, {}, async ({ urls }) => {
    const port = portOf(urls[1]!);
    const answer = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/);
    assert.match(answer, /speaks https/);
    // Not TLS and not HTTP either: the connection closes without a word.
    assert.is(await rawExchange(port, '\x00\x01\x02garbage\r\n\r\n'), '');
    // The server keeps serving.
    const overHttps = await within(request(`${urls[1]!}/`, { dispatcher: agent }), 5_000, 'https request');
    assert.is(await overHttps.body.text(), 'hello over https');
  });
});

test('httpsPort null starts http only', async () => {
  await withServers(hello, { httpsPort: null, tls: undefined }, async ({ urls, servers }) => {
    assert.is(urls.length, 1);
    assert.is(servers.length, 1);
    assert.match(urls[0]!, /^http:/);
  });
});

test('an https port without tls is a TypeError saying tls is required, before anything listens', async () => {
  const refused = await startServers(hello, { host: '127.0.0.1', port: 0, httpsPort: 0 }).then(
    async (running) => {
      await running.close();
      return null;
    },
    (error: unknown) => error,
  );
  assert.instance(refused, TypeError);
  assert.is((refused as Error).message, 'startServers: options.tls is required when httpsPort is not null');
});

test('ports gives the port each scheme listens on, for schemePorts: none for https without its listener', async () => {
  await withServers(hello, {}, async ({ ports, servers }) => {
    const listened = servers.map((server) => (server.address() as AddressInfo).port);
    assert.equal(ports, { http: listened[0], https: listened[1] });
    // What an embedder copies from the README: redirects to the other scheme go to these ports.
    const schemePorts = { http: 80, https: 443 };
    Object.assign(schemePorts, ports);
    assert.equal(schemePorts, { http: listened[0], https: listened[1] });
  });
  await withServers(hello, { httpsPort: null, tls: undefined }, async ({ ports, servers }) => {
    assert.equal(ports, { http: (servers[0]!.address() as AddressInfo).port });
    const schemePorts = { http: 80, https: 443 };
    Object.assign(schemePorts, ports);
    assert.is(schemePorts.https, 443);
  });
});

test('an IPv6 host is bracketed in the URLs', async () => {
  let running: RunningServers;
  try {
    running = await within(startServers(hello, { host: '::1', port: 0, httpsPort: null }), 5_000, 'startServers');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRNOTAVAIL' || (error as NodeJS.ErrnoException).code === 'EAFNOSUPPORT') return; // no IPv6 here
    throw error;
  }
  try {
    assert.match(running.urls[0]!, /^http:\/\/\[::1\]:\d+$/);
  } finally {
    await within(running.close(), 5_000, 'close');
  }
});

test('an IPv6 host with a zone (::1%lo) has its "%" written "%25" in the URLs, as RFC 6874 writes it in a URL, and serves', async () => {
  let running: RunningServers;
  try {
    running = await within(startServers(hello, { host: '::1%lo', port: 0, httpsPort: null }), 5_000, 'startServers');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRNOTAVAIL' || code === 'EAFNOSUPPORT' || code === 'ENODEV' || code === 'EINVAL') return; // no IPv6, or no interface lo, here
    throw error;
  }
  try {
    const port = running.ports.http;
    assert.equal(running.urls, [`http://[::1%25lo]:${port}`]);
    assert.equal(running.listening, running.urls);
    const response = await within(request(`http://[::1]:${port}/`, { dispatcher: agent }), 5_000, 'request');
    assert.is(await response.body.text(), 'hello over http');
  } finally {
    await within(running.close(), 5_000, 'close');
  }
});

test('without limits, both servers get the documented ones: 16 KiB head, 2000 fields, head in 10 s, request in 30 s, keep-alive 5 s', async () => {
  // The README's "Server limits" paragraph; idle 60 s and shutdown 10 s are not visible on a server.
  assert.equal(DEFAULT_LIMITS, { maxHeaderSize: 16 * 1024, headersTimeout: 10_000, requestTimeout: 30_000, responseTimeout: 30_000, keepAliveTimeout: 5_000, idleTimeout: 60_000, maxRequestsPerSocket: 0, shutdownTimeout: 10_000 });
  await withServers(hello, {}, async ({ servers, urls }) => {
    for (const url of urls) {
      const response = await within(request(url, { dispatcher: agent }), 5_000, `request over ${url}`);
      await response.body.text();
      assert.is(response.headers['keep-alive'], 'timeout=5', url);
    }
    for (const server of servers) {
      assert.is((server as unknown as { maxHeaderSize: number }).maxHeaderSize, 16 * 1024);
      assert.is(server.headersTimeout, 10_000);
      assert.is(server.requestTimeout, 30_000);
      // Advertised by each response, kept by the idle sweep: node's own per-response timer stays off.
      assert.is(server.keepAliveTimeout, 0);
      // One more than served, so that a head reaching node's count is refused rather than cut.
      assert.is(server.maxHeadersCount, 2001);
    }
  });
});

test('the limits are applied to both servers, defaults filling what is not given', async () => {
  await withServers(hello, { limits: { keepAliveTimeout: 3456, maxRequestsPerSocket: 7 } }, async ({ servers, urls }) => {
    for (const url of urls) {
      const response = await within(request(url, { dispatcher: agent }), 5_000, `request over ${url}`);
      await response.body.text();
      assert.is(response.headers['keep-alive'], 'timeout=3, max=7', url);
    }
    for (const server of servers) {
      assert.is((server as unknown as { maxHeaderSize: number }).maxHeaderSize, DEFAULT_LIMITS.maxHeaderSize);
      assert.is(server.headersTimeout, DEFAULT_LIMITS.headersTimeout);
      assert.is(server.requestTimeout, DEFAULT_LIMITS.requestTimeout);
      // The idle timeout is not node's per-socket timer (see the idle tests below).
      assert.is(server.timeout, 0);
      assert.is(server.keepAliveTimeout, 0);
      assert.is(server.maxRequestsPerSocket, 7);
    }
  });
});

test('a responseTimeout that is no whole number of milliseconds from 0 to 2^31-1 is a RangeError, before anything listens', async () => {
  for (const responseTimeout of [-1, 1.5, NaN, Infinity, 2 ** 31, '30' as unknown as number]) {
    const started = startServers(hello, { host: '127.0.0.1', port: 0, httpsPort: null, limits: { responseTimeout } });
    const error = await started.then(async (running) => {
      await running.close();
      return null;
    }, (refused: unknown) => refused);
    assert.instance(error, RangeError, String(responseTimeout));
    assert.is((error as Error).message, `limits.responseTimeout is a whole number of milliseconds from 0 (off) to 2147483647, not ${typeof responseTimeout === 'string' ? 'the string "30"' : String(responseTimeout)}.`);
  }
});

/** What startServers refused with, or null once it started (its servers are closed again). */
async function refusal(options: Partial<ListenOptions> & Record<string, unknown>): Promise<unknown> {
  return startServers(hello, { host: '127.0.0.1', port: 0, httpsPort: null, ...options } as ListenOptions).then(async (running) => {
    await running.close();
    return null;
  }, (refused: unknown) => refused);
}

test('a limit that is no whole number (a string, NaN) is a RangeError naming it, rather than a check silently turned off', async () => {
  // `'60s' > 0` and `NaN > 0` are false: the idle sweep was never started and connections stayed open for good.
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ idleTimeout: '60s' }, 'limits.idleTimeout is a whole number of milliseconds from 0 (off) to 2147483647, not the string "60s".'],
    [{ keepAliveTimeout: NaN }, 'limits.keepAliveTimeout is a whole number of milliseconds from 0 to 2147483647, not NaN.'],
    [{ shutdownTimeout: 1.5 }, 'limits.shutdownTimeout is a whole number of milliseconds from 0 to 2147483647, not 1.5.'],
    [{ requestTimeout: -1 }, 'limits.requestTimeout is a whole number of milliseconds from 0 (off) to 2147483647, not -1.'],
    [{ maxHeaderSize: '16kb' }, 'limits.maxHeaderSize is a whole number of bytes from 1, not the string "16kb".'],
    [{ maxRequestsPerSocket: Infinity }, 'limits.maxRequestsPerSocket is a whole number of requests from 0 (unlimited), not Infinity.'],
  ];
  for (const [limits, message] of cases) {
    const error = await refusal({ limits: limits as ListenOptions['limits'] });
    assert.instance(error, RangeError, JSON.stringify(limits));
    assert.is((error as Error).message, message);
  }
});

test('each limit takes both ends of its range: 0 (1 byte for maxHeaderSize) and 2^31-1 ms for the timeouts; a step beyond either end is a RangeError', async () => {
  const lowest = { maxHeaderSize: 1, headersTimeout: 0, requestTimeout: 0, responseTimeout: 0, keepAliveTimeout: 0, idleTimeout: 0, maxRequestsPerSocket: 0, shutdownTimeout: 0 };
  assert.is(await refusal({ limits: lowest }), null);
  const max = 2 ** 31 - 1;
  const highest = { headersTimeout: max, requestTimeout: max, responseTimeout: max, keepAliveTimeout: max, idleTimeout: max, shutdownTimeout: max };
  assert.is(await refusal({ limits: highest }), null);
  const cases: Array<[Record<string, number>, string]> = [
    [{ maxHeaderSize: 0 }, 'limits.maxHeaderSize is a whole number of bytes from 1, not 0.'],
    [{ headersTimeout: -1 }, 'limits.headersTimeout is a whole number of milliseconds from 0 (off) to 2147483647, not -1.'],
    [{ headersTimeout: max + 1 }, 'limits.headersTimeout is a whole number of milliseconds from 0 (off) to 2147483647, not 2147483648.'],
    [{ idleTimeout: max + 1 }, 'limits.idleTimeout is a whole number of milliseconds from 0 (off) to 2147483647, not 2147483648.'],
    [{ maxRequestsPerSocket: -1 }, 'limits.maxRequestsPerSocket is a whole number of requests from 0 (unlimited), not -1.'],
  ];
  for (const [limits, message] of cases) {
    const error = await refusal({ limits });
    assert.instance(error, RangeError, JSON.stringify(limits));
    assert.is((error as Error).message, message);
  }
});

test('isLocalhost() is localhost in any case, with or without its final dot, and no other name that contains it', () => {
  for (const host of ['localhost', 'LocalHost', 'localhost.', 'LOCALHOST.']) assert.ok(isLocalhost(host), host);
  for (const host of ['localhost.example', 'my-localhost', 'localhost..', 'localhost:80', '127.0.0.1', '']) assert.not.ok(isLocalhost(host), host);
});

test('a limit or an option startServers does not know (a typo) is a TypeError naming it, rather than ignored', async () => {
  const typo = await refusal({ limits: { responsetimeout: 5_000 } as ListenOptions['limits'] });
  assert.instance(typo, TypeError);
  assert.is((typo as Error).message, 'startServers has no limit "responsetimeout"; its limits are maxHeaderSize, headersTimeout, requestTimeout, responseTimeout, keepAliveTimeout, idleTimeout, maxRequestsPerSocket, shutdownTimeout.');
  const option = await refusal({ limit: { idleTimeout: 1_000 } });
  assert.instance(option, TypeError);
  assert.is((option as Error).message, 'startServers has no option "limit"; its options are host, port, httpsPort, tls, limits, onError.');
  const notObject = await refusal({ limits: [] as unknown as ListenOptions['limits'] });
  assert.instance(notObject, TypeError);
  // A Map has no own keys: read as an object it would be "no limits", every default kept unsaid.
  const map = await refusal({ limits: new Map([['idleTimeout', 1_000]]) as unknown as ListenOptions['limits'] });
  assert.instance(map, TypeError);
  assert.match((map as Error).message, /^startServers' limits are a plain object of limits by name .*, not an object of type Map\.$/);
  const options = await startServers(hello, new Map([['port', 0]]) as unknown as ListenOptions).then(async (running) => running.close(), (refused: unknown) => refused);
  assert.instance(options, TypeError);
  assert.match((options as Error).message, /^startServers takes a plain object of options/);
  // Every limit given as undefined keeps its default, as before.
  assert.is(await refusal({ limits: { idleTimeout: undefined } }), null);
});

test('a garbage request line is answered 400 and the server keeps serving', async () => {
  await withServers(hello, { httpsPort: null }, async ({ urls }) => {
    const answer = await rawExchange(portOf(urls[0]!), 'THIS IS NOT HTTP\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/i);

    const after = await within(request(urls[0]!, { dispatcher: agent }), 5_000, 'request after garbage');
    assert.is(after.statusCode, 200);
    assert.is(await after.body.text(), 'hello over http');
  });
});

test('a listener of its own still gets Expect: 100-continue answered by node at once', async () => {
  const echo = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => res.end(`got ${body}`));
  };
  await withServers(echo, { httpsPort: null }, async ({ urls }) => {
    const answer = await within(
      new Promise<string>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port: portOf(urls[0]!) });
        let received = '';
        socket.setEncoding('latin1');
        // The body goes only once the server has invited it: without 100 Continue this waits for the time limit.
        socket.on('data', (chunk: string) => {
          received += chunk;
          if (received === 'HTTP/1.1 100 Continue\r\n\r\n') socket.write('hi');
        });
        socket.on('close', () => resolve(received));
        socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n');
      }),
      5_000,
      'the exchange',
    );
    assert.match(answer, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    assert.ok(answer.endsWith('got hi'), answer);
  });
});

test('an Expect that asks for more than 100-continue is a 417 over http and https, never invited nor handed to the listener', async () => {
  let handed = 0;
  const echo = (req: IncomingMessage, res: ServerResponse) => {
    handed++;
    req.resume();
    req.on('end', () => res.end('served'));
  };
  await withServers(echo, {}, async ({ urls }) => {
    for (const url of urls) {
      for (const expect of ['100-continue, foo', 'foo, 100-Continue', '100-continue=1']) {
        const { socket, closed } = await within(openRawTo(url), 5_000, `connect to ${url}`);
        let answer = '';
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
        // Only the head: a server that took this for 100-continue would invite the body and wait for it.
        socket.write(`POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nExpect: ${expect}\r\n\r\n`);
        await within(closed, 5_000, `${url} to close after the 417 to ${expect}`);
        assert.match(answer, /^HTTP\/1\.1 417 Expectation Failed\r\n/, `${url} ${expect}: ${JSON.stringify(answer)}`);
        assert.match(answer, /\r\n\r\nExpectation Failed: the only expectation this server meets is Expect: 100-continue\.\n$/, `${url} ${expect}`);
        assert.not.match(answer, '100 Continue', `${url} ${expect}`);
      }
    }
  });
  assert.is(handed, 0);
});

test('Expect: 100-continue in any case, or repeated, is still invited at once for a listener of its own, over http and https', async () => {
  const echo = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => res.end(`got ${body}`));
  };
  await withServers(echo, {}, async ({ urls }) => {
    for (const url of urls) {
      for (const expect of ['100-Continue', '100-continue\r\nExpect: 100-CONTINUE']) {
        const { socket } = await within(openRawTo(url), 5_000, `connect to ${url}`);
        const head = `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nExpect: ${expect}\r\n\r\n`;
        const invited = await within(exchange(socket, head, (text) => text.includes('\r\n\r\n')), 5_000, `${url} to invite the body`);
        assert.is(invited, 'HTTP/1.1 100 Continue\r\n\r\n', `${url} ${JSON.stringify(expect)}`);
        const answer = await within(exchange(socket, 'hi', answered('got hi')), 5_000, `${url} to answer`);
        assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/, url);
        socket.destroy();
      }
    }
  });
});

test('request headers over maxHeaderSize are answered 431', async () => {
  await withServers(hello, { httpsPort: null }, async ({ urls }) => {
    const big = 'a'.repeat(DEFAULT_LIMITS.maxHeaderSize + 1024);
    const answer = await rawExchange(portOf(urls[0]!), `GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: ${big}\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/i);
  });
});

test('a head of more than 2000 header fields is a 431 saying so, rather than served without those past node\'s count; 2000 are served', async () => {
  await withServers(hello, { httpsPort: null, limits: { maxHeaderSize: 64 * 1024 } }, async ({ urls }) => {
    const head = (fields: number): string => `GET / HTTP/1.1\r\nHost: localhost\r\n${'X: 1\r\n'.repeat(fields - 2)}Connection: close\r\n\r\n`;
    const served = await rawExchange(portOf(urls[0]!), head(2000));
    assert.match(served, /^HTTP\/1\.1 200 OK\r\n/);
    const refused = await rawExchange(portOf(urls[0]!), head(2001));
    assert.match(refused, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    assert.ok(refused.endsWith('\r\n\r\nRequest Header Fields Too Large: The request has more than 2000 header fields.\n'), refused);
  });
});

test('a URL that alone reaches maxHeaderSize is answered 414, naming the limit', async () => {
  await withServers(hello, { httpsPort: null, limits: { maxHeaderSize: 1024 } }, async ({ urls }) => {
    const answer = await rawExchange(portOf(urls[0]!), `GET /${'a'.repeat(2048)} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 414 URI Too Long\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assert.ok(answer.endsWith('\r\n\r\nURI Too Long: The request target (URL) alone reaches the 1024-byte limit of the request line and headers.\n'), answer);
  });
});

for (const scheme of ['http', 'https'] as const) {
  test(`close waits for an in-flight slow response, tells it Connection: close, then resolves (${scheme})`, async () => {
    let received!: () => void;
    const requestArrived = new Promise<void>((resolve) => (received = resolve));
    let closeResolved = false;
    let closeResolvedBeforeResponseEnded: boolean | undefined;
    const slow = (_req: IncomingMessage, res: ServerResponse) => {
      received();
      setTimeout(() => {
        closeResolvedBeforeResponseEnded = closeResolved;
        res.end('finally');
      }, 300);
    };
    const running = await within(startServers(slow, { host: '127.0.0.1', port: 0, httpsPort: 0, tls }), 5_000, 'startServers');
    const url = running.urls[scheme === 'http' ? 0 : 1]!;
    const port = portOf(url);
    const keepAlive = new Agent({ keepAliveTimeout: 30_000, connect: { ca: tls.cert } });
    try {
      const pending = request(url, { dispatcher: keepAlive });
      await within(requestArrived, 5_000, 'request arrival');

      const closing = running.close().then(() => (closeResolved = true));
      const response = await within(pending, 5_000, 'slow response');
      assert.is(closeResolvedBeforeResponseEnded, false, 'close() waits while the response is in flight');
      assert.is(response.statusCode, 200);
      assert.is(response.headers.connection, 'close');
      assert.is(await response.body.text(), 'finally');

      // Well before the 5 s keep-alive timeout: the finished connection is not left idling.
      await within(closing, 2_000, 'close after the response');
      const refused = await within(
        new Promise<string>((resolve) => {
          const socket = connect({ host: '127.0.0.1', port });
          socket.on('connect', () => {
            socket.destroy();
            resolve('connected');
          });
          socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
        }),
        5_000,
        'connect after close',
      );
      assert.is(refused, 'ECONNREFUSED');
    } finally {
      await within(running.close(), 5_000, 'close');
      await keepAlive.close();
    }
  });
}

test('close cuts a response still running after shutdownTimeout', async () => {
  let received!: () => void;
  const requestArrived = new Promise<void>((resolve) => (received = resolve));
  const never = (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200);
    res.write('started');
    received();
  };
  const running = await within(
    startServers(never, { host: '127.0.0.1', port: 0, httpsPort: 0, tls, limits: { shutdownTimeout: 200 } }),
    5_000,
    'startServers',
  );
  try {
    const pending = Promise.all(
      running.urls.map(async (url) => {
        const response = await request(url, { dispatcher: agent });
        return response.body.text().then(
          () => 'ended',
          () => 'cut',
        );
      }),
    );
    await within(requestArrived, 5_000, 'request arrival');
    const started = Date.now();
    await within(running.close(), 3_000, 'close with a stuck response');
    assert.ok(Date.now() - started >= 150, 'waited for the shutdown timeout first');
    assert.equal(await within(pending, 5_000, 'client sees the cut'), ['cut', 'cut']);
  } finally {
    await within(running.close(), 5_000, 'close');
  }
});

test('a terminate listener that throws is logged (critical) and the server keeps serving', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.REQUEST, (event: RequestEvent) => void event.request.attributes.set('_controller', () => new Response('ok')));
  dispatcher.addListener(KernelEvents.TERMINATE, () => {
    throw new Error('terminate broke');
  });
  const bus = createBus();
  const records: Array<{ levelName: string; message: string }> = [];
  bus.on('log', ({ record }) => void records.push(record));
  const listener = createRequestListener(new HttpKernel(dispatcher, new ControllerResolver()), { logger: new Logger({ bus }) });
  await withServers(listener, {}, async (running) => {
    for (let i = 0; i < 2; i++) {
      const response = await request(running.urls[0]!);
      assert.is(await response.body.text(), 'ok');
    }
  });
  assert.equal(records.filter((record) => record.message === 'kernel.terminate failed: Error: terminate broke').map((record) => record.levelName), ['CRITICAL', 'CRITICAL']);
});

test('a request whose head was still arriving when close() began is answered with Connection: close', async () => {
  const running = await within(startServers(hello, { host: '127.0.0.1', port: 0, httpsPort: null }), 5_000, 'startServers');
  try {
    const socket = connect({ host: '127.0.0.1', port: portOf(running.urls[0]!) });
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    // The head without its final blank line: the connection is busy, not idle, when close() begins.
    socket.write('GET /late HTTP/1.1\r\nHost: localhost\r\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = running.close();
    socket.write('\r\n');
    await within(ended, 5_000, 'the server ends the connection');
    await within(closing, 5_000, 'close');
    assert.match(received, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(received, /\r\nConnection: close\r\n/i);
    assert.ok(received.endsWith('hello over http'), received);
  } finally {
    await within(running.close(), 5_000, 'close');
  }
});

test('a request without a Host header (HTTP/1.0) is addressed by the local address and port it arrived at', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.REQUEST, (event: RequestEvent) => {
    const seen = event.request;
    // A sub-request made from it (as for an error page) is addressed the same way, also when it is
    // made before anything asked the request for its address.
    const sub = seen.duplicate();
    event.setResponse(new Response(`${seen.uri} ${seen.host} ${seen.port} ${sub.uri}`));
  });
  const listener = createRequestListener(new HttpKernel(dispatcher, new ControllerResolver()));
  await withServers(listener, { httpsPort: null }, async ({ urls }) => {
    const port = portOf(urls[0]!);
    const answer = await rawExchange(port, 'GET /where?x=1 HTTP/1.0\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.ok(answer.endsWith(`\r\n\r\nhttp://127.0.0.1:${port}/where?x=1 127.0.0.1 ${port} http://127.0.0.1:${port}/where?x=1`), answer);
  });
});

test('a stream given after an await keeps what is left of the response timeout by the monotonic clock: a wall clock set a day ahead meanwhile does not cut it', async () => {
  let release: () => void = () => {};
  const answered = new Promise<void>((resolve) => (release = resolve));
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.REQUEST, async (event: RequestEvent) => {
    await answered;
    // Its first chunk comes a little later: a timer of the time already used up fires before it.
    const body = Readable.from((async function* () {
      await new Promise((resolve) => setTimeout(resolve, 20));
      yield 'streamed';
    })());
    event.setResponse(new Response(body, 200, { 'content-type': 'text/plain' }));
  });
  const listener = createRequestListener(new HttpKernel(dispatcher, new ControllerResolver()));
  await withServers(listener, { httpsPort: null, limits: { responseTimeout: 5_000 } }, async ({ urls }) => {
    const realNow = Date.now;
    try {
      const pending = request(`${urls[0]!}/stream`, { dispatcher: agent });
      await new Promise((resolve) => setTimeout(resolve, 50));
      // NTP steps the clock while the controller waits: no time has passed.
      Date.now = () => realNow() + 86_400_000;
      release();
      const response = await within(pending, 5_000, 'the streamed answer');
      assert.is(response.statusCode, 200);
      assert.is(await response.body.text(), 'streamed');
    } finally {
      Date.now = realNow;
    }
  });
});

test('a server error after listening goes to onError instead of ending the process', async () => {
  const seen: string[] = [];
  await withServers(hello, { onError: (error) => seen.push(error.message) }, async ({ servers }) => {
    for (const server of servers) server.emit('error', new Error('accept EMFILE'));
    assert.equal(seen, ['accept EMFILE', 'accept EMFILE']);
    const still = await within(request(`http://127.0.0.1:${(servers[0]!.address() as { port: number }).port}/`, { dispatcher: agent }), 5_000, 'request');
    assert.is(still.statusCode, 200);
    await still.body.text();
  });
});

test('close() leaves no timer of its own behind: a process that closes its servers on a signal exits then, not when the shutdown timeout or the first-request grace would have run out', async () => {
  const timers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
  const before = timers();
  const running = await within(startServers(hello, { host: '127.0.0.1', port: 0, httpsPort: 0, tls, limits: { shutdownTimeout: 60_000 } }), 5_000, 'startServers');
  const { socket, closed } = await within(openRawTo(running.urls[0]!), 5_000, 'connect');
  await within(exchange(socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', answered('hello over http')), 5_000, 'the answer');
  await within(running.close(), 5_000, 'close');
  await within(closed, 5_000, 'the kept connection to close');
  assert.is(timers(), before);
});

test('close is idempotent', async () => {
  const running = await within(startServers(hello, { host: '127.0.0.1', port: 0, httpsPort: 0, tls }), 5_000, 'startServers');
  const first = running.close();
  const second = running.close();
  assert.is(first, second);
  await within(Promise.all([first, second]), 5_000, 'close');
  await within(running.close(), 5_000, 'close again');
  for (const server of running.servers) assert.is(server.listening, false);
});

test('a port in use rejects with EADDRINUSE and leaves no listener behind', async () => {
  await withServers(hello, { httpsPort: null }, async ({ urls }) => {
    const taken = portOf(urls[0]!);
    try {
      await within(startServers(hello, { host: '127.0.0.1', port: 0, httpsPort: taken, tls }), 5_000, 'startServers');
      assert.unreachable('expected EADDRINUSE');
    } catch (error) {
      assert.is((error as NodeJS.ErrnoException).code, 'EADDRINUSE');
    }
  });
});

/** Has node's resolver answer `addresses` for localhost until the returned function is called (as /etc/hosts would list them); other names resolve as ever. */
function localhostResolvingTo(addresses: string[]): () => void {
  const real = dnsPromises.lookup;
  // As the resolver answers: every address with `all: true`, else the first alone.
  dnsPromises.lookup = (async (host: string, options: LookupAllOptions) => {
    if (host !== 'localhost') return real(host, options);
    const found = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    return options?.all === true ? found : found[0];
  }) as typeof real;
  return () => void (dnsPromises.lookup = real);
}

test('on localhost, each scheme listens on every address localhost resolves to, both on the one port port 0 picked', async () => {
  const restore = localhostResolvingTo(['127.0.0.1', '::1']);
  try {
    await withServers(hello, { host: 'localhost' }, async ({ urls, listening, notListening, ports, servers }) => {
      const [http, https] = [ports.http, ports.https!];
      assert.equal(urls, [`http://localhost:${http}`, `https://localhost:${https}`], 'one per scheme, as before');
      assert.equal(listening, [`http://127.0.0.1:${http}`, `http://[::1]:${http}`, `https://127.0.0.1:${https}`, `https://[::1]:${https}`]);
      assert.equal(notListening, []);
      assert.is(servers.length, 4);
      assert.equal(servers.slice(0, 2).map((server) => (server.address() as AddressInfo).address), ['127.0.0.1', '127.0.0.1'], 'the first of each scheme first');
      for (const url of listening) {
        const response = await within(request(url, { dispatcher: agent }), 5_000, url);
        assert.is(await response.body.text(), `hello over ${url.startsWith('https:') ? 'https' : 'http'}`, url);
      }
    });
  } finally {
    restore();
  }
});

test('localhost. (the fully qualified name, RFC 6761) is localhost: each scheme listens on every address localhost resolves to, its URLs as given', async () => {
  const restore = localhostResolvingTo(['127.0.0.1', '::1']);
  try {
    await withServers(hello, { host: 'localhost.' }, async ({ urls, listening, ports }) => {
      const [http, https] = [ports.http, ports.https!];
      assert.equal(urls, [`http://localhost.:${http}`, `https://localhost.:${https}`]);
      assert.equal(listening, [`http://127.0.0.1:${http}`, `http://[::1]:${http}`, `https://127.0.0.1:${https}`, `https://[::1]:${https}`]);
    });
  } finally {
    restore();
  }
});

test('an address of localhost that cannot be listened on (no IPv6 on the machine) is left out, with why, and the others serve', async () => {
  // ::2 is on no interface here: EADDRNOTAVAIL, as ::1 is on a machine without IPv6.
  const restore = localhostResolvingTo(['127.0.0.1', '::2']);
  try {
    await withServers(hello, { host: 'localhost' }, async ({ listening, notListening, ports, servers }) => {
      assert.equal(listening, [`http://127.0.0.1:${ports.http}`, `https://127.0.0.1:${ports.https}`]);
      assert.equal(notListening.map(({ url }) => url), [`http://[::2]:${ports.http}`, `https://[::2]:${ports.https}`]);
      for (const { error } of notListening) assert.is((error as NodeJS.ErrnoException).code, 'EADDRNOTAVAIL');
      assert.is(servers.length, 2);
      const response = await within(request(listening[0]!, { dispatcher: agent }), 5_000, 'request');
      assert.is(await response.body.text(), 'hello over http');
    });
  } finally {
    restore();
  }
});

/** A port free on 127.0.0.1 that a server of the test holds on ::1: what another program listening on ::1 alone leaves. */
async function portTakenOnIpv6Only(): Promise<{ port: number; release(): Promise<void> }> {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen({ host: '::1', port: 0 }, () => resolve()));
  return { port: (holder.address() as AddressInfo).port, release: () => new Promise<void>((resolve) => holder.close(() => resolve())) };
}

/** Whether something accepts connections on host:port. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

test('on localhost, a port taken on another of its addresses (::1 only) rejects with EADDRINUSE and leaves no listener: a client trying ::1 first would reach another server', async () => {
  const restore = localhostResolvingTo(['127.0.0.1', '::1']);
  const taken = await portTakenOnIpv6Only();
  try {
    try {
      const running = await within(startServers(hello, { host: 'localhost', port: taken.port, httpsPort: null }), 5_000, 'startServers');
      await running.close();
      assert.unreachable(`expected EADDRINUSE, got ${JSON.stringify({ listening: running.listening, notListening: running.notListening.map(({ url }) => url) })}`);
    } catch (error) {
      assert.is((error as NodeJS.ErrnoException).code, 'EADDRINUSE', String(error));
    }
    assert.is(await accepts('127.0.0.1', taken.port), false, 'no listener left on 127.0.0.1');
  } finally {
    await taken.release();
    restore();
  }
});

test('on localhost with port 0, a port the first address got that is taken on another is given up for one free on both', async () => {
  const restore = localhostResolvingTo(['127.0.0.1', '::1']);
  // Another program on ::1 holds the first port the kernel hands out on 127.0.0.1, as may happen by chance.
  const realListen = Server.prototype.listen;
  const holders: NetServer[] = [];
  Server.prototype.listen = function (this: Server, ...args: unknown[]) {
    const given = args[0] as { host?: string; port?: number };
    if (holders.length === 0 && given.host === '::1' && given.port !== 0) {
      const holder = createServer();
      holders.push(holder);
      holder.listen({ host: '::1', port: given.port }, () => realListen.apply(this, args as Parameters<typeof realListen>));
      return this;
    }
    return realListen.apply(this, args as Parameters<typeof realListen>);
  } as typeof realListen;
  try {
    await withServers(hello, { host: 'localhost', httpsPort: null }, async ({ listening, notListening, ports }) => {
      assert.is(holders.length, 1, 'the port first picked was taken on ::1');
      assert.is.not(ports.http, (holders[0]!.address() as AddressInfo).port);
      assert.equal(listening, [`http://127.0.0.1:${ports.http}`, `http://[::1]:${ports.http}`]);
      assert.equal(notListening, []);
    });
  } finally {
    Server.prototype.listen = realListen;
    for (const holder of holders) holder.close();
    restore();
  }
});

test('on localhost, a first address on no interface here (::1 where IPv6 is off) is left out too, and the next serves', async () => {
  const restore = localhostResolvingTo(['::2', '127.0.0.1']);
  try {
    await withServers(hello, { host: 'localhost', httpsPort: null }, async ({ urls, listening, notListening, ports }) => {
      assert.equal(urls, [`http://localhost:${ports.http}`]);
      assert.equal(listening, [`http://127.0.0.1:${ports.http}`]);
      assert.equal(notListening.map(({ url }) => url), [`http://[::2]:${ports.http}`]);
    });
  } finally {
    restore();
  }
});

/** Has Server.prototype.listen run `instead` for each call it answers (a function that returns true), the real listen otherwise, until the returned function is called. */
function listenCalls(instead: (server: Server, given: { host?: string; port?: number }) => boolean): () => void {
  const realListen = Server.prototype.listen;
  Server.prototype.listen = function (this: Server, ...args: unknown[]) {
    if (instead(this, args[0] as { host?: string; port?: number })) return this;
    return realListen.apply(this, args as Parameters<typeof realListen>);
  } as typeof realListen;
  return () => void (Server.prototype.listen = realListen);
}

/** What startServers rejected with, or fails the test once it started. */
async function startFailure(options: Partial<ListenOptions>): Promise<NodeJS.ErrnoException> {
  const running = await within(startServers(hello, { host: 'localhost', port: 0, httpsPort: null, ...options }), 5_000, 'startServers').catch((error: NodeJS.ErrnoException) => error);
  if (!(running instanceof Error)) {
    await running.close();
    assert.unreachable(`expected the start to fail, it listens on ${running.listening.join(', ')}`);
  }
  return running as NodeJS.ErrnoException;
}

test('on localhost, an address that says EAFNOSUPPORT (an address family the machine lacks) is left out as EADDRNOTAVAIL is; when none of its addresses can be listened on, the start fails with the first\'s error', async () => {
  const restore = localhostResolvingTo(['127.0.0.1', '::9']);
  const restoreListen = listenCalls((server, given) => {
    if (given.host !== '::9') return false;
    process.nextTick(() => server.emit('error', Object.assign(new Error(`listen EAFNOSUPPORT: address family not supported ::9:${given.port}`), { code: 'EAFNOSUPPORT' })));
    return true;
  });
  try {
    await withServers(hello, { host: 'localhost', httpsPort: null }, async ({ listening, notListening, ports }) => {
      assert.equal(listening, [`http://127.0.0.1:${ports.http}`]);
      assert.equal(notListening.map(({ url, error }) => [url, (error as NodeJS.ErrnoException).code]), [[`http://[::9]:${ports.http}`, 'EAFNOSUPPORT']]);
    });
  } finally {
    restoreListen();
    restore();
  }
  const restoreNone = localhostResolvingTo(['::2', '::3']);
  try {
    const error = await startFailure({});
    assert.is(error.code, 'EADDRNOTAVAIL', String(error));
    assert.is((error as NodeJS.ErrnoException & { address?: string }).address, '::2');
  } finally {
    restoreNone();
  }
});

test('on localhost, port 0 is picked again at most five times when the port picked is taken on another of its addresses, then the start fails with EADDRINUSE; a port given is never picked again', async () => {
  const restore = localhostResolvingTo(['127.0.0.1', '::1']);
  // Another program on ::1 holds every port the kernel hands out on 127.0.0.1.
  const held: number[] = [];
  const firstTries: Array<number | undefined> = [];
  const restoreListen = listenCalls((server, given) => {
    if (given.host === '127.0.0.1') firstTries.push(given.port);
    if (given.host !== '::1' || given.port === 0) return false;
    held.push(given.port!);
    process.nextTick(() => server.emit('error', Object.assign(new Error(`listen EADDRINUSE: address already in use ::1:${given.port}`), { code: 'EADDRINUSE' })));
    return true;
  });
  try {
    const error = await startFailure({});
    assert.is(error.code, 'EADDRINUSE', String(error));
    assert.is(held.length, 5, `ports tried on ::1: ${held.join(', ')}`);
    assert.equal(firstTries, [0, 0, 0, 0, 0]);
    // A port free on 127.0.0.1 (the ::1 side is refused as above).
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen({ host: '127.0.0.1', port: 0 }, () => resolve()));
    const free = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    held.length = 0;
    firstTries.length = 0;
    const given = await startFailure({ port: free });
    assert.is(given.code, 'EADDRINUSE', String(given));
    assert.equal(firstTries, [free], 'one try on 127.0.0.1');
  } finally {
    restoreListen();
    restore();
  }
});

test('an IP address, or a name other than localhost, is listened on once per scheme, and listening is urls', async () => {
  await withServers(hello, {}, async ({ urls, listening, notListening }) => {
    assert.equal(listening, urls);
    assert.equal(notListening, []);
  });
});

/** Resolves once `done()` holds (checked every 10 ms); rejects after `ms`. */
function until(done: () => boolean, ms: number, what: string): Promise<void> {
  return within(
    new Promise<void>((resolve) => {
      const check = () => (done() ? resolve() : setTimeout(check, 10));
      check();
    }),
    ms,
    what,
  );
}

/** A listener that never answers /hang, streams /stream slowly, and answers /big with more than a socket buffers. */
function slowListener(events: string[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    res.on('close', () => events.push(`${req.url} closed ${res.writableFinished ? 'finished' : 'unfinished'}`));
    if (req.url === '/hang') return;
    if (req.url === '/stream') {
      res.setHeader('content-type', 'text/plain');
      let sent = 0;
      const timer = setInterval(() => {
        res.write(`chunk ${sent}\n`);
        if (++sent === 12) {
          clearInterval(timer);
          res.end();
        }
      }, 60);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (req.url === '/big') {
      const chunk = Buffer.alloc(64 * 1024, 120);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', pump);
      pump();
      return;
    }
    hello(req, res);
  };
}

test('a connection on which nothing moves for idleTimeout is dropped, over http and https', async () => {
  const events: string[] = [];
  await withServers(slowListener(events), { limits: { idleTimeout: 200 } }, async ({ urls }) => {
    for (const url of urls) {
      const started = Date.now();
      const failed = await within(
        request(`${url}/hang`, { dispatcher: agent }).then(
          () => null,
          (error: Error) => error,
        ),
        5_000,
        `idle request over ${url}`,
      );
      const elapsed = Date.now() - started;
      assert.ok(failed instanceof Error, `a request left unanswered over ${url} fails once its connection is dropped`);
      assert.ok(elapsed >= 190 && elapsed < 2_000, `dropped after ${elapsed} ms (timeout 200 ms, checked every 50 ms)`);
    }
    await until(() => events.length === 2, 2_000, 'both responses to close');
    assert.equal(events, ['/hang closed unfinished', '/hang closed unfinished']);
  });
});

test('a response that keeps writing is never dropped as idle, over http and https, however long it takes', async () => {
  const events: string[] = [];
  await withServers(slowListener(events), { limits: { idleTimeout: 200 } }, async ({ urls }) => {
    for (const url of urls) {
      // 12 chunks 60 ms apart: 720 ms, while the client sends nothing after its request.
      const response = await within(request(`${url}/stream`, { dispatcher: agent }), 5_000, 'stream head');
      const body = await within(response.body.text(), 5_000, 'stream body');
      assert.is(body.split('\n').filter(Boolean).length, 12, `every chunk arrived over ${url}`);
    }
    await until(() => events.length === 2, 2_000, 'both responses to close');
    assert.equal(events, ['/stream closed finished', '/stream closed finished']);
  });
});

/** A raw connection to one of the servers (TLS for https), its closing time once it closes. */
function openRawTo(url: string): Promise<{ socket: Socket | TLSSocket; closed: Promise<number> }> {
  const port = portOf(url);
  const socket = url.startsWith('https:') ? tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ca: tls.cert }) : connect({ host: '127.0.0.1', port });
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  return new Promise((resolve, reject) => {
    socket.once(url.startsWith('https:') ? 'secureConnect' : 'connect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

/** Writes a request on `socket` and resolves with what came back once `done` says the answer is whole. */
function exchange(socket: Socket | TLSSocket, payload: string, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      if (!done(text)) return;
      socket.off('data', onData);
      resolve(text);
    };
    socket.on('data', onData);
    socket.write(payload);
  });
}

const answered = (body: string) => (text: string) => text.endsWith(body);

test('a connection that waits for its next request, or its first, is closed after keepAliveTimeout and node\'s one-second margin, over http and https', async () => {
  await withServers(hello, { limits: { keepAliveTimeout: 300 } }, async ({ urls }) => {
    for (const url of urls) {
      const { socket, closed } = await within(openRawTo(url), 5_000, `connect to ${url}`);
      const body = url.startsWith('https:') ? 'hello over https' : 'hello over http';
      const first = await within(exchange(socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', answered(body)), 5_000, 'first answer');
      assert.match(first, /\r\nKeep-Alive: timeout=0\r\n/i);
      // Still open within the keep-alive time: a second request on it is served.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await within(exchange(socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', answered(body)), 5_000, 'second answer');
      const answeredAt = Date.now();
      const closedAt = await within(closed, 5_000, `the kept connection over ${url} to close`);
      // 300 ms advertised, 1,000 ms of margin, checked every 325 ms.
      assert.ok(closedAt - answeredAt >= 1_250 && closedAt - answeredAt < 2_500, `closed ${closedAt - answeredAt} ms after its last answer over ${url}`);
      // A connection that never sends a request waits for its first one as long.
      const silent = await within(openRawTo(url), 5_000, `connect to ${url}`);
      const openedAt = Date.now();
      const silentClosedAt = await within(silent.closed, 5_000, `the silent connection over ${url} to close`);
      assert.ok(silentClosedAt - openedAt >= 1_250 && silentClosedAt - openedAt < 2_500, `a silent connection closed after ${silentClosedAt - openedAt} ms over ${url}`);
    }
  });
});

test('a request that came while the event loop was busy as its connection\'s keep-alive time ran out is answered, not reset (a proxy reusing the connection would answer its client 502), over http and https', async () => {
  // Answered a moment later, as an application that reads a body or a database does: a sweep that dropped the
  // connection once its request had been read, rather than keeping it, would cut the answer before it went out.
  const helloLater = (req: IncomingMessage, res: ServerResponse): void => void setTimeout(() => hello(req, res), 50);
  await withServers(helloLater, { limits: { keepAliveTimeout: 1 } }, async ({ urls }) => {
    for (const url of urls) {
      const { socket, closed } = await within(openRawTo(url), 5_000, `connect to ${url}`);
      const body = url.startsWith('https:') ? 'hello over https' : 'hello over http';
      await within(exchange(socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', answered(body)), 5_000, 'first answer');
      // Time for a check (every 250 ms) to see the connection quiet since that answer; the next request goes out
      // within the keep-alive time (1 ms and node's one-second margin), as nginx reuses a connection it keeps.
      await new Promise((resolve) => setTimeout(resolve, 400));
      const second = exchange(socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', answered(body));
      // Then the event loop is held past that time (a long synchronous task, a GC pause): the idle check, a
      // timer, runs before the request waiting in the socket is read.
      for (const end = performance.now() + 1_500; performance.now() < end; );
      const outcome = await within(Promise.race([second, closed.then(() => 'the connection closed with no answer')]), 5_000, `the second answer over ${url}`);
      assert.ok(outcome.endsWith(body), `over ${url}: ${outcome}`);
      // And the connection is kept: the request that came was activity, as if the sweep had seen it.
      const third = exchange(socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', answered(body));
      const again = await within(Promise.race([third, closed.then(() => 'the connection closed with no answer')]), 5_000, `the third answer over ${url}`);
      assert.ok(again.endsWith(body), `over ${url}, the third request: ${again}`);
      socket.destroy();
    }
  });
});

for (const from of ['a timer', 'a read\'s callback (as a signal\'s handler)'] as const) {
  test(`a request that came on a kept connection while the event loop was busy as close() began from ${from} is answered with Connection: close, not reset, over http and https`, async () => {
    let drain: (() => void) | undefined;
    const listener = (req: IncomingMessage, res: ServerResponse): void => {
      if (req.url === '/drain') drain?.();
      hello(req, res);
    };
    await withServers(listener, {}, async (running) => {
      const kept = await Promise.all(running.urls.map(async (url) => ({ url, ...(await within(openRawTo(url), 5_000, `connect to ${url}`)) })));
      const bodies = kept.map(({ url }) => (url.startsWith('https:') ? 'hello over https' : 'hello over http'));
      for (const [i, { socket }] of kept.entries()) await within(exchange(socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', answered(bodies[i]!)), 5_000, 'first answer');
      await new Promise((resolve) => setTimeout(resolve, 100));
      // The next request goes out on each kept connection (a proxy reusing it, a POST it may not retry); the
      // event loop is then held (a long synchronous task), and close() begins before node has read those requests.
      let seconds: Array<Promise<string>> = [];
      let closing: Promise<void> | undefined;
      const sendHoldAndClose = (): void => {
        seconds = kept.map(({ socket }, i) => exchange(socket, 'POST /form HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\nok', answered(bodies[i]!)));
        for (const end = performance.now() + 500; performance.now() < end; );
        closing = running.close();
      };
      if (from === 'a timer') sendHoldAndClose();
      else {
        // In the poll phase, where a SIGTERM's handler runs: the requests came after the loop looked at its sockets.
        drain = sendHoldAndClose;
        const other = await within(openRawTo(running.urls[0]!), 5_000, 'connect');
        await within(exchange(other.socket, 'GET /drain HTTP/1.1\r\nHost: localhost\r\n\r\n', answered('hello over http')), 5_000, 'the answer to /drain');
      }
      const outcomes = await Promise.all(
        kept.map(({ url, closed }, i) => within(Promise.race([seconds[i]!, closed.then(() => 'the connection closed with no answer')]), 5_000, `the second answer over ${url}`)),
      );
      for (const [i, { url }] of kept.entries()) {
        const outcome = outcomes[i]!;
        assert.match(outcome, /^HTTP\/1\.1 200 OK\r\n/, `over ${url}: ${outcome}`);
        assert.match(outcome, /\r\nConnection: close\r\n/i, `over ${url}: ${outcome}`);
        assert.ok(outcome.endsWith(bodies[i]!), `over ${url}: ${outcome}`);
      }
      await within(closing!, 2_000, 'close once the requests are answered');
    });
  });
}

/**
 * Starts servers with `listener`, catching the idle sweep's timer (made while startServers runs synchronously)
 * so a test can run a sweep when it chooses rather than wait for one.
 */
async function withIdleSweep(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  options: Partial<ListenOptions>,
  body: (running: RunningServers, sweep: () => void) => Promise<void>,
): Promise<void> {
  const sweeps: Array<() => void> = [];
  const realSetInterval = globalThis.setInterval;
  globalThis.setInterval = ((callback: () => void, ms?: number) => {
    sweeps.push(callback);
    return realSetInterval(callback, ms);
  }) as typeof setInterval;
  let starting: Promise<RunningServers>;
  try {
    starting = startServers(listener, { host: '127.0.0.1', port: 0, httpsPort: 0, tls, ...options });
  } finally {
    globalThis.setInterval = realSetInterval;
  }
  const running = await within(starting, 5_000, 'startServers');
  try {
    assert.is(sweeps.length, 1, 'one timer, the idle sweep');
    await body(running, sweeps[0]!);
  } finally {
    await within(running.close(), 5_000, 'close');
  }
}

test('the idle sweep counts quiet time by the monotonic clock: a wall clock set a day ahead drops no connection, over http and https', async () => {
  const held: ServerResponse[] = [];
  const holding = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.url === '/hang') held.push(res);
    else hello(req, res);
  };
  await withIdleSweep(holding, {}, async ({ urls }, sweep) => {
    const realNow = Date.now;
    try {
      for (const url of urls) {
        held.length = 0;
        // One whose request waits for its answer, one waiting for its next request.
        const busy = await within(openRawTo(url), 5_000, `connect to ${url}`);
        busy.socket.write('GET /hang HTTP/1.1\r\nHost: localhost\r\n\r\n');
        await until(() => held.length === 1, 5_000, 'the request to reach the listener');
        const kept = await within(openRawTo(url), 5_000, `connect to ${url}`);
        await within(exchange(kept.socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', answered(url.startsWith('https:') ? 'hello over https' : 'hello over http')), 5_000, 'the answer');
        // The sweep sees their last bytes; then NTP steps the clock (a VM resumed): the wall clock jumps, no time has passed.
        sweep();
        Date.now = () => realNow() + 86_400_000;
        sweep();
        Date.now = realNow;
        assert.not.ok(held[0]!.socket!.destroyed, `the connection awaiting its answer over ${url} is kept`);
        held[0]!.end('late');
        await within(exchange(kept.socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', answered(url.startsWith('https:') ? 'hello over https' : 'hello over http')), 5_000, `a second request on the kept connection over ${url}`);
        busy.socket.destroy();
        kept.socket.destroy();
      }
    } finally {
      Date.now = realNow;
    }
  });
});

test('the idle sweep counts quiet time by the monotonic clock: a wall clock set back a day still closes a kept-alive connection, over http and https', async () => {
  await withIdleSweep(hello, { limits: { keepAliveTimeout: 1 } }, async ({ urls }, sweep) => {
    const realNow = Date.now;
    try {
      for (const url of urls) {
        const { socket, closed } = await within(openRawTo(url), 5_000, `connect to ${url}`);
        await within(exchange(socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', answered(url.startsWith('https:') ? 'hello over https' : 'hello over http')), 5_000, 'the answer');
        // The sweep sees its last bytes; then the wall clock is set back.
        sweep();
        Date.now = () => realNow() - 86_400_000;
        // Past the keep-alive time and node's one-second margin, by the monotonic clock.
        const quietSince = performance.now();
        await until(() => performance.now() - quietSince > 1_100, 5_000, 'the keep-alive time to pass');
        sweep();
        await within(closed, 5_000, `the kept connection over ${url} to close`);
        Date.now = realNow;
      }
    } finally {
      Date.now = realNow;
    }
  });
});

test('each 0 turns its own rule of the idle sweep off: idleTimeout 0 drops no connection waiting for its answer, keepAliveTimeout 0 closes no kept connection (idleTimeout does), over http and https', async () => {
  const held: ServerResponse[] = [];
  const holding = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.url === '/hang') held.push(res);
    else hello(req, res);
  };
  const quietSweeps = async (sweep: () => void): Promise<void> => {
    // The first sees the last bytes; the second finds the connection quiet since; a drop would come once the loop has polled.
    sweep();
    await new Promise((resolve) => setTimeout(resolve, 50));
    sweep();
    await new Promise((resolve) => setTimeout(resolve, 20));
  };
  await withIdleSweep(holding, { limits: { idleTimeout: 0, keepAliveTimeout: 1 } }, async ({ urls }, sweep) => {
    for (const url of urls) {
      held.length = 0;
      const busy = await within(openRawTo(url), 5_000, `connect to ${url}`);
      busy.socket.write('GET /hang HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await until(() => held.length === 1, 5_000, 'the request to reach the listener');
      await quietSweeps(sweep);
      assert.not.ok(held[0]!.socket!.destroyed, `the connection awaiting its answer over ${url} is kept`);
      held[0]!.end('late');
      busy.socket.destroy();
    }
  });
  await withIdleSweep(hello, { limits: { keepAliveTimeout: 0 } }, async ({ urls }, sweep) => {
    for (const url of urls) {
      const body = url.startsWith('https:') ? 'hello over https' : 'hello over http';
      const kept = await within(openRawTo(url), 5_000, `connect to ${url}`);
      await within(exchange(kept.socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', answered(body)), 5_000, 'the first answer');
      await quietSweeps(sweep);
      const second = await within(Promise.race([exchange(kept.socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', answered(body)), kept.closed.then(() => 'closed')]), 5_000, `a second request on the kept connection over ${url}`);
      assert.ok(second.endsWith(body), `over ${url}: ${second}`);
      kept.socket.destroy();
    }
  });
});

test('the idle sweep runs every second, or every quarter of the shorter of idleTimeout and keepAliveTimeout (plus its one-second margin) when that is shorter, at least every millisecond; with both 0 there is none', async () => {
  const sweepDelays = async (limits: ListenOptions['limits']): Promise<Array<number | undefined>> => {
    const delays: Array<number | undefined> = [];
    const realSetInterval = globalThis.setInterval;
    globalThis.setInterval = ((callback: () => void, ms?: number) => {
      delays.push(ms);
      return realSetInterval(callback, ms);
    }) as typeof setInterval;
    let starting: Promise<RunningServers>;
    try {
      starting = startServers(hello, { host: '127.0.0.1', port: 0, httpsPort: null, limits });
    } finally {
      globalThis.setInterval = realSetInterval;
    }
    const running = await within(starting, 5_000, 'startServers');
    await within(running.close(), 5_000, 'close');
    return delays;
  };
  // The defaults, 60 s idle and 5 s keep-alive (6 s with the margin): every second.
  assert.equal(await sweepDelays({}), [1_000]);
  assert.equal(await sweepDelays({ idleTimeout: 3_000, keepAliveTimeout: 20_000 }), [750]);
  assert.equal(await sweepDelays({ idleTimeout: 200 }), [50]);
  // Keep-alive alone: 300 ms and the margin, 1,300 ms.
  assert.equal(await sweepDelays({ idleTimeout: 0, keepAliveTimeout: 300 }), [325]);
  assert.equal(await sweepDelays({ idleTimeout: 60_000, keepAliveTimeout: 0 }), [1_000]);
  // A quarter rounded down, and never 0 ms (which setInterval reads as 1 ms anyway).
  assert.equal(await sweepDelays({ idleTimeout: 7, keepAliveTimeout: 0 }), [1]);
  assert.equal(await sweepDelays({ idleTimeout: 2, keepAliveTimeout: 0 }), [1]);
  assert.equal(await sweepDelays({ idleTimeout: 0, keepAliveTimeout: 0 }), []);
});

test('a head that stalls mid-way is the head timeout\'s (a 408), not dropped by the keep-alive rule, over http and https', async () => {
  await withServers(hello, { limits: { keepAliveTimeout: 300, headersTimeout: 2_500 } }, async ({ urls }) => {
    for (const url of urls) {
      const { socket, closed } = await within(openRawTo(url), 5_000, `connect to ${url}`);
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n');
      const sentAt = Date.now();
      const closedAt = await within(closed, 6_000, `the stalled head over ${url} to be refused`);
      // The keep-alive rule (300 ms and 1 s of margin) would have closed it silently after 1.3-2.5 s.
      assert.ok(closedAt - sentAt >= 2_400, `closed ${closedAt - sentAt} ms after the half head over ${url}`);
      assert.match(text, /^HTTP\/1\.1 408 Request Timeout\r\n/, `${url}: ${JSON.stringify(text.slice(0, 60))}`);
    }
  });
});

test('a request whose body fails after its response went out gets no second answer: the connection just closes, over http and https', async () => {
  const big = 'x'.repeat(3_000_000);
  const early = (req: IncomingMessage, res: ServerResponse): void => {
    res.setHeader('content-type', 'text/plain');
    res.end(req.url === '/big' ? big : 'early');
  };
  await withServers(early, {}, async ({ urls }) => {
    for (const url of urls) {
      for (const [path, body] of [['/small', 'early'], ['/big', big]] as const) {
        const { socket, closed } = await within(openRawTo(url), 5_000, `connect to ${url}`);
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.write(`POST ${path} HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello`);
        await until(() => text.length > 0, 5_000, 'the early answer to begin');
        // The rest of the body is malformed: the parser fails after the answer has begun (or ended).
        socket.write('XX\r\n');
        await within(closed, 5_000, `the connection over ${url} to close`);
        assert.is(text.match(/HTTP\/1\.1 /g)?.length, 1, `${url}${path}: one answer, got ${JSON.stringify(text.slice(0, 40))}...${JSON.stringify(text.slice(-80))}`);
        assert.ok(text.endsWith(body), `${url}${path}: the answer went out whole (${text.length} characters)`);
      }
    }
  });
});

test('a request pipelined behind an upgrade request is not answered out of step: the connection closes after the upgrade request\'s answer', async () => {
  await withServers(hello, {}, async ({ urls }) => {
    for (const url of urls) {
      const { socket, closed } = await within(openRawTo(url), 5_000, `connect to ${url}`);
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      socket.write('GET /first HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nGET /second HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await within(closed, 5_000, `the connection over ${url} to close`);
      assert.is(text.match(/HTTP\/1\.1 200 /g)?.length, 1, `${url}: ${JSON.stringify(text)}`);
      assert.match(text, /\r\nConnection: close\r\n/i);
    }
  });
});

test('a request line of another HTTP version is a 400 saying which versions are spoken; one with a method node does not know (FOO, get) stays a 400, as bytes that are no request line', async () => {
  await withServers(hello, { httpsPort: null }, async ({ urls }) => {
    const port = portOf(urls[0]!);
    for (const [payload, status] of [
      ['FOO / HTTP/1.1\r\nHost: localhost\r\n\r\n', '400 Bad Request'],
      ['get / HTTP/1.1\r\nHost: localhost\r\n\r\n', '400 Bad Request'],
      ['GET / HTTP/2.0\r\nHost: localhost\r\n\r\n', '400 Bad Request\r\n[^]*\r\n\r\nBad Request: This server speaks HTTP/1.0 and HTTP/1.1.\n$'],
      ['GET / HTTP/0.9\r\n\r\n', '400 Bad Request\r\n[^]*\r\n\r\nBad Request: This server speaks HTTP/1.0 and HTTP/1.1.\n$'],
      ['\x16\x03\x01\x02\x00\r\n\r\n', '400 Bad Request'],
    ] as const) {
      const answer = await rawExchange(port, payload);
      assert.match(answer, new RegExp(`^HTTP/1\\.1 ${status}`), `${JSON.stringify(payload.slice(0, 20))}: ${JSON.stringify(answer.slice(0, 60))}`);
    }
  });
});

test('the HTTP/2 connection preface (prior knowledge) is a 400 saying which versions are spoken, over http and https, also pipelined behind a request', async () => {
  await withServers(hello, {}, async ({ urls }) => {
    for (const url of urls) {
      for (const before of ['', 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n']) {
        const { socket, closed } = await within(openRawTo(url), 5_000, `connect to ${url}`);
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.write(`${before}PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`);
        await within(closed, 5_000, `the connection over ${url} to close`);
        const refusal = text.slice(text.lastIndexOf('HTTP/1.1 '));
        assert.match(refusal, /^HTTP\/1\.1 400 Bad Request\r\n[^]*\r\n\r\nBad Request: This server speaks HTTP\/1\.0 and HTTP\/1\.1\.\n$/, `${url} ${JSON.stringify(text)}`);
        if (before !== '') assert.match(text, /^HTTP\/1\.1 200 OK\r\n[^]*hello over https?HTTP\/1\.1 400 /, `${url}: the request before is answered first`);
      }
    }
  });
});

test('a pipelined request is handled once the ones before it are answered when it or one of them is unsafe; safe ones still run side by side, over http and https', async () => {
  const events: string[] = [];
  // `/slow` answers after 100 ms: without the order, what was pipelined behind it would run meanwhile.
  const recording = (req: IncomingMessage, res: ServerResponse): void => {
    const name = `${req.method} ${req.url}`;
    events.push(`start ${name}`);
    req.resume();
    setTimeout(() => {
      events.push(`end ${name}`);
      res.end(name);
    }, req.url === '/slow' ? 100 : 0);
  };
  await withServers(recording, {}, async ({ urls }) => {
    for (const url of urls) {
      for (const [burst, order] of [
        [['PUT /slow', 'DELETE /a', 'GET /a'], ['start PUT /slow', 'end PUT /slow', 'start DELETE /a', 'end DELETE /a', 'start GET /a', 'end GET /a']],
        [['GET /slow', 'POST /a', 'GET /b'], ['start GET /slow', 'end GET /slow', 'start POST /a', 'end POST /a', 'start GET /b', 'end GET /b']],
        [['GET /slow', 'HEAD /a', 'OPTIONS /b'], ['start GET /slow', 'start HEAD /a', 'start OPTIONS /b', 'end HEAD /a', 'end OPTIONS /b', 'end GET /slow']],
      ] as const) {
        events.length = 0;
        const { socket } = await within(openRawTo(url), 5_000, `connect to ${url}`);
        try {
          const payload = burst.map((line) => `${line} HTTP/1.1\r\nHost: localhost\r\n${line.startsWith('P') ? 'Content-Length: 2\r\n\r\nok' : '\r\n'}`).join('');
          const last = burst.at(-1)!;
          const answer = await within(exchange(socket, payload, (text) => text.endsWith(last)), 5_000, `the answers over ${url}`);
          assert.equal(events, [...order], `${url} ${burst.join(', ')}`);
          assert.is(answer.match(/HTTP\/1\.1 200 /g)?.length, 3, `${url}: ${JSON.stringify(answer)}`);
        } finally {
          socket.destroy();
        }
      }
    }
  });
});

test('a pipelined request held back behind a slow answer has its body timed from when it is handed over, not from its head: no 408 for a client that sent it at once, over http and https', async () => {
  // `/slow` answers after 2 s, past the 500 ms request timeout; the body behind it is larger than the socket buffers hold.
  const counting = (req: IncomingMessage, res: ServerResponse): void => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => setTimeout(() => res.end(`${req.method} ${req.url} ${bytes}`), req.url === '/slow' ? 2_000 : 0));
  };
  const body = 'x'.repeat(2_000_000);
  await withServers(counting, { limits: { requestTimeout: 500, headersTimeout: 500 } }, async ({ urls }) => {
    for (const url of urls) {
      const { socket } = await within(openRawTo(url), 5_000, `connect to ${url}`);
      try {
        const payload = `POST /slow HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\nPOST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
        const answer = await within(exchange(socket, payload, (text) => /POST \/upload \d+$|Request Timeout/.test(text)), 8_000, `the answers over ${url}`);
        assert.ok(answer.endsWith(`POST /upload ${body.length}`), `${url}: ${JSON.stringify(answer.slice(-200))}`);
      } finally {
        socket.destroy();
      }
    }
  });
  // Its body stalling once it is handed over still gets the 408, the request timeout after the hand-over.
  const answering = (req: IncomingMessage, res: ServerResponse): void => {
    req.resume();
    req.on('end', () => setTimeout(() => res.end('slow'), req.url === '/slow' ? 600 : 0));
  };
  await withServers(answering, { limits: { requestTimeout: 500, headersTimeout: 500 } }, async ({ urls }) => {
    for (const url of urls) {
      const { socket, closed } = await within(openRawTo(url), 5_000, `connect to ${url}`);
      const payload = 'POST /slow HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\nPOST /stalls HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\nab';
      const answer = await within(exchange(socket, payload, (text) => text.includes('Request Timeout: ')), 8_000, `the 408 over ${url}`);
      assert.match(answer, /^HTTP\/1\.1 200 [^]*slowHTTP\/1\.1 408 Request Timeout/);
      await within(closed, 5_000, `the connection over ${url} to close`);
    }
  });
});

test('a request that takes longer than keepAliveTimeout to answer keeps its connection, over http and https', async () => {
  const late = (_req: IncomingMessage, res: ServerResponse): void => {
    setTimeout(() => res.end('late'), 1_800);
  };
  await withServers(late, { limits: { keepAliveTimeout: 100 } }, async ({ urls }) => {
    for (const url of urls) {
      const { socket } = await within(openRawTo(url), 5_000, `connect to ${url}`);
      try {
        // 1.8 s without a byte either way, past the 1.1 s of keep-alive and margin: a request is in flight.
        const answer = await within(exchange(socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', answered('late')), 5_000, `the late answer over ${url}`);
        assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
      } finally {
        socket.destroy();
      }
    }
  });
});

test('a client that stops reading a large response is dropped once the writes stall', async () => {
  const events: string[] = [];
  await withServers(slowListener(events), { httpsPort: null, limits: { idleTimeout: 200 } }, async ({ urls }) => {
    const socket = connect({ host: '127.0.0.1', port: portOf(urls[0]!) });
    socket.on('error', () => {});
    socket.write('GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n');
    socket.pause();
    try {
      // The paused client cannot see the connection end: the server's side of it tells.
      await until(() => events.length === 1, 5_000, 'the stalled response to close');
    } finally {
      socket.destroy();
    }
    assert.equal(events, ['/big closed unfinished']);
  });
});

/**
 * A dispatcher whose controller throws `Error(message(path))` and whose kernel.exception listener
 * rethrows the error it was given, as it is: the error escapes handle() with no "thrown while handling".
 */
function escapingDispatcher(message: (path: string) => string = () => 'failed'): EventDispatcher {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.REQUEST, (event: RequestEvent) => {
    event.request.attributes.set('_controller', () => {
      throw new Error(message(event.request.path));
    });
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    throw event.error;
  });
  return dispatcher;
}

test('createRequestListener\'s unhandled page: a promised Response is sent; one that throws, rejects or is no Response gets the bare 500; kernel.terminate follows each', async () => {
  const dispatcher = escapingDispatcher((path) => `failed at ${path}`);
  const terminated: Array<[string, number]> = [];
  dispatcher.addListener(KernelEvents.TERMINATE, (event: TerminateEvent) => void terminated.push([event.request.path, event.response.status]));
  const bus = createBus();
  const records: Array<{ levelName: string; message: string; context: Record<string, unknown> }> = [];
  bus.on('log', ({ record }) => void records.push(record));
  const pages: Record<string, (error: unknown) => unknown> = {
    '/async': async (error) => new Response(`sorry: ${(error as Error).message}`, 503),
    '/throws': () => {
      throw new Error('the page broke');
    },
    '/rejects': async () => {
      throw new Error('the page broke later');
    },
    '/not-a-response': () => ({ status: 200, body: 'a look-alike' }),
  };
  const listener = createRequestListener(new HttpKernel(dispatcher, new ControllerResolver()), {
    logger: new Logger({ bus }),
    unhandled: (error, request) => pages[request.path]!(error) as Response | Promise<Response>,
  });
  await withServers(listener, { httpsPort: null }, async ({ urls }) => {
    for (const path of Object.keys(pages)) {
      const response = await within(request(`${urls[0]!}${path}`), 5_000, path);
      const text = await response.body.text();
      if (path === '/async') {
        assert.is(response.statusCode, 503);
        assert.is(text, 'sorry: failed at /async');
      } else {
        assert.is(response.statusCode, 500, path);
        assert.is(text, 'Internal Server Error\n', path);
      }
    }
  });
  assert.equal(terminated, [['/async', 503], ['/throws', 500], ['/rejects', 500], ['/not-a-response', 500]]);
  const critical = records.filter((record) => record.levelName === 'CRITICAL');
  // The listener rethrew the error itself: logged as it is, with no handled error beside it.
  assert.equal(critical.map((record) => record.message), Object.keys(pages).map((path) => `Unhandled error: Error: failed at ${path}`));
  assert.ok(critical.every((record) => !('handled' in record.context)));
});

test('createRequestListener\'s unhandled page that never settles holds neither the answer nor settled(): past the grace a bare 500 goes out, logged, and kernel.terminate follows before settled() resolves', async () => {
  const dispatcher = escapingDispatcher();
  const terminated: Array<[string, number]> = [];
  dispatcher.addListener(KernelEvents.TERMINATE, (event: TerminateEvent) => void terminated.push([event.request.path, event.response.status]));
  const bus = createBus();
  const records: Array<{ levelName: string; message: string }> = [];
  bus.on('log', ({ record }) => void records.push(record));
  const listener = createRequestListener(new HttpKernel(dispatcher, new ControllerResolver()), {
    logger: new Logger({ bus }),
    unhandled: () => new Promise<Response>(() => {}),
  });
  await withServers(listener, { httpsPort: null }, async ({ urls }) => {
    const answer = within(request(`${urls[0]!}/hang`), 5_000, 'the answer');
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The page is still awaited: settled() (app.close()) waits for the request's kernel.terminate.
    const atSettled = await within(listener.settled().then(() => [...terminated]), 5_000, 'settled()');
    assert.equal(atSettled, [['/hang', 500]]);
    const response = await answer;
    assert.is(response.statusCode, 500);
    assert.is(await response.body.text(), 'Internal Server Error\n');
  });
  assert.equal(terminated, [['/hang', 500]]);
  assert.equal(
    records.filter((record) => record.levelName === 'CRITICAL').map((record) => record.message),
    ['Unhandled error: Error: failed', 'The error page was not ready within 500 ms, so a bare 500 was sent for Error: failed'],
  );
});

test('an unhandled page that fails after the grace is logged once at ERROR as the request\'s, after the bare 500 went; one that fails with the error it was for is not logged again', async () => {
  for (const sameError of [false, true]) {
    const dispatcher = escapingDispatcher();
    const bus = createBus();
    const entries: Array<{ levelName: string; message: string; path: unknown }> = [];
    bus.on('log', ({ record, request }) => void entries.push({ levelName: record.levelName, message: record.message, path: (request as { path?: unknown } | undefined)?.path }));
    let late: Promise<unknown> = Promise.resolve();
    const kernel = new HttpKernel(dispatcher, new ControllerResolver());
    const listener = createRequestListener(kernel, {
      logger: new Logger({ bus, currentRequest: () => kernel.requestStack.getCurrentRequest() ?? undefined }),
      // Twice the grace: the bare 500 has gone by then, whatever the load.
      unhandled: (error) => {
        const page = new Promise<Response>((_, reject) => setTimeout(() => reject(sameError ? error : new Error('page broke')), ERROR_PAGE_GRACE_MS * 2));
        late = page.catch(() => undefined);
        return page;
      },
    });
    await withServers(listener, { httpsPort: null }, async ({ urls }) => {
      const response = await within(request(`${urls[0]!}/late-page`), 5_000, 'the answer');
      assert.is(response.statusCode, 500);
      assert.is(await response.body.text(), 'Internal Server Error\n');
      await within(late, 5_000, 'the late page');
      await new Promise((resolve) => setImmediate(resolve));
    });
    assert.equal(
      entries.filter((entry) => entry.levelName === 'CRITICAL').map((entry) => entry.message),
      ['Unhandled error: Error: failed', 'The error page was not ready within 500 ms, so a bare 500 was sent for Error: failed'],
    );
    const errors = entries.filter((entry) => entry.levelName === 'ERROR');
    if (sameError) assert.equal(errors, [], 'the error was named already');
    else assert.equal(errors, [{ levelName: 'ERROR', message: 'The error page, given up on after 500 ms, failed later: Error: page broke (the page was for Error: failed)', path: '/late-page' }]);
  }
});

test('close() drops within a second a connection that has not sent a request yet, over http and https (a browser preconnect)', async () => {
  const running = await within(startServers(hello, { host: '127.0.0.1', port: 0, httpsPort: 0, tls }), 5_000, 'startServers');
  try {
    const [httpPort, httpsPort] = running.urls.map(portOf) as [number, number];
    const opened: Array<Socket | TLSSocket> = [
      connect({ host: '127.0.0.1', port: httpPort }),
      tlsConnect({ host: '127.0.0.1', port: httpsPort, ca: tls.cert, servername: 'localhost' }),
      connect({ host: '127.0.0.1', port: httpsPort }),
    ];
    const closed = opened.map((socket) => new Promise<void>((resolve) => socket.on('close', () => resolve())));
    for (const socket of opened) socket.on('error', () => {});
    await within(new Promise<void>((resolve) => (opened[1] as TLSSocket).once('secureConnect', () => resolve())), 5_000, 'handshake');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await within(running.close(), 5_000, 'close');
    await within(Promise.all(closed), 5_000, 'connections closed');
    assert.ok(Date.now() - started < 2_000, `close() took ${Date.now() - started} ms with connections that never sent a request`);
  } finally {
    await within(running.close(), 5_000, 'close');
  }
});

test('a first request that came while the event loop was busy as close()\'s one-second grace for it ran out is answered with Connection: close, not reset, over http and https', async () => {
  await withServers(hello, {}, async (running) => {
    const opened = await Promise.all(running.urls.map(async (url) => ({ url, ...(await within(openRawTo(url), 5_000, `connect to ${url}`)) })));
    const bodies = opened.map(({ url }) => (url.startsWith('https:') ? 'hello over https' : 'hello over http'));
    const closing = running.close();
    // Just inside the second close() gives a connection that has sent nothing, its first request goes out; the
    // event loop is then held past that second: the check, a timer, runs before the request is read.
    await new Promise((resolve) => setTimeout(resolve, 850));
    const firsts = opened.map(({ socket }, i) => exchange(socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', answered(bodies[i]!)));
    for (const end = performance.now() + 500; performance.now() < end; );
    const outcomes = await Promise.all(
      opened.map(({ url, closed }, i) => within(Promise.race([firsts[i]!, closed.then(() => 'the connection closed with no answer')]), 5_000, `the answer over ${url}`)),
    );
    for (const [i, { url }] of opened.entries()) {
      const outcome = outcomes[i]!;
      assert.match(outcome, /^HTTP\/1\.1 200 OK\r\n/, `over ${url}: ${outcome}`);
      assert.match(outcome, /\r\nConnection: close\r\n/i, `over ${url}: ${outcome}`);
      assert.ok(outcome.endsWith(bodies[i]!), `over ${url}: ${outcome}`);
    }
    await within(closing, 2_000, 'close once the requests are answered');
  });
});

test('close() drops within a second a connection whose request is answered but whose body is still coming, over http and https', async () => {
  const running = await within(startServers(hello, { host: '127.0.0.1', port: 0, httpsPort: 0, tls }), 5_000, 'startServers');
  try {
    const [httpPort, httpsPort] = running.urls.map(portOf) as [number, number];
    const stalled = 'POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\nabc';
    const opened: Array<Socket | TLSSocket> = [
      connect({ host: '127.0.0.1', port: httpPort }, function (this: Socket) {
        this.write(stalled);
      }),
      tlsConnect({ host: '127.0.0.1', port: httpsPort, ca: tls.cert, servername: 'localhost' }, function (this: TLSSocket) {
        this.write(stalled);
      }),
    ];
    const closed = opened.map((socket) => new Promise<void>((resolve) => socket.on('close', () => resolve())));
    const answered = opened.map((socket) => new Promise<void>((resolve) => socket.once('data', () => resolve())));
    for (const socket of opened) socket.on('error', () => {});
    await within(Promise.all(answered), 5_000, 'answers');
    const started = Date.now();
    await within(running.close(), 5_000, 'close');
    await within(Promise.all(closed), 5_000, 'connections closed');
    assert.ok(Date.now() - started < 2_000, `close() took ${Date.now() - started} ms with connections whose answers were sent`);
  } finally {
    await within(running.close(), 5_000, 'close');
  }
});

test('close() drops within a second a TLS connection whose handshake stalled half-way (no request can be in flight on it)', async () => {
  const running = await within(startServers(hello, { host: '127.0.0.1', port: 0, httpsPort: 0, tls }), 5_000, 'startServers');
  try {
    const httpsPort = portOf(running.urls[1]!);
    // A real ClientHello, captured from node's TLS client, sent whole, and then nothing more.
    const clientHello = await within(
      new Promise<Buffer>((resolve) => {
        const catcher = createServer((socket) => socket.once('data', (chunk: Buffer) => { resolve(chunk); socket.destroy(); catcher.close(); }));
        catcher.listen(0, '127.0.0.1', () => {
          const client = tlsConnect({ host: '127.0.0.1', port: (catcher.address() as { port: number }).port, rejectUnauthorized: false });
          client.on('error', () => {});
        });
      }),
      5_000,
      'client hello',
    );
    const stalled = connect({ host: '127.0.0.1', port: httpsPort });
    stalled.on('error', () => {});
    stalled.resume();
    const closed = new Promise<void>((resolve) => stalled.on('close', () => resolve()));
    await new Promise<void>((resolve) => stalled.once('connect', () => resolve()));
    stalled.write(clientHello);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    await within(running.close(), 5_000, 'close');
    await within(closed, 5_000, 'connection closed');
    assert.ok(Date.now() - started < 2_000, `close() took ${Date.now() - started} ms with a handshake stalled half-way`);
  } finally {
    await within(running.close(), 5_000, 'close');
  }
});

test('with the idle sweep off (idleTimeout and keepAliveTimeout 0), close() still drops within a second a connection that has sent no request, its TLS handshake done or not, or whose request is answered but whose body is still coming; a response in flight still goes out whole', async () => {
  let slowArrived!: () => void;
  const arrived = new Promise<void>((resolve) => (slowArrived = resolve));
  const slow = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.url !== '/slow') return hello(req, res);
    slowArrived();
    setTimeout(() => res.end('slow but whole'), 1_500);
  };
  const running = await within(startServers(slow, { host: '127.0.0.1', port: 0, httpsPort: 0, tls, limits: { idleTimeout: 0, keepAliveTimeout: 0 } }), 5_000, 'startServers');
  try {
    const [httpPort, httpsPort] = running.urls.map(portOf) as [number, number];
    const stalled = 'POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\nabc';
    const silent: Array<Socket | TLSSocket> = [
      connect({ host: '127.0.0.1', port: httpPort }),
      connect({ host: '127.0.0.1', port: httpsPort }),
      tlsConnect({ host: '127.0.0.1', port: httpsPort, ca: tls.cert, servername: 'localhost' }),
    ];
    const midBody: Array<Socket | TLSSocket> = [
      connect({ host: '127.0.0.1', port: httpPort }, function (this: Socket) {
        this.write(stalled);
      }),
      tlsConnect({ host: '127.0.0.1', port: httpsPort, ca: tls.cert, servername: 'localhost' }, function (this: TLSSocket) {
        this.write(stalled);
      }),
    ];
    const opened = [...silent, ...midBody];
    for (const socket of opened) socket.on('error', () => {});
    const closed = opened.map((socket) => new Promise<void>((resolve) => socket.on('close', () => resolve())));
    await within(new Promise<void>((resolve) => (silent[2] as TLSSocket).once('secureConnect', () => resolve())), 5_000, 'handshake');
    await within(Promise.all(midBody.map((socket) => new Promise<void>((resolve) => socket.once('data', () => resolve())))), 5_000, 'answers');
    const pending = request(`${running.urls[1]!}/slow`, { dispatcher: agent });
    await within(arrived, 5_000, 'the slow request');
    const started = Date.now();
    const closing = running.close();
    await within(Promise.all(closed), 5_000, 'connections closed');
    assert.ok(Date.now() - started < 1_400, `the connections closed ${Date.now() - started} ms after close() began`);
    const response = await within(pending, 5_000, 'the slow response');
    assert.is(response.headers.connection, 'close');
    assert.is(await response.body.text(), 'slow but whole');
    await within(closing, 2_000, 'close once the slow response is sent');
  } finally {
    await within(running.close(), 5_000, 'close');
  }
});

test('a TLS handshake has headersTimeout to finish, not node\'s 120 s: a client that connects to the https port and says nothing is dropped then', async () => {
  await withServers(hello, { limits: { headersTimeout: 300, idleTimeout: 0, keepAliveTimeout: 0 } }, async ({ urls }) => {
    const socket = connect({ host: '127.0.0.1', port: portOf(urls[1]!) });
    socket.on('error', () => {});
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
    await within(new Promise<void>((resolve) => socket.once('connect', () => resolve())), 5_000, 'connect');
    const connectedAt = Date.now();
    const closedAt = await within(closed, 3_000, 'the silent connection to close');
    assert.ok(closedAt - connectedAt >= 250, `closed ${closedAt - connectedAt} ms after it connected`);
  });
});

test('a TLS 1.2 client asking to renegotiate is refused (each would cost the server a handshake)', async () => {
  const running = await within(startServers(hello, { host: '127.0.0.1', port: 0, httpsPort: 0, tls }), 5_000, 'startServers');
  try {
    const socket = tlsConnect({ host: '127.0.0.1', port: portOf(running.urls[1]!), ca: tls.cert, servername: 'localhost', maxVersion: 'TLSv1.2' });
    socket.on('error', () => {});
    await within(new Promise<void>((resolve) => socket.once('secureConnect', () => resolve())), 5_000, 'handshake');
    const outcome = await within(
      new Promise<string>((resolve) => {
        const asked = socket.renegotiate({}, (error) => resolve(error ? String((error as NodeJS.ErrnoException).code ?? error.message) : 'renegotiated'));
        if (!asked) resolve('not asked');
        socket.once('close', () => resolve('closed'));
        // The server reads the renegotiation with what comes next.
        socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
      }),
      5_000,
      'renegotiation',
    );
    socket.destroy();
    assert.is.not(outcome, 'renegotiated');
  } finally {
    await within(running.close(), 5_000, 'close');
  }
});

test('createRequestListener() refuses an option it does not know (a typo: bodylimit would leave the default limit on), options that are no object and a kernel that is none', () => {
  const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver());
  const typo = (() => {
    try {
      createRequestListener(kernel, { bodylimit: 1024 } as never);
    } catch (error) {
      return error as Error;
    }
    return null;
  })();
  assert.instance(typo, TypeError);
  assert.is(typo!.message, 'createRequestListener() has no option "bodylimit"; its options are trustedProxies, trustedHosts, bodyLimit, logger, unhandled, bodyCloseWaitMs.');
  assert.throws(() => createRequestListener(kernel, null as never), /^createRequestListener\(\) takes a plain object of options \(\{ trustedProxies, bodyLimit \}\), not null\.$/);
  assert.throws(() => createRequestListener(null as never), /createRequestListener\(\) serves an HttpKernel \(new HttpKernel\(dispatcher, resolver\), or createKernel\(\)'s app\.kernel\), not null\./);
  assert.throws(() => createRequestListener({ handle: () => null } as never), /not an object of type Object\./);
  assert.type(createRequestListener(kernel, { bodyLimit: 1024, bodyCloseWaitMs: 0 }), 'function');
  class Options {
    bodyLimit = 1024;
  }
  for (const [options, kind] of [[new Map([['bodyLimit', 1024]]), 'Map'], [[], 'Array'], [new Options(), 'Options']] as const) {
    assert.throws(() => createRequestListener(kernel, options as never), new RegExp(`^createRequestListener\\(\\) takes a plain object of options \\(\\{ trustedProxies, bodyLimit \\}\\), not an object of type ${kind}\\.$`), kind);
  }
  assert.type(createRequestListener(kernel, Object.assign(Object.create(null) as object, { bodyLimit: 1024 })), 'function');
});

test.run();
