import http, { type IncomingMessage, STATUS_CODES } from 'node:http';
import { constants } from 'node:crypto';
import dns from 'node:dns/promises';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { RequestTimeoutHttpError } from '../../kernel/index.js';
import { describeDuration } from '../../kernel/describe-duration.js';
import { trailerFieldsTooLarge } from '../../kernel/server-cut.js';
import { transferEncodingRefusal } from '../../kernel/transfer-coding.js';
import { describeValue } from '../../kernel/describe-value.js';
import { isPlainObject } from '../../kernel/name-value-object.js';
import { headOverflow } from './head-overflow.js';
import { listenInTurn, wasHeldBack } from './pipelined-order.js';
import { gatherPipelinedWrites, sendsGathered } from './pipelined-writes.js';
import { refusesHeadRequest } from './refused-method.js';
import type { TlsCredentials } from './tls-certificate.js';

/** Header, body and idle limits of the listeners, in milliseconds and bytes. */
export interface Limits {
  /** Largest request head (request line and headers) in bytes; more is answered 431, or 414 when the URL alone reaches it. */
  maxHeaderSize: number;
  /** Time a client has to send the complete request head; 0 turns it off. */
  headersTimeout: number;
  /** Time a client has to send the complete request, body included; 0 turns it off. */
  requestTimeout: number;
  /**
   * Time the request listener has, from the request's head, to start its response; then the kernel's
   * listener answers a 503 (ResponseTimeoutError) through its error path. Only for a listener that
   * answers it (see answersResponseTimeout); a response whose head went out is never cut by it. 0
   * turns it off. While a response has not begun, idleTimeout waits at least this long plus a
   * second, so that the 503 goes out first.
   */
  responseTimeout: number;
  /**
   * How long a connection waits for its next request once its last response is sent, or for its
   * first once it is open (advertised as `Keep-Alive: timeout=<s>`); 0 keeps it open until
   * idleTimeout. Checked with
   * idleTimeout, not by node's per-socket timer: the connection closes between one and two seconds
   * after the advertised time (node closes it one second after).
   */
  keepAliveTimeout: number;
  /**
   * Socket inactivity (nothing read or written) after which the connection is dropped; 0 turns it
   * off. Checked every second (every quarter of the timeout when that is shorter), so a connection
   * goes between idleTimeout and idleTimeout plus one check after its last byte.
   */
  idleTimeout: number;
  /** Requests served on one connection before it is closed; 0 is unlimited. */
  maxRequestsPerSocket: number;
  /** How long close() lets in-flight requests finish before it cuts their connections. */
  shutdownTimeout: number;
}

/** The limits used when ListenOptions.limits leaves one out. */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxHeaderSize: 16 * 1024,
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  responseTimeout: 30_000,
  keepAliveTimeout: 5_000,
  idleTimeout: 60_000,
  maxRequestsPerSocket: 0,
  shutdownTimeout: 10_000,
});

/** Where and how startServers listens. */
export interface ListenOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** `null`: no https listener. */
  httpsPort: number | null;
  /** Required when httpsPort is not null. */
  tls?: TlsCredentials;
  limits?: Partial<Limits>;
  /** Errors of a listening server itself (such as `accept EMFILE` when out of file descriptors); they never end the process. */
  onError?: (error: Error) => void;
}

/** The started listeners: their URLs in start order (http first) and a graceful, idempotent close. */
export interface RunningServers {
  /** One per scheme, on `host` as given (`http://localhost:8000`, then https's; an IPv6 zone as RFC 6874 writes it, `http://[fe80::1%25eth0]:8000`). */
  urls: string[];
  /**
   * One per listening address, in start order (http's, then https's): for `localhost`, each of
   * its addresses (`http://[::1]:8000`, `http://127.0.0.1:8000`); otherwise the same as `urls`.
   */
  listening: string[];
  /** Addresses of `localhost` on no interface here (::1 on a machine without IPv6), with why; served on the others. */
  notListening: Array<{ url: string; error: Error }>;
  /** The first listener of each scheme (http, then https), then those on localhost's other addresses. */
  servers: Array<http.Server | https.Server>;
  /** The port each scheme listens on (no `https` without its listener): `Object.assign(app.schemePorts, running.ports)`. */
  ports: { http: number; https?: number };
  /** Stops accepting, lets in-flight requests finish within shutdownTimeout, then cuts what is left. */
  close(): Promise<void>;
}

/** Marks a listener that answers `Expect: 100-continue` itself, once it reads the body: startServers then leaves that to it. */
export const answersExpectContinue: unique symbol = Symbol('http-kernel.answersExpectContinue');

/** Marks a listener that answers Limits.responseTimeout itself (createRequestListener's): startServers then hands it the limit. */
export const answersResponseTimeout: unique symbol = Symbol('http-kernel.answersResponseTimeout');

/** A request startServers answered in its head, which no listener saw: one node's parser refused, one without Host, a head that did not come in time, a CONNECT, an Expect other than 100-continue, plain http on the https port. */
export interface Refusal {
  status: number;
  /** What the answer's text says is wrong (`Transfer-Encoding can't be present with Content-Length.`); the status's reason phrase when it says nothing more. */
  reason: string;
  /** The address the connection came from (forwarding headers are not read: the head may be unreadable). */
  client: string | undefined;
}

/** Marks a listener's function, called with each Refusal: a listener never sees those requests, and createRequestListener's logs them. */
export const hearsRefusals: unique symbol = Symbol('http-kernel.hearsRefusals');

/** What hears the refusals of a listener marked with hearsRefusals. */
type RefusalHearer = ((refusal: Refusal) => void) | undefined;

/**
 * Tells `hearer` of a refusal: one that throws, or an async one that rejects, must neither keep the
 * answer from going out nor end the process (it runs in node's event handlers).
 */
function tell(hearer: RefusalHearer, refusal: Refusal): void {
  try {
    const heard: unknown = hearer?.(refusal);
    // `(refusal: Refusal) => void` takes an async function too: its rejection would be unhandled.
    if (typeof (heard as PromiseLike<unknown> | undefined)?.then === 'function') Promise.resolve(heard).catch(ignore);
  } catch {
    // The answer says what is wrong all the same.
  }
}

/**
 * Tells `hearer` of the refusal `res` answers once that answer has gone out: node never writes the
 * answers to requests pipelined behind one that closed the connection (a refusal), nor are they heard.
 */
function tellWhenSent(res: http.ServerResponse, hearer: RefusalHearer, refusal: Refusal): void {
  if (hearer !== undefined) res.once('finish', () => tell(hearer, refusal));
}

