// Starts a real server (http and https on 127.0.0.1, port 0) for the integration tests,
// and an undici client that trusts its freshly made development certificate.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import tls from 'node:tls';
import { Agent, request as undiciRequest } from 'undici';
import { createApp, createKernel, type AppOptions, type KernelApp, type KernelOptions } from '../../lib/app/index.js';
import type { Controller } from '../../kernel/index.js';
import { MemoryStorage } from '../../lib/profiler/storage/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { loadOrCreateDevCertificate } from '../../lib/server/tls-certificate.js';
import { startServers, type Limits, type RunningServers } from '../../lib/server/listen.js';
import type { NodeRequestListener } from '../../lib/server/node-adapter.js';

/** A running test server. */
export interface TestServer {
  app: KernelApp;
  urls: { http: string; https: string };
  running: RunningServers;
  agent: Agent;
  close(): Promise<void>;
}

/** The schemes every client-visible behaviour is checked over. */
export const SCHEMES = ['http', 'https'] as const;

let certificate: Promise<{ key: string; cert: string }> | undefined;
let certDir: string | undefined;

/** The development certificate of the test run, made once (and removed at exit). */
export function devCertificate(): Promise<{ key: string; cert: string }> {
  if (certificate === undefined) {
    certDir = mkdtempSync(join(tmpdir(), 'http-kernel-test-tls-'));
    certificate = loadOrCreateDevCertificate(certDir);
    process.once('exit', () => rmSync(certDir!, { recursive: true, force: true }));
  }
  return certificate;
}

/** Serves the reference app (or a kernel made from `kernelOptions`) over http and https. */
/** Resolves once `check` holds, polling every 10 ms; fails after `ms`, naming `what` did not happen. */
export async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  for (const end = Date.now() + ms; !check(); ) {
    if (Date.now() > end) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A route per path (named after it, without its slash), each answered by its controller. */
export function routesOf(controllers: Record<string, Controller>): RouteCollection {
  const collection = new RouteCollection();
  for (const [path, controller] of Object.entries(controllers)) collection.add(path.slice(1), new Route(path, { defaults: { _controller: controller } }));
  return collection;
}

export async function startTestServer(options: { app?: AppOptions; kernel?: KernelOptions; limits?: Partial<Limits> } = {}): Promise<TestServer> {
  // Profiles stay in memory unless a test asks for files: the tests never write into the checkout.
  const profiler = { storage: new MemoryStorage() };
  const app = options.kernel ? createKernel({ stderrLogLevel: false, profiler, ...options.kernel }) : createApp({ stderrLogLevel: false, profiler, ...options.app });
  const served = await serveListener(app.listener, options.limits);
  return {
    ...served,
    app,
    async close() {
      await served.close();
      await app.close();
    },
  };
}

/** A request listener served over http and https by startServers, with a client that trusts it. */
export interface ListenerServer {
  urls: { http: string; https: string };
  running: RunningServers;
  agent: Agent;
  /** Closes the client, then the servers. */
  close(): Promise<void>;
}

/** Serves a listener of a test's own (an embedder's kernel, listener options) as startTestServer serves an app's. */
export async function serveListener(listener: NodeRequestListener, limits: Partial<Limits> = {}): Promise<ListenerServer> {
  const tls = await devCertificate();
  const running = await startServers(listener, { host: '127.0.0.1', port: 0, httpsPort: 0, tls, limits: { shutdownTimeout: 2000, ...limits } });
  const [http, https] = running.urls as [string, string];
  const agent = new Agent({ connect: { ca: tls.cert }, connections: 256 });
  return {
    urls: { http, https },
    running,
    agent,
    async close() {
      await agent.close();
      await running.close();
    },
  };
}

/** A response read whole. */
export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Sends one request to the test server and reads the whole body. */
export async function fetchFrom(
  server: TestServer,
  scheme: 'http' | 'https',
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; dispatcher?: Agent; signal?: AbortSignal } = {},
): Promise<TestResponse> {
  const response = await undiciRequest(`${server.urls[scheme]}${path}`, {
    method: (init.method ?? 'GET') as 'GET',
    headers: init.headers,
    body: init.body,
    dispatcher: init.dispatcher ?? server.agent,
    signal: init.signal,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const body = await response.body.text();
  return { status: response.statusCode, headers: response.headers, body };
}

/** Turns the entities our HTML escaping writes back into text, to compare messages. */
export function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** An agent whose connections leave from `localAddress` (127.0.0.2, say), over http and https. */
export function agentFrom(localAddress: string): Agent {
  return new Agent({
    connect: (options, callback) => {
      const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
      const secure = options.protocol === 'https:';
      const socket = secure
        ? tls.connect({ host: options.hostname, port, localAddress, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] } as tls.ConnectionOptions)
        : net.connect({ host: options.hostname, port, localAddress });
      socket.once(secure ? 'secureConnect' : 'connect', () => callback(null, socket));
      socket.once('error', (error) => callback(error, null));
    },
  });
}

/**
 * Writes raw bytes to the test server (requests undici refuses to send: malformed targets, duplicate
 * headers, a chunked body in pieces; `latin1`: bytes of one character each) and reads whatever comes back until the server closes or `waitMs` passes.
 */
export function sendRaw(server: Pick<TestServer, 'urls'>, scheme: 'http' | 'https', pieces: string | readonly string[], options: { gapMs?: number; waitMs?: number; latin1?: boolean } = {}): Promise<string> {
  const port = Number(new URL(server.urls[scheme]).port);
  const socket = scheme === 'https' ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : net.connect(port, '127.0.0.1');
  const queue = typeof pieces === 'string' ? [pieces] : [...pieces];
  return new Promise((resolve) => {
    let received = '';
    const timer = setTimeout(() => socket.destroy(), options.waitMs ?? 2_000);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    // A reset after the answer is the server closing early: what was received is still the answer.
    socket.on('error', () => {});
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    const writeNext = (): void => {
      const piece = queue.shift();
      if (piece === undefined || socket.destroyed) return;
      // `latin1`: each character one byte (an obs-text byte such as 0xA0 in a header), not UTF-8.
      socket.write(options.latin1 === true ? Buffer.from(piece, 'latin1') : piece, () => setTimeout(writeNext, options.gapMs ?? 0));
    };
    socket.once(scheme === 'https' ? 'secureConnect' : 'connect', writeNext);
  });
}

/** A response as a client that follows RFC 9112 6.3 reads it; `complete` is false when the connection ended inside its body. */
export interface WireResponse {
  status: number;
  head: string;
  headers: Record<string, string[]>;
  body: string;
  complete: boolean;
}

/**
 * Reads the responses in `bytes` one after the other, delimiting each body the way a client must
 * (no body for HEAD, 1xx, 204 and 304; chunked; Content-Length; else until the connection closed),
 * so a response framed wrong shows as the next one misread, or as bytes left over.
 */
export function readResponses(bytes: string, methods: readonly string[]): { responses: WireResponse[]; rest: string } {
  const responses: WireResponse[] = [];
  let at = 0;
  for (const method of methods) {
    if (at >= bytes.length) break;
    const headEnd = bytes.indexOf('\r\n\r\n', at);
    if (headEnd === -1) break;
    const head = bytes.slice(at, headEnd);
    const status = Number(/^HTTP\/1\.[01] (\d{3}) /.exec(head)?.[1] ?? 0);
    const headers: Record<string, string[]> = {};
    for (const line of head.split('\r\n').slice(1)) {
      const colon = line.indexOf(':');
      (headers[line.slice(0, colon).toLowerCase()] ??= []).push(line.slice(colon + 1).trim());
    }
    at = headEnd + 4;
    let body = '';
    let complete = true;
    if (method === 'HEAD' || status < 200 || status === 204 || status === 304) {
      // No body.
    } else if (headers['transfer-encoding'] !== undefined) {
      complete = false;
      for (;;) {
        const lineEnd = bytes.indexOf('\r\n', at);
        if (lineEnd === -1) break;
        const size = parseInt(bytes.slice(at, lineEnd), 16);
        if (Number.isNaN(size) || bytes.length < lineEnd + 2 + size + 2) break;
        at = lineEnd + 2 + size + 2;
        if (size === 0) {
          complete = true;
          break;
        }
        body += bytes.slice(lineEnd + 2, lineEnd + 2 + size);
      }
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length'][0]);
      body = bytes.slice(at, at + length);
      complete = body.length === length;
      at += body.length;
    } else {
      body = bytes.slice(at);
      at = bytes.length;
    }
    responses.push({ status, head, headers, body, complete });
    if (!complete) break;
  }
  return { responses, rest: bytes.slice(at) };
}

/** The status code of a raw HTTP/1.1 answer, or 0 when nothing came back. */
export function rawStatus(answer: string): number {
  return Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1] ?? 0);
}

/** A response header as one string ('' when absent; several values joined as node joins them). */
export function header(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

/** Polls until the profile is saved (saving happens after the response is sent); bounded. */
export async function savedProfile(server: TestServer, token: string): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const profile = await server.app.profiler!.storage.read(token);
    if (profile !== null) return profile;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`profile ${token} was not saved within 2 s`);
}