/**
 * The request handler both listeners share. `responseTimeout` is Limits.responseTimeout (0: off),
 * given to a listener marked with answersResponseTimeout; any other is never timed out.
 */
export type RequestListener = (req: IncomingMessage, res: http.ServerResponse, responseTimeout?: number) => void;

/** Status answered to a request the parser rejected, by parser error code; anything else is a 400. */
const CLIENT_ERROR_STATUS: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};
/** What a request of another HTTP version is told. */
const SPOKEN_VERSIONS = 'This server speaks HTTP/1.0 and HTTP/1.1.';
/** Most header fields a request may have: node:http's own count, past which it drops them silently. */
export const MAX_HEADER_FIELDS = 2000;
/** What a request is told whose head has more fields than that. */
export const TOO_MANY_FIELDS = `The request has more than ${MAX_HEADER_FIELDS} header fields.`;
/** What an HTTP/1.1 request without a Host (or with an empty one) is told. */
export const MISSING_HOST = 'An HTTP/1.1 request names the host it is for in a Host header.';
/** Errors that mean the peer is gone: nothing can be written back. */
const PEER_GONE = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
/** How often the headers and request timeouts are checked; Node's default (30 s) would let them overrun by that much. */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
/** Longest time between two idle checks (see Limits.idleTimeout). */
const IDLE_CHECK_INTERVAL_MS = 1_000;
/** Keep-alive timeout once close() has begun, so a connection whose response ends after that does not linger. */
const CLOSING_KEEP_ALIVE_MS = 1;
/** Once close() has begun, how long a connection that has sent nothing yet is given for its first request. */
const FIRST_REQUEST_GRACE_MS = 1_000;
/** The longest delay setTimeout takes as given (it reads a longer one as 1 ms). */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/**
 * How long createRequestListener waits, past the response timeout (or another error raised outside
 * handle()), for the error page before it sends the bare status instead: a page takes milliseconds,
 * and one whose listener hangs must not hold the answer. Below RESPONSE_TIMEOUT_MARGIN_MS, so that
 * even that bare 503 goes out before the idle check drops the connection.
 */
export const ERROR_PAGE_GRACE_MS = 500;
/** How long past the response timeout a connection whose response has not begun is kept, so that the listener's 503 (see ERROR_PAGE_GRACE_MS) goes out before the idle check drops it. */
const RESPONSE_TIMEOUT_MARGIN_MS = 1_000;
/** How long past the advertised keep-alive timeout a connection is kept, so that a client's request sent just in time is not met by a close (node's margin). */
const KEEP_ALIVE_MARGIN_MS = 1_000;

/**
 * Starts an http listener and, unless httpsPort is null, an https one, both serving `listener`;
 * resolves once both listen. On `localhost` (or `localhost.`), each listens on every address localhost resolves to, on one port.
 */
export async function startServers(listener: RequestListener, options: ListenOptions): Promise<RunningServers> {
  checkListenOptions(options);
  const limits = withDefaults(options.limits);
  const sockets = new Set<Socket>();
  const tlsSockets = new Set<Duplex>();

  const serverOptions: http.ServerOptions<typeof IncomingMessage, typeof http.ServerResponse> = {
    maxHeaderSize: limits.maxHeaderSize,
    headersTimeout: limits.headersTimeout,
    requestTimeout: limits.requestTimeout,
    connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    // refuseMalformedHead answers it, with a body saying what is missing (node's 400 has none).
    requireHostHeader: false,
  };
  const responseTimeout = (listener as { [answersResponseTimeout]?: true })[answersResponseTimeout] === true ? limits.responseTimeout : 0;
  const hearer = (listener as { [hearsRefusals]?: RefusalHearer })[hearsRefusals];
  // Expect: 100-continue goes unanswered to a listener that answers it when it reads the body
  // (createRequestListener's), so a body refused by its length or never read is not uploaded for
  // nothing; any other listener has it answered once its request is handed over (not for one refused
  // in its head), as node would. Node takes any Expect that mentions 100-continue (`100-continue, foo`)
  // for it: what asks for more is refused.
  const answersContinue = (listener as { [answersExpectContinue]?: true })[answersExpectContinue] === true;
  const served = refuseMalformedHead(listener, limits.keepAliveTimeout, responseTimeout, limits.requestTimeout, hearer, !answersContinue);
  if (options.httpsPort !== null && options.tls === undefined) throw new TypeError('startServers: options.tls is required when httpsPort is not null');
  const schemes: Array<{ scheme: 'http' | 'https'; port: number; make(): http.Server | https.Server }> = [{ scheme: 'http', port: options.port, make: () => http.createServer(serverOptions, served) }];
  if (options.httpsPort !== null) {
    const tlsOptions: https.ServerOptions<typeof IncomingMessage, typeof http.ServerResponse> = {
      ...serverOptions,
      key: options.tls!.key,
      cert: options.tls!.cert,
      // The handshake comes before the headers clock starts; bound it by the same budget.
      ...(limits.headersTimeout > 0 ? { handshakeTimeout: limits.headersTimeout } : {}),
      // A client's TLS 1.2 renegotiation serves nothing here, and costs the server a handshake each time (node allows three per 10 minutes).
      secureOptions: constants.SSL_OP_NO_RENEGOTIATION,
    };
    schemes.push({ scheme: 'https', port: options.httpsPort, make: () => https.createServer(tlsOptions, served) });
  }
  // Kept with both limits off too (no sweep then): close() asks it which connections carry no request.
  const idle = new IdleSockets(limits.idleTimeout, limits.keepAliveTimeout, responseTimeout);
  const create = (make: () => http.Server | https.Server): http.Server | https.Server => {
    const server = make();
    applyLimits(server, limits, sockets, tlsSockets, idle, hearer);
    server.on('checkContinue', (req: IncomingMessage, res: http.ServerResponse) => {
      if (!expectsOnlyContinue(req.headers.expect)) return refuseExpectation(req, res, hearer);
      continueAsked.add(req);
      server.emit('request', req, res);
    });
    return server;
  };

  const servers: Array<http.Server | https.Server> = [];
  const listening: string[] = [];
  const notListening: Array<{ url: string; error: Error }> = [];
  try {
    const addresses = await listenAddresses(options.host);
    const started = await Promise.allSettled(schemes.map(({ scheme, port, make }) => listenEverywhere(() => create(make), scheme, addresses, port)));
    for (const outcome of started) if (outcome.status === 'fulfilled') servers.push(outcome.value.servers[0]!);
    for (const outcome of started) if (outcome.status === 'fulfilled') servers.push(...outcome.value.servers.slice(1));
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    for (const outcome of started as Array<PromiseFulfilledResult<Listened>>) {
      listening.push(...outcome.value.listening);
      notListening.push(...outcome.value.notListening);
    }
  } catch (error) {
    idle.stop();
    await closeListening(servers);
    throw error;
  }

  for (const server of servers) server.on('error', options.onError ?? ignore);

  const listened = servers.slice(0, schemes.length).map((server) => (server.address() as AddressInfo).port);
  const urls = listened.map((port, i) => urlOf(schemes[i]!.scheme, options.host, port));

  let closed: Promise<void> | undefined;
  return {
    urls,
    listening,
    notListening,
    servers,
    // From the servers, not read back from the URLs: `new URL('http://h:80').port` is '', a default port left out.
    ports: listened.length === 1 ? { http: listened[0]! } : { http: listened[0]!, https: listened[1]! },
    close: () => (closed ??= closeGracefully(servers, sockets, tlsSockets, limits.shutdownTimeout, idle).finally(() => idle.stop())),
  };
}

/**
 * Where startServers listens for `host`: every address `localhost` resolves to (127.0.0.1 and ::1
 * where /etc/hosts lists both), since a client may try either first (curl tries ::1); any other
 * name or address as given, which node resolves to its first address (listening on all of a name's
 * addresses could open the server on more interfaces than meant).
 */
async function listenAddresses(host: string): Promise<string[]> {
  if (!isLocalhost(host)) return [host];
  // `localhost.` as `localhost`: resolvers that know the one from /etc/hosts may not know the other.
  const found = await dns.lookup('localhost', { all: true });
  return [...new Set(found.map(({ address }) => address))];
}

/** Errors that say an address is on no interface here (::1 on a machine without IPv6): it is left out, not the start's end. */
const ADDRESS_UNAVAILABLE = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT']);
/** How many times port 0 on localhost is picked before giving up on one free on each of its addresses. */
const FREE_PORT_ATTEMPTS = 5;

/** One scheme's listeners, one per address that could be listened on, and the addresses left out. */
interface Listened {
  servers: Array<http.Server | https.Server>;
  listening: string[];
  notListening: Array<{ url: string; error: Error }>;
}

/**
 * Listens on each of `addresses` (localhost's), all on one port: the port the first to listen got
 * when `port` is 0. An address on no interface here is left out, unless none is left. The port
 * taken on another address fails the start, as on the first: a client trying that address first
 * would reach another server. For port 0 another port is picked, as port 0 asks for a free one.
 */
async function listenEverywhere(create: () => http.Server | https.Server, scheme: string, addresses: readonly string[], port: number): Promise<Listened> {
  for (let attempt = 1; ; attempt++) {
    const servers: Array<http.Server | https.Server> = [];
    const listenedOn: string[] = [];
    const unavailable: Array<{ address: string; error: Error }> = [];
    let chosen = port;
    try {
      for (const address of addresses) {
        const server = create();
        try {
          await listenOn(server, address, chosen);
        } catch (error) {
          if (!ADDRESS_UNAVAILABLE.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
          unavailable.push({ address, error: error as Error });
          continue;
        }
        servers.push(server);
        listenedOn.push(address);
        chosen = (server.address() as AddressInfo).port;
      }
      if (servers.length === 0) throw unavailable[0]!.error;
      return { servers, listening: listenedOn.map((address) => urlOf(scheme, address, chosen)), notListening: unavailable.map(({ address, error }) => ({ url: urlOf(scheme, address, chosen), error })) };
    } catch (error) {
      const picked = port === 0 && servers.length > 0;
      await closeListening(servers);
      if (picked && (error as NodeJS.ErrnoException).code === 'EADDRINUSE' && attempt < FREE_PORT_ATTEMPTS) continue;
      throw error;
    }
  }
}

function closeListening(servers: ReadonlyArray<http.Server | https.Server>): Promise<unknown> {
  return Promise.all(servers.map((server) => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()))));
}

/** Whether `host` is localhost, in any case, or its fully qualified name `localhost.` (RFC 6761 6.3: loopback always, as the other). */
export function isLocalhost(host: string): boolean {
  return /^localhost\.?$/i.test(host);
}

function urlOf(scheme: string, host: string, port: number): string {
  if (!host.includes(':')) return `${scheme}://${host}:${port}`;
  // RFC 6874: the "%" before an IPv6 address's zone (fe80::1%eth0) is "%25" in a URL, where a bare "%" starts an escape.
  const zoneAt = host.indexOf('%');
  const address = zoneAt === -1 ? host : `${host.slice(0, zoneAt)}%25${encodeURIComponent(host.slice(zoneAt + 1))}`;
  return `${scheme}://[${address}]:${port}`;
}

/** DEFAULT_LIMITS overlaid with the given ones; a key present but undefined keeps its default. */
function withDefaults(given: Partial<Limits> = {}): Limits {
  const limits = { ...DEFAULT_LIMITS };
  for (const name of Object.keys(limits) as Array<keyof Limits>) limits[name] = given[name] ?? limits[name];
  return limits;
}

const LISTEN_OPTIONS: readonly string[] = ['host', 'port', 'httpsPort', 'tls', 'limits', 'onError'];

/** What each limit counts, and what 0 means where it turns the limit off, for checkListenOptions' messages. */
const LIMIT_RANGES: Readonly<Record<keyof Limits, { min: number; max: number; range: string }>> = {
  maxHeaderSize: { min: 1, max: Number.MAX_SAFE_INTEGER, range: 'a whole number of bytes from 1' },
  headersTimeout: { min: 0, max: MAX_TIMER_MS, range: `a whole number of milliseconds from 0 (off) to ${MAX_TIMER_MS}` },
  requestTimeout: { min: 0, max: MAX_TIMER_MS, range: `a whole number of milliseconds from 0 (off) to ${MAX_TIMER_MS}` },
  responseTimeout: { min: 0, max: MAX_TIMER_MS, range: `a whole number of milliseconds from 0 (off) to ${MAX_TIMER_MS}` },
  keepAliveTimeout: { min: 0, max: MAX_TIMER_MS, range: `a whole number of milliseconds from 0 to ${MAX_TIMER_MS}` },
  idleTimeout: { min: 0, max: MAX_TIMER_MS, range: `a whole number of milliseconds from 0 (off) to ${MAX_TIMER_MS}` },
  maxRequestsPerSocket: { min: 0, max: Number.MAX_SAFE_INTEGER, range: 'a whole number of requests from 0 (unlimited)' },
  shutdownTimeout: { min: 0, max: MAX_TIMER_MS, range: `a whole number of milliseconds from 0 to ${MAX_TIMER_MS}` },
};

/**
 * Refuses an option or limit startServers does not know (a typo: `responsetimeout` would leave the
 * default on) and a limit that is no whole number in its range: `'60s' > 0` and `NaN > 0` are false,
 * so such an idle or keep-alive timeout would turn the idle sweep off, and setTimeout reads NaN, a
 * negative or a huge delay as 1 ms.
 */
function checkListenOptions(options: ListenOptions): void {
  if (!isPlainObject(options)) throw new TypeError(`startServers takes a plain object of options ({ host, port, httpsPort, tls, limits }), not ${describeValue(options)}.`);
  for (const name of Object.keys(options)) {
    if (!LISTEN_OPTIONS.includes(name)) throw new TypeError(`startServers has no option "${name}"; its options are ${LISTEN_OPTIONS.join(', ')}.`);
  }
  const given: unknown = options.limits;
  if (given === undefined) return;
  if (!isPlainObject(given)) throw new TypeError(`startServers' limits are a plain object of limits by name ({ idleTimeout: 60_000 }), not ${describeValue(given)}.`);
  for (const [name, value] of Object.entries(given)) {
    const range = Object.hasOwn(LIMIT_RANGES, name) ? LIMIT_RANGES[name as keyof Limits] : undefined;
    if (range === undefined) throw new TypeError(`startServers has no limit "${name}"; its limits are ${Object.keys(LIMIT_RANGES).join(', ')}.`);
    if (value !== undefined && (!Number.isInteger(value) || (value as number) < range.min || (value as number) > range.max)) {
      throw new RangeError(`limits.${name} is ${range.range}, not ${describeLimit(value)}.`);
    }
  }
}

/**
 * A limit refused, as its message names it: a number as written (`1.5`, `NaN`, `Infinity`), anything else by its type. Written
 * with String(), the string `'200'` read `not 200`, a whole number in range named as the fault, and an object without a
 * prototype threw a TypeError of its own ('Cannot convert object to primitive value') instead of the RangeError.
 */
export function describeLimit(value: unknown): string {
  return typeof value === 'number' ? String(value) : describeValue(value);
}

function applyLimits(server: http.Server | https.Server, limits: Limits, sockets: Set<Socket>, tlsSockets: Set<Duplex>, idle: IdleSockets, hearer: RefusalHearer): void {
  // Not node's keep-alive timer either: node arms it on the socket after every response and clears
  // it at the next request, 5-7% of a small request's CPU. IdleSockets closes connections left
  // waiting, and the request listener gives each response the timeout to advertise.
  server.keepAliveTimeout = 0;
  // One field more than is served: node drops the fields beyond its count without a word, so a head
  // that reaches it is refused rather than served without them (refuseMalformedHead).
  server.maxHeadersCount = MAX_HEADER_FIELDS + 1;
  server.maxRequestsPerSocket = limits.maxRequestsPerSocket;
  // Not node's socket timeout (server.timeout): that re-arms a timer on every read and write of
  // every socket, about 1% of a small request's cost. IdleSockets looks at their byte counts instead.
  server.timeout = 0;
  server.on('clientError', clientErrorAnswerer(limits.maxHeaderSize, idle, hearer));
  // Unanswered, node would close a CONNECT's connection without a word, and answer an unknown Expect with an empty 417.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => refuseConnect(req, socket, hearer));
  server.on('checkExpectation', (req: IncomingMessage, res: http.ServerResponse) => refuseExpectation(req, res, hearer));
  // Raw TCP sockets, including TLS handshakes and upgraded connections that the http layer no longer
  // tracks, so close() can always finish; errors on them must never reach the process.
  // Over https the raw socket's byte counts are the TLS records': the handshake counts as activity too.
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    idle.add(socket, server instanceof https.Server);
    socket.on('error', ignore);
    socket.once('close', () => {
      sockets.delete(socket);
      idle.delete(socket);
    });
  });
  // HTTPS is spoken on the TLS socket over the raw one: close() looks on both kinds for the response in
  // flight, to ask its client to close the connection.
  server.on('secureConnection', (socket: Duplex) => {
    tlsSockets.add(socket);
    idle.speaksHttpOn((socket as ServedSocket)._parent, socket);
    socket.once('close', () => tlsSockets.delete(socket));
  });
  server.on('tlsClientError', (error: Error & { code?: string }, socket: Duplex) => refuseTlsClient(error, socket, hearer));
}

/** What node:http's parser puts on the errors it emits as `clientError`. */
type ParserError = NodeJS.ErrnoException & { reason?: string; rawPacket?: Uint8Array; bytesParsed?: number };

/** What node:http hangs on the sockets it serves: the response writing on it, its parser, and under TLS the raw socket. */
type ServedSocket = Duplex & {
  bytesRead?: number;
  _httpMessage?: http.ServerResponse | null;
  /** `headersCompleted()`: the current message's head is whole; `duration()`: ms since it began, 0 between messages. */
  parser?: { incoming?: IncomingMessage | null; headersCompleted?: () => boolean; duration?: () => number } | null;
  _parent?: Socket;
};

/** The reason of the 431 for a head over `maxHeaderSize` (node's HPE_HEADER_OVERFLOW). */
export function headTooLarge(maxHeaderSize: number): string {
  return `The request line and headers are larger than ${maxHeaderSize} bytes.`;
}

/** The reason of the 414 for a request target that alone reaches `maxHeaderSize`. */
export function targetTooLarge(maxHeaderSize: number): string {
  return `The request target (URL) alone reaches the ${maxHeaderSize}-byte limit of the request line and headers.`;
}

/**
 * A malformed or oversized request gets a status line and a one-line text saying what is wrong (a
 * HEAD, the same head without the text), in its turn after the responses to the requests before it
 * on its connection, which then closes.
 */
function clientErrorAnswerer(maxHeaderSize: number, idle: IdleSockets, hearer: RefusalHearer): (error: ParserError, socket: Duplex) => void {
  const messages: Readonly<Record<string, string>> = {
    HPE_HEADER_OVERFLOW: headTooLarge(maxHeaderSize),
    ERR_HTTP_REQUEST_TIMEOUT: 'The request did not arrive in time.',
    // HTTP/2's connection preface (`PRI * HTTP/2.0`, sent with prior knowledge: h2c, or over TLS without ALPN), which node names `Pause on PRI/Upgrade`.
    HPE_PAUSED_H2_UPGRADE: SPOKEN_VERSIONS,
  };
  const targetTooLong = targetTooLarge(maxHeaderSize);
  // node counts a chunked body's trailer fields apart from the head, against the same limit.
  const trailersTooLarge = trailerFieldsTooLarge(maxHeaderSize);
  /** The status and reason of the answer to the request the error refuses (`inBody`: in its body, the head handed over); null when there is none to give. */
  const refusalOf = (error: ParserError, inBody: boolean): { status: number; reason: string | undefined } | null => {
    // The request before said it was the last (RFC 9112 9.6): what follows it is no request to answer.
    if (error.code === 'HPE_CLOSED_CONNECTION') return null;
    if (error.code === 'HPE_HEADER_OVERFLOW' && inBody) return { status: 431, reason: trailersTooLarge };
    // node counts the URL against the head limit too: an overrun on it is RFC 9110's 414, not 431.
    if (error.code === 'HPE_HEADER_OVERFLOW' && headOverflow(error.rawPacket, error.bytesParsed, maxHeaderSize) === 'request-target') {
      return { status: 414, reason: targetTooLong };
    }
    // The parser's reasons are fixed texts (`Duplicate Content-Length`), never the client's bytes.
    return { status: CLIENT_ERROR_STATUS[error.code ?? ''] ?? 400, reason: messages[error.code ?? ''] ?? (typeof error.reason === 'string' && error.reason !== '' ? `${error.reason}.` : undefined) };
  };
  // Connections whose refusal is under way: node emits clientError again for each chunk its failed
  // parser is fed, and once more when the refused request's timeout expires.
  const refusing = new WeakSet<Duplex>();
  return (error, socket) => {
    if (refusing.has(socket)) return;
    // node times a body from its request's head on; one held back behind the answers before it had nothing
    // read of it meanwhile (the server's doing, not the client's), and is timed from its hand-over instead.
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && !(error instanceof HeldRequestTimeoutError)) {
      const inBody = requestInBody(socket as ServedSocket);
      if (inBody !== null && wasHeldBack(inBody)) return;
    }
    if (!socket.writable || PEER_GONE.has(error.code ?? '')) {
      socket.destroy();
      return;
    }
    refusing.add(socket);
    const served = socket as ServedSocket;
    // Nothing the client still sends is served: it must not keep a stalled response ahead alive.
    idle.ignoreReads(served._parent ?? (socket as Socket));
    // Node's parser, paused while a long pipelined burst's responses queue up, met more of the burst
    // (TLS hands on what it has decrypted): no fault of the request. The connection closes after the
    // responses before it, with no 400, and the client sends the rest again.
    if (error.code === 'HPE_PAUSED') return answerInTurn(served, null, null);
    const refused = requestInBody(served);
    // A body the request timeout cut, or node's parser refused (a malformed chunk), ends its connection
    // with that error, as node's own handler does for the timeout: the request's body reader, its
    // signal and its profile then tell the server's answer from a client that left (see serverCut).
    const cause = refused !== null ? error : undefined;
    const refusal = refusalOf(error, refused !== null);
    if (refusal === null) return answerInTurn(served, refused, null, cause);
    // One refused in its body is the kernel's request, which ends as this refusal (see serverCut): logged, profiled.
    // The client address is read now: the connection may be gone when the answer's turn comes.
    const client = (socket as Socket).remoteAddress;
    const heard = refused === null ? (): void => tell(hearer, { status: refusal.status, reason: refusal.reason ?? STATUS_CODES[refusal.status]!, client }) : undefined;
    const text = refusal.reason === undefined ? `${STATUS_CODES[refusal.status]}\n` : `${STATUS_CODES[refusal.status]}: ${refusal.reason}\n`;
    answerInTurn(served, refused, plainAnswer(refusal.status, text, refused === null ? headRefused(error, served) : refused.method === 'HEAD'), cause, heard);
  };
}

/**
 * Whether the request the parser refused in its head is a HEAD, when the bytes at hand say so for
 * sure. When they cannot (its head began in an earlier chunk, as a long head's later TLS records
 * do; it follows a body sized by Content-Length; a head that timed out), its answer keeps the
 * text: a HEAD's client reads none, and the connection closes after it anyway.
 */
function headRefused(error: ParserError, socket: ServedSocket): boolean {
  // The request before on the connection (complete: one failing in its body is requestInBody's), if any.
  const before = socket.parser?.incoming;
  if (before && Number(before.headers['content-length'] ?? 0) > 0) return false;
  const opening = !before && error.rawPacket !== undefined && socket.bytesRead === error.rawPacket.length;
  return refusesHeadRequest(error.rawPacket, error.bytesParsed, opening);
}

/**
 * The request whose body the parser was reading when it failed: the refusal answers it, in place of
 * its own response. null when the failure is in the head of a request the listener never saw.
 */
function requestInBody(socket: ServedSocket): IncomingMessage | null {
  const incoming = socket.parser?.incoming;
  return incoming && !incoming.complete ? incoming : null;
}

/**
 * Sends `answer` once every response to an earlier request on the connection has been sent whole
 * (RFC 9112 9.3.2: responses go in the order of their requests), then closes the connection. Node
 * finishes those responses although its parser failed; IdleSockets and close() bound one that stalls.
 * (Node's default handler writes its answer ahead of a response not yet begun, and cuts one begun.)
 * `cause`: the error the connection is destroyed with (the request timeout's), for the refused request's reader;
 * `heard`: called as the answer is written (see hearsRefusals).
 */
function answerInTurn(socket: ServedSocket, refused: IncomingMessage | null, answer: string | null, cause?: Error, heard?: () => void): void {
  const ahead = socket._httpMessage;
  if (ahead && ahead.req !== refused) {
    // Runs after node's own 'finish' listener, which has handed the socket to the next response queued, if any.
    ahead.once('finish', () => answerInTurn(socket, refused, answer, cause, heard));
    return;
  }
  // A response ahead ended the connection (Connection: close): node closes it, and nothing may follow.
  if (!socket.writable) return;
  const close = (): void => void socket.end(() => socket.destroy(cause));
  if (refused !== null && (!ahead || ahead.headersSent)) {
    // The refused request has its answer already, sent whole (none is on the socket: node hands it the
    // next response only once one has finished) or on its way: one answer per request, so the refusal
    // is not written, and the connection closes once that answer has gone out whole.
    if (ahead) ahead.once('finish', close);
    else close();
    return;
  }
  if (answer === null) return close();
  // Told only of an answer that goes out: bytes behind a request whose answer closed the connection were no request.
  heard?.();
  socket.end(answer, () => socket.destroy(cause));
}

/** A whole plain-text answer, closing its connection; to a HEAD (`toHead`), its head alone, Content-Length still the text's (RFC 9110 9.3.2). */
function plainAnswer(status: number, body: string, toHead = false): string {
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nDate: ${new Date().toUTCString()}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${toHead ? '' : body}`;
}

/** Writes a whole plain-text answer on a connection the http layer no longer serves, then closes it. */
function answerAndClose(socket: Duplex, status: number, body: string): void {
  socket.end(plainAnswer(status, body), () => socket.destroy());
}

/**
 * Wraps the listener with checks of the request head whose answer must say what is wrong: an
 * HTTP/1.1 request must name its host (RFC 9112 3.2), and a head may not have more fields than
 * node keeps. Either is answered with a one-line text, and the connection closes. `invitesBody`: a
 * request handed over that asks for 100 Continue gets it first (the listener leaves it to startServers).
 */
function refuseMalformedHead(listener: RequestListener, keepAliveTimeout: number, responseTimeout: number, requestTimeout: number, hearer: RefusalHearer, invitesBody: boolean): RequestListener {
  const refuseHead = (res: http.ServerResponse, status: number, reason: string): void => {
    tellWhenSent(res, hearer, { status, reason, client: res.req.socket.remoteAddress });
    refuse(res, status, reason);
  };
  const handedOver = requestTimeout > 0 ? (req: IncomingMessage): void => timeRestOfBody(req, requestTimeout) : undefined;
  return (req, res) => {
    const notChunked = transferEncodingRefusal(req.headers['transfer-encoding']);
    // What node writes as `Keep-Alive: timeout=<s>` on a kept connection; the server's own
    // keepAliveTimeout stays 0, so node arms no timer per response (IdleSockets closes the connection).
    (res as KeepAliveResponse)._keepAliveTimeout = keepAliveTimeout;
    if (req.httpVersionMajor !== 1) {
      // HTTP/0.9 has no head to answer with, HTTP/2 and later never come as text on this connection.
      // A 400 rather than RFC 9110's 505: what a client sends is no server error (see the 400 for an unknown method).
      refuseHead(res, 400, SPOKEN_VERSIONS);
    } else if (req.rawHeaders.length > 2 * MAX_HEADER_FIELDS) {
      refuseHead(res, 431, TOO_MANY_FIELDS);
    } else if (!req.headers.host && (req.httpVersionMajor > 1 || req.httpVersionMinor > 0)) {
      // Empty counts as missing, as node:http counted it.
      refuseHead(res, 400, MISSING_HOST);
    } else if (notChunked !== undefined) {
      // RFC 9112 6.3: its body's length cannot be determined, and a proxy may have read it otherwise.
      // node's parser says so only after it has handed the request over (`xchunked`, `chunked;q=1`), and
      // reads an empty one as none: the request would be served, then its connection closed.
      refuseHead(res, 400, notChunked);
    } else {
      // Node's parser stops at an upgrade request's head and, with no upgrade listener, drops what
      // followed it in the same read: a request pipelined behind it would go unanswered and the next
      // answer be taken for its. The upgrade request is answered as any other, then the connection
      // closes, and its client sends again what it had pipelined (RFC 9112 9.3.2).
      if (req.headers.upgrade !== undefined) res.shouldKeepAlive = false;
      if (invitesBody && continueAsked.has(req)) res.writeContinue();
      // On a connection that pipelines (this request came behind one not answered yet, whose response has the connection now, or one before did), the turn's writes go out together.
      gatherPipelinedWrites(req.socket, res.socket === null);
      // Pipelined behind an unsafe request, or unsafe itself behind others: handled once those are answered (RFC 9112 9.3.2).
      listenInTurn(listener, req, res, responseTimeout, handedOver);
    }
  };
}

/** Requests node handed over as asking for `100 Continue` (checkContinue), which startServers invites for a listener that leaves it to startServers. */
const continueAsked = new WeakSet<IncomingMessage>();

/** The request timeout of a request held back (see clientErrorAnswerer), counted from its hand-over. */
class HeldRequestTimeoutError extends Error {
  readonly code = 'ERR_HTTP_REQUEST_TIMEOUT';
}

/**
 * For a request handed over after being held back: its body, if not all come, gets `requestTimeout`
 * from now, as node gives a request from its head; then it is refused as node's timeout refuses (a 408).
 */
function timeRestOfBody(req: IncomingMessage, requestTimeout: number): void {
  if (req.complete) return;
  const socket = req.socket as Socket & { server?: http.Server };
  const timer = setTimeout(() => {
    if (!req.complete && !socket.destroyed) socket.server?.emit('clientError', new HeldRequestTimeoutError('Request timeout'), socket);
  }, requestTimeout);
  timer.unref();
  const stop = (): void => clearTimeout(timer);
  req.once('end', stop);
  req.once('close', stop);
}

/** A plain-text answer to a request the listener never sees; its body, if any, is left unread. */
function refuse(res: http.ServerResponse, status: number, reason: string): void {
  const { body, headers } = refusalAnswer(status, reason);
  res.writeHead(status, headers);
  // To a HEAD, node's ServerResponse sends the head alone, this Content-Length in it (RFC 9110 9.3.2).
  res.end(body);
}

/**
 * The text and headers of the answer to a request refused in its head (see refuse): the server's, and inject()'s for the same request;
 * `closes`: it closes the connection (all but the 417 to an Expect, after which node keeps the connection as for any answer).
 */
export function refusalAnswer(status: number, reason: string, closes = true): { body: string; headers: Record<string, string> } {
  const body = `${STATUS_CODES[status]}: ${reason}\n`;
  return { body, headers: { ...(closes ? { connection: 'close' } : {}), 'content-type': 'text/plain; charset=utf-8', 'content-length': String(Buffer.byteLength(body)) } };
}

/** What a CONNECT is told. */
export const NO_TUNNEL = 'CONNECT asks for a tunnel, and this server is no proxy.';

/**
 * CONNECT asks for a tunnel, which only a proxy makes. Answered in its turn (see answerInTurn): node
 * hands the socket over with the responses to the requests before it still to write, and an answer
 * written at once went ahead of them and cut them off.
 */
function refuseConnect(_req: IncomingMessage, socket: Duplex, hearer: RefusalHearer): void {
  socket.on('error', ignore);
  if (!socket.writable) return void socket.destroy();
  // Read now: the connection may be gone when the answer's turn comes.
  const client = (socket as Socket).remoteAddress;
  const heard = (): void => tell(hearer, { status: 400, reason: NO_TUNNEL, client });
  // node took its own 'drain' listener off the socket with its parser: a response ahead waiting for
  // the socket to drain (a large body) would wait for good.
  socket.on('drain', () => {
    const ahead = (socket as ServedSocket)._httpMessage;
    if (ahead?.writableNeedDrain) ahead.emit('drain');
  });
  answerInTurn(socket as ServedSocket, null, plainAnswer(400, `${STATUS_CODES[400]}: ${NO_TUNNEL}\n`), undefined, heard);
}

/** What a plain-http request on an https port is told. */
const PLAIN_HTTP = 'this port speaks https; the request came as plain http.';

/**
 * A failed TLS handshake closes its connection; one that failed because the client spoke plain
 * HTTP (`curl http://host:8443/`) is first told so in plain HTTP on the raw socket, as nginx and Go
 * do, rather than met by an empty reply.
 */
function refuseTlsClient(error: Error & { code?: string }, socket: Duplex, hearer: RefusalHearer): void {
  const raw = (socket as ServedSocket)._parent;
  if (error.code === 'ERR_SSL_HTTP_REQUEST' && raw !== undefined && raw.writable) {
    raw.on('error', ignore);
    tell(hearer, { status: 400, reason: PLAIN_HTTP, client: raw.remoteAddress });
    answerAndClose(raw, 400, `${STATUS_CODES[400]}: ${PLAIN_HTTP}\n`);
    return;
  }
  socket.destroy();
}

/** Whether an Expect value lists 100-continue and nothing else (case-insensitive; repeated, it is still only that). */
export function expectsOnlyContinue(expect: string | undefined): boolean {
  const expectations = (expect ?? '').split(',').map((item) => item.trim()).filter((item) => item !== '');
  return expectations.length > 0 && expectations.every((item) => item.toLowerCase() === '100-continue');
}

/** What a request is told whose Expect asks for more than 100-continue. */
export const ONLY_CONTINUE = 'the only expectation this server meets is Expect: 100-continue.';

/** RFC 9110 (10.1.1): an expectation the server cannot meet is a 417. */
function refuseExpectation(req: IncomingMessage, res: http.ServerResponse, hearer: RefusalHearer): void {
  tellWhenSent(res, hearer, { status: 417, reason: ONLY_CONTINUE, client: req.socket.remoteAddress });
  const { body, headers } = refusalAnswer(417, ONLY_CONTINUE, false);
  res.writeHead(417, headers);
  res.end(body);
}

/** Once shutdown has begun, a response asks its client to close the connection (node then closes it after the response). */
function closeAfterResponse(_req: IncomingMessage, res: http.ServerResponse): void {
  if (!res.headersSent) res.shouldKeepAlive = false;
}

function listenOn(server: http.Server | https.Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen({ host, port }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

async function closeGracefully(
  servers: Array<http.Server | https.Server>,
  sockets: Set<Socket>,
  tlsSockets: Set<Duplex>,
  shutdownTimeout: number,
  idle: IdleSockets,
): Promise<void> {
  // Nothing on the request path: responses already in flight, and those of requests that still
  // arrive on open connections, are told here to end their connection.
  for (const server of servers) server.prependListener('request', closeAfterResponse);
  for (const socket of [...sockets, ...tlsSockets]) {
    const inFlight = (socket as Duplex & { _httpMessage?: http.ServerResponse | null })._httpMessage;
    if (inFlight) closeAfterResponse(inFlight.req, inFlight);
  }
  // Idle connections are closed once the event loop has polled, not now: close() may begin as the loop
  // comes out of a long task (a SIGTERM handled, a timer), and a request a client (a proxy reusing a
  // kept connection) sent meanwhile is still unread: node would take its connection for idle, and
  // destroying a socket with unread bytes resets it. Read, it is answered, with Connection: close.
  await afterPoll();
  const allClosed = Promise.all(
    servers.map((server) => {
      server.keepAliveTimeout = CLOSING_KEEP_ALIVE_MS;
      return new Promise<void>((resolve) => server.close(() => resolve()));
    }),
  );
  for (const server of servers) server.closeIdleConnections();
  // node's closeIdleConnections skips a connection that never sent a request (a browser's preconnect,
  // a TLS client yet to say hello), and one whose request is answered but its body still coming (node
  // stops its request timeout once closing): they held shutdown until the keep-alive sweep (6 s) or the
  // shutdown timeout (10 s). Given a moment for the request its client may be sending, they go.
  // Looked at once the loop has polled after the timer (see IdleSockets' check): a first request that came while it was busy is read by then.
  let unusedCheck: NodeJS.Immediate | undefined;
  const unused = setTimeout(() => {
    unusedCheck = setImmediate(() => {
      for (const socket of sockets) if (idle.awaitsFirstRequest(socket) || idle.answeredMidRequest(socket)) socket.destroy();
    });
  }, Math.min(FIRST_REQUEST_GRACE_MS, shutdownTimeout));

  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      for (const server of servers) server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      resolve();
    }, shutdownTimeout);
  });
  await Promise.race([allClosed, deadline]);
  clearTimeout(timer);
  clearTimeout(unused);
  clearImmediate(unusedCheck);
  await allClosed;
  // A server reports itself closed as soon as its last socket is destroyed, a turn before that socket's
  // 'close', which is when a response cut there learns of it (and its kernel.terminate, deferred until
  // its stream body ends, runs): resolving first, a caller's app.close() came before those terminates.
  await Promise.all([...sockets, ...tlsSockets].map((socket) => new Promise((resolve) => socket.once('close', resolve))));
}

/**
 * Resolves once the event loop has been through its poll phase from wherever this is called: a
 * setImmediate alone, called in the poll phase (a signal's handler, a read's callback), runs before
 * the next poll, so a second one follows it.
 */
function afterPoll(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/** Where a socket's byte counts stood when they last moved. */
interface Activity {
  /** false once a request on the connection was refused: what its client still sends is discarded, not served. */
  readsCount: boolean;
  read: number;
  written: number;
  /** performance.now() when its byte counts last moved: a wall clock stepped by NTP would drop every connection at once, or none for as long as it was set back. */
  since: number;
  /** The socket node:http speaks on: the raw one, or under TLS the TLS socket over it (null until its handshake is done). */
  http: ServedSocket | null;
}

/** A response's keep-alive timeout, which node writes as `Keep-Alive: timeout=<s>` (its server's keepAliveTimeout by default). */
type KeepAliveResponse = http.ServerResponse & { _keepAliveTimeout?: number };

/**
 * Whether node:http waits on this socket for the next request: its parser is still attached (not
 * an upgraded or CONNECT connection, which the http layer has let go) and no response is on its
 * way, not even one node:http is done with whose bytes were gathered and are not out yet.
 */
function awaitsRequest(socket: ServedSocket | null): boolean {
  if (socket === null || socket.parser == null || socket._httpMessage != null || sendsGathered(socket)) return false;
  // Nothing read yet (a fresh connection; under TLS the TLS socket counts only what it decrypted).
  if (socket.bytesRead === 0) return true;
  // Between two requests rather than in the middle of one: a head that stalls is the head timeout's
  // (a 408), a body that stalls after its response the request timeout's. Node 20-24's parser says
  // so (the connections check reads the same); without those methods, the rule of node's own timer.
  const parser = socket.parser;
  if (typeof parser.headersCompleted !== 'function' || typeof parser.duration !== 'function') return true;
  return parser.headersCompleted() && parser.duration() === 0;
}

/** Whether a request on the socket is in the hands of the listener, its response not begun (a pipelined one's, queued behind it, neither). */
function awaitsHead(socket: ServedSocket | null): boolean {
  const response = socket?._httpMessage;
  return response != null && !response.headersSent;
}

/**
 * Drops connections on which nothing was read or written for `timeout` ms, and those that have
 * waited `keepAlive` ms (plus node's margin) for their next request. One timer for all of them,
 * checking byte counts (as node checks the headers and request timeouts), rather than a timer per
 * socket refreshed on each read and write, or armed after each response: the request path pays
 * nothing. A 0 turns either off; with both off none is dropped, and close() still asks it which
 * connections to drop a second after it began.
 */
class IdleSockets {
  readonly #timeout: number;
  readonly #keepAlive: number;
  /** Least quiet time before a connection whose response has not begun is idle: the response timeout answers it first. */
  readonly #headWait: number;
  readonly #sockets = new Map<Socket, Activity>();
  /** undefined when both limits are 0: the connections are tracked for close() alone. */
  readonly #timer: NodeJS.Timeout | undefined;

  constructor(timeout: number, keepAlive: number, responseTimeout: number) {
    this.#timeout = timeout;
    this.#keepAlive = keepAlive > 0 ? keepAlive + KEEP_ALIVE_MARGIN_MS : 0;
    this.#headWait = responseTimeout > 0 ? responseTimeout + RESPONSE_TIMEOUT_MARGIN_MS : 0;
    if (timeout === 0 && keepAlive === 0) return;
    const shortest = Math.min(...[timeout, this.#keepAlive].filter((ms) => ms > 0));
    this.#timer = setInterval(() => this.#check(), Math.max(1, Math.min(IDLE_CHECK_INTERVAL_MS, Math.floor(shortest / 4))));
    this.#timer.unref();
  }

  /** A raw socket; node:http speaks on it itself unless it is a TLS server's (see speaksHttpOn). */
  add(socket: Socket, tls = false): void {
    this.#sockets.set(socket, { readsCount: true, read: socket.bytesRead, written: socket.bytesWritten, since: performance.now(), http: tls ? null : (socket as ServedSocket) });
  }

  /** Under TLS: the socket node:http speaks on over the raw one, once its handshake is done. */
  speaksHttpOn(raw: Socket | undefined, socket: Duplex): void {
    const activity = raw === undefined ? undefined : this.#sockets.get(raw);
    if (activity !== undefined) activity.http = socket as ServedSocket;
  }

  delete(socket: Socket): void {
    this.#sockets.delete(socket);
  }

  /** From now on only writes keep `socket` from being idle. */
  ignoreReads(socket: Socket): void {
    const activity = this.#sockets.get(socket);
    if (activity !== undefined) activity.readsCount = false;
  }

  /** Whether no request has begun on `socket` (under TLS: its handshake not done, or done with no request since). */
  awaitsFirstRequest(socket: Socket): boolean {
    const activity = this.#sockets.get(socket);
    if (activity === undefined) return false;
    // A handshake still under way (or stalled half-way) carries no request yet: waiting on it would
    // hold close() until the handshake timeout.
    if (activity.http === null) return true;
    return activity.http.bytesRead === 0 && activity.http._httpMessage == null;
  }

  /** Whether the request in progress on `socket` has its answer sent, and only the rest of its body is still to come. */
  answeredMidRequest(socket: Socket): boolean {
    const http = this.#sockets.get(socket)?.http;
    // The response of a request in progress is on the socket from its head on (a pipelined one's, queued, behind another's).
    if (http == null || http.parser == null || http._httpMessage != null) return false;
    const parser = http.parser;
    if (typeof parser.headersCompleted !== 'function' || typeof parser.duration !== 'function') return false;
    return parser.headersCompleted() && parser.duration() > 0;
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  #check(): void {
    const now = performance.now();
    let expired: Array<{ socket: Socket; activity: Activity; idle: boolean }> | undefined;
    for (const [socket, activity] of this.#sockets) {
      if (moved(socket, activity, now)) continue;
      const quiet = now - activity.since;
      const idle = this.#timeout > 0 && quiet >= this.#timeout && (quiet >= this.#headWait || !awaitsHead(activity.http));
      if (idle || (this.#keepAlive > 0 && quiet >= this.#keepAlive && awaitsRequest(activity.http))) (expired ??= []).push({ socket, activity, idle });
    }
    // Dropped once the event loop has polled, not now: timers run before the poll, so a request that
    // came while the loop was busy (one a proxy sent on a connection it keeps) is still unread, and
    // destroying a socket with unread bytes resets it: nginx answers its client 502 for a POST.
    if (expired !== undefined) setImmediate(() => this.#drop(expired));
  }

  #drop(expired: Array<{ socket: Socket; activity: Activity; idle: boolean }>): void {
    const now = performance.now();
    for (const { socket, activity, idle } of expired) {
      if (this.#sockets.get(socket) !== activity || moved(socket, activity, now)) continue;
      this.#sockets.delete(socket);
      // A body cut half-way is no client that left: its reader is told why (see Request's body reading), a 408.
      if (idle && activity.http !== null && requestInBody(activity.http) !== null) activity.http.destroy(new RequestTimeoutHttpError(`The request body did not arrive: nothing came within the idle timeout (${describeDuration(this.#timeout)}).`));
      socket.destroy();
    }
  }
}

/** Whether `socket` read or wrote since `activity` last looked; if so, `activity` is brought up to date. */
function moved(socket: Socket, activity: Activity, now: number): boolean {
  // bytesWritten counts what waits in the socket's buffer too: a client that stops reading
  // stops it once the response stream feels the back-pressure.
  const read = activity.readsCount ? socket.bytesRead : activity.read;
  const written = socket.bytesWritten;
  if (read === activity.read && written === activity.written) return false;
  activity.read = read;
  activity.written = written;
  activity.since = now;
  return true;
}

function ignore(): void {}
