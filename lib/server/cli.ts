import { setFlagsFromString } from 'node:v8';
import { compileAddressList } from '../http/address-list.js';
import { SERVE_DEFAULTS, UsageError, formatServeHelp, parseServeOptions, type ServeOptions } from './serve-options.js';
import { isLocalhost, startServers, type RequestListener, type RunningServers } from './listen.js';
import { DEBUG_YOUNG_GENERATION_BYTES, capYoungGeneration, nodeFlagGiven } from './young-generation.js';
import { TlsCertificateError, loadCertificateFiles, loadOrCreateDevCertificate, octal, type CertificateValidityProblem, type TlsCredentials } from './tls-certificate.js';
import { makeVarDirectory, varUnderRoot } from './var-directory.js';
import type { AppOptions } from '../app/reference-app.js';
import type { LogLevelInput } from '../log/logger.js';
import type { Logger } from '../log/logger.js';

export { parseServeOptions, UsageError, type ServeOptions } from './serve-options.js';

/** What main needs from the app that `createApp` in lib/app builds. */
interface App {
  listener: RequestListener;
  /** Where start-up warnings go, as the app's own (stderr at --log-level). */
  logger: Logger;
  /** Where a redirect to the other scheme goes: set to the listeners' ports once they are up. */
  schemePorts?: { http: number; https: number };
  /** Resolves once the app can serve at full speed (its profiler's first tokens claimed). */
  ready?(): Promise<void>;
  close(): Promise<void>;
}

/** Makes the app main serves: `createApp` by default; a test gives one whose close() fails. */
type AppFactory = (options: AppOptions) => App | Promise<App>;

/** createApp, loaded only when called, so --help and usage errors neither wait for nor depend on the app. */
const createReferenceApp: AppFactory = async (options) => (await import('../app/index.js')).createApp(options);

/** Longest wait for the app to be ready before listening anyway (a storage that hangs must not stop the server). */
const READY_WAIT_MS = 5_000;

/** V8's heap growing factor in debug mode (see main); pass your own `--heap-growing-percent` to node to override. */
export const DEBUG_HEAP_GROWING = '--heap-growing-percent=70';

/**
 * V8 runs a regular expression that has backtracked this much (50,000 steps by default) again
 * on its linear-time engine. The router matches wildcard tails (`/*a/*b/*c/end`) without a regex
 * (TailMatcher), but a route's parameter requirement, or an application's own expression, can
 * still take a second or more on a hostile path of a few kilobytes. Results are the same.
 * Process-wide; embedders start node with the flag.
 */
export const REGEXP_FALLBACK = '--enable-experimental-regexp-engine-on-excessive-backtracks';

/** Why a listener could not start, for the errors an operator can fix; anything else shows its own message. */
const LISTEN_ERRORS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'address not available on this machine',
  // IPv6 compiled out or disabled at boot: not even a socket of its family can be made.
  EAFNOSUPPORT: 'address family not supported on this machine',
  ENOTFOUND: 'unknown host',
  EAI_AGAIN: 'host name lookup failed',
};

/** The `bin/serve` program: parses options, starts the app on http and https, serves until SIGTERM, SIGINT, SIGHUP or SIGUSR2; resolves to the exit code. */
export async function main(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env, makeApp: AppFactory = createReferenceApp): Promise<number> {
  process.setSourceMapsEnabled(true);

  let options: ServeOptions;
  try {
    options = parseServeOptions(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`serve: ${error.message}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(formatServeHelp());
    return 0;
  }
  const rootProblem = varUnderRoot(filesKeptIn(options));
  if (rootProblem !== null) {
    process.stderr.write(`serve: ${rootProblem}\n`);
    return 2;
  }

  // Listened for from here on: a supervisor that stops the server while it starts (a certificate
  // being made, the storage being opened) sees it exit 0, not die of the signal. Until main()
  // returns only: a caller that goes on has its signals back.
  const shutdown = listenForShutdown();
  try {
    return await serve(options, shutdown, makeApp);
  } finally {
    shutdown.stopListening();
  }
}

/** Starts the app and its servers, and closes them on the first signal; resolves to the exit code. */
async function serve(options: ServeOptions, shutdown: Shutdown, makeApp: AppFactory): Promise<number> {
  setFlagsFromString(REGEXP_FALLBACK);
  let stopCapping = () => {};

  if (options.debug) {
    // Debug pages show the whole stack; V8 keeps only 10 frames by default.
    Error.stackTraceLimit = Math.max(Error.stackTraceLimit, 50);
    // The profiler keeps what it records for a while (profiles waiting for their batch, the
    // index's records): some of it is promoted to old space and dies there, and V8's default heap
    // growth then lets old space reach about three times the live set before collecting it
    // (180 MB of RSS after 100,000 recorded requests). Growing it by 70% per collection keeps
    // such a server near 140 MB (bench/README.md, session 20): 100% let it reach 144-151 MB, at a
    // throughput no different within the runs' noise; 50% kept it near 139 MB at 3-5% less
    // throughput; 20% cost a full collection every few thousand requests, about a quarter of a
    // debug request's CPU in process. A V8 heuristic only (read at each full collection); this
    // process is ours.
    if (!nodeFlagGiven('--heap-growing-percent')) setFlagsFromString(DEBUG_HEAP_GROWING);
    // And new space at 8 MB rather than 32: the same throughput, about 30 MB less resident (see young-generation.ts).
    stopCapping = capYoungGeneration(DEBUG_YOUNG_GENERATION_BYTES);
  }

  let app: App | undefined;
  let running: RunningServers;
  let closing: Promise<void> | undefined;
  /**
   * Closes the app once, whichever path asks (a close that failed is not tried again); a failure is
   * the shutdown's, on a line of its own: exit 1. `after` is what it follows (the signal).
   */
  const closeApp = async (after: string): Promise<number> => {
    try {
      // As a promise even when close() throws at once: what failed is not called again.
      await (closing ??= (async () => app?.close())());
      return 0;
    } catch (error) {
      process.stderr.write(`serve: shutdown after ${after} failed: ${error instanceof Error ? error.message : String(error)}\n`);
      return 1;
    }
  };
  /** For a signal that came while starting: what was started is closed, and the exit is a clean one unless that close fails. */
  const stopStarting = async (): Promise<number> => {
    process.stderr.write(`serve: ${shutdown.received} while starting, stopping\n`);
    stopCapping();
    return await closeApp(shutdown.received!);
  };
  try {
    // Before anything writes under var/: made here, it is left out of the project's version control.
    makeVarDirectory(filesKeptIn(options));
    const { tls, validity } = options.httpsPort === null ? {} : await loadTls(options);
    if (shutdown.received !== undefined) return await stopStarting();
    const created: App = await makeApp({
      env: options.env,
      debug: options.debug,
      debugAllow: options.profilerAllow,
      trustedProxies: options.trustedProxies,
      trustedHosts: options.trustedHosts ?? undefined,
      ide: options.ide ?? undefined,
      stderrLogLevel: options.logLevel === 'off' ? false : (options.logLevel as LogLevelInput),
      profiler: options.profiler ? { dir: options.profilerDir, bounds: { maxProfiles: options.profilerMaxProfiles } } : false,
    });
    app = created;
    if (validity !== undefined) warnOfValidity(created.logger, options.tlsCert!, validity);
    // The first request then finds a profile token waiting: it runs as every later one does.
    await readyOrLate(created, shutdown.signal);
    if (shutdown.received !== undefined) return await stopStarting();
    running = await startServers(created.listener, {
      host: options.host,
      port: options.port,
      httpsPort: options.httpsPort,
      tls,
      limits: { responseTimeout: options.responseTimeout },
      onError: (error) => process.stderr.write(`serve: server error: ${error.message}\n`),
    });
  } catch (error) {
    process.stderr.write(`serve: ${describeStartupError(error, options)}\n`);
    if (options.debug && !isOperationalError(error) && error instanceof Error && error.stack) {
      process.stderr.write(`${error.stack}\n`);
    }
    await closeApp('the start-up error');
    stopCapping();
    return 1;
  }

  // Redirects and links to the other scheme go to the listeners' ports (a scheme without a listener keeps its port).
  if (app.schemePorts !== undefined) Object.assign(app.schemePorts, running.ports);
  // A signal that came while the listeners started: they close again, and no line says they listen.
  if (shutdown.received === undefined) {
    for (const url of running.listening) process.stdout.write(`listening on ${url}\n`);
    // Another address of localhost (::1 on a machine without IPv6): served on the others, said once.
    for (const { url, error } of running.notListening) process.stderr.write(`serve: not listening on ${url}: ${describeListenError(error)}\n`);
    const note = debugExposureNote(options);
    if (note !== null) process.stderr.write(`serve: ${note}\n`);
  } else process.stderr.write(`serve: ${shutdown.received} while starting, stopping\n`);

  const signal = await shutdown.signal;
  stopCapping();
  try {
    await running.close();
  } catch (error) {
    process.stderr.write(`serve: shutdown after ${signal} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    // The app is closed all the same: its profiles are saved, its storage's files let go.
    await closeApp(signal);
    return 1;
  }
  return await closeApp(signal);
}

async function loadTls(options: ServeOptions): Promise<{ tls: TlsCredentials; validity?: CertificateValidityProblem }> {
  if (options.tlsCert !== null && options.tlsKey !== null) {
    const { cert, key, validity } = await loadCertificateFiles(options.tlsCert, options.tlsKey);
    return { tls: { cert, key }, validity };
  }
  const { created, replaced, notCached, keyMode, ...credentials } = await loadOrCreateDevCertificate(SERVE_DEFAULTS.devCertificateDir);
  if (keyMode !== undefined) {
    process.stderr.write(
      keyMode.tightened
        ? `serve: the development key ${keyMode.path} was open to group or others (mode ${octal(keyMode.mode)}): made it 0600\n`
        : `serve: the development key ${keyMode.path} is open to group or others (mode ${octal(keyMode.mode)}) and cannot be made 0600 (${keyMode.reason}): serving it as it is\n`,
    );
  }
  // Why the cached one was not served, when there was one: a browser's exception for it no longer holds.
  const why = replaced === undefined ? '' : `; the cached one cannot serve: ${replaced}`;
  if (notCached !== undefined) {
    // https still serves, with a certificate of this run alone: a browser's exception for it will not outlast a restart.
    process.stderr.write(`serve: made a self-signed development certificate for this run only (${notCached.message}${why})\n`);
  } else if (replaced !== undefined) {
    process.stderr.write(`serve: replaced the development certificate in ${SERVE_DEFAULTS.devCertificateDir}/ with a new self-signed one (localhost, 127.0.0.1, ::1): ${replaced}\n`);
  } else if (created) {
    process.stderr.write(
      `serve: created a self-signed development certificate in ${SERVE_DEFAULTS.devCertificateDir}/ (localhost, 127.0.0.1, ::1)\n`,
    );
  }
  return { tls: credentials };
}

/** Served anyway (a developer may be testing just that), but said at start: clients will refuse every handshake. */
function warnOfValidity(logger: Logger, certPath: string, { problem, date }: CertificateValidityProblem): void {
  const field = problem === 'expired' ? 'notAfter' : 'notBefore';
  logger.withChannel('tls').warning(`The TLS certificate {file} is ${problem} ({field} {date}): https clients will refuse it`, { file: certPath, field, date: date.toISOString() });
}

/**
 * The signals that shut the server down gracefully. SIGHUP (its terminal closed) and SIGUSR2 (nodemon's
 * restart) too: node's default for them ended the process at once, cutting the requests in flight.
 * No reload on SIGHUP: there is no configuration to read again but the command line.
 */
const SHUTDOWN_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGUSR2'];

interface Shutdown {
  /** Resolves with the first of SHUTDOWN_SIGNALS. */
  readonly signal: Promise<NodeJS.Signals>;
  /** That signal, once it came. */
  readonly received: NodeJS.Signals | undefined;
  /** Removes the handlers (the process then dies of a signal again, as node's default). */
  stopListening(): void;
}

/**
 * Handles SHUTDOWN_SIGNALS from now on: the first is `signal`. Then SIGINT (Ctrl-C pressed again),
 * or a signal other than the first, ends the process at once with exit code 1; the first signal
 * again (a closing terminal may send SIGHUP twice, a supervisor repeat its SIGTERM) is said and
 * the drain goes on.
 */
function listenForShutdown(): Shutdown {
  let resolve!: (signal: NodeJS.Signals) => void;
  const signal = new Promise<NodeJS.Signals>((done) => (resolve = done));
  const shutdown = {
    signal,
    received: undefined as NodeJS.Signals | undefined,
    stopListening() {
      for (const name of SHUTDOWN_SIGNALS) process.off(name, onSignal);
    },
  };
  const onSignal = (received: NodeJS.Signals) => {
    if (shutdown.received === received && received !== 'SIGINT') {
      process.stderr.write(`serve: ${received} again, still shutting down (SIGINT exits at once)\n`);
      return;
    }
    if (shutdown.received !== undefined) {
      process.stderr.write(`serve: ${received} ${received === shutdown.received ? 'again' : `after ${shutdown.received}`}, exiting without waiting\n`);
      process.exit(1);
    }
    shutdown.received = received;
    resolve(received);
  };
  for (const name of SHUTDOWN_SIGNALS) process.on(name, onSignal);
  return shutdown;
}

/** The directories bin/serve keeps files in with these options, as given (relative ones are under the working directory). */
function filesKeptIn(options: ServeOptions): string[] {
  return [
    ...(options.httpsPort !== null && options.tlsCert === null ? [SERVE_DEFAULTS.devCertificateDir] : []),
    ...(options.debug && options.profiler ? [options.profilerDir] : []),
  ];
}

/** For a debug server listening beyond loopback, the note that says who sees its debug details; null otherwise. */
export function debugExposureNote({ debug, host, profiler, profilerAllow }: ServeOptions): string | null {
  if (!debug || isLocalhost(host) || isLoopback(host, 0)) return null;
  const details = profiler ? 'stack traces, logs and the profiler' : 'stack traces and logs';
  const advice = 'a public server runs with --env prod or --no-debug';
  // `0.0.0.0/0` or `::/0` is every address of its family: "shown to 0.0.0.0/0 clients only" would read as a restriction.
  if (profilerAllow.some(isEveryAddress)) return `debug mode listens on ${host}, beyond loopback, and shows ${details} to any client (--profiler-allow ${profilerAllow.join(',')}); ${advice}`;
  // Behind a container's port mapping or another machine's browser, the toolbar is missing for this reason: said once, at start.
  return `debug mode listens on ${host}, beyond loopback: ${details} are shown to ${profilerAllow.join(', ')} clients only (--profiler-allow); ${advice}`;
}

/** Whether an address list entry is a range of prefix length 0 (`0.0.0.0/0`, `::/0`), as compileAddressList reads one. */
function isEveryAddress(entry: string): boolean {
  const slash = entry.lastIndexOf('/');
  return slash !== -1 && entry.slice(slash + 1).trim() === '0';
}

const isLoopback = compileAddressList(['loopback']);

function isOperationalError(error: unknown): boolean {
  return error instanceof TlsCertificateError || (typeof (error as { syscall?: unknown })?.syscall === 'string');
}

/** Why a listener could not start, in the words of LISTEN_ERRORS when it has them. */
function describeListenError(error: Error & { code?: string }): string {
  return error.code === undefined ? error.message : `${LISTEN_ERRORS[error.code] ?? error.code} (${error.code})`;
}

/** What to do when the process (EMFILE) or the whole system (ENFILE) has no file descriptor left; bin/serve says the same of its own loading, from a copy of its own (see there why), which a test keeps alike. */
const OUT_OF_DESCRIPTORS = {
  EMFILE:
    'the process is out of file descriptors. Raise its limit of open files (ulimit -n 4096 in its shell, LimitNOFILE=65536 in a systemd unit, docker run --ulimit nofile=65536): every connection takes one (see "File descriptors" in the README)',
  ENFILE: 'the system is out of file descriptors (its whole table is full): close what holds them, or raise fs.file-max (sysctl)',
} as const;

function describeStartupError(error: unknown, options: ServeOptions): string {
  const { code, syscall, address, port } = (error ?? {}) as { code?: string; syscall?: string; address?: string; port?: number };
  if ((syscall === 'listen' || syscall === 'getaddrinfo' || syscall === 'bind') && code !== undefined) {
    const host = address ?? options.host;
    const where = port === undefined ? host : `${host.includes(':') ? `[${host}]` : host}:${port}`;
    return `cannot listen on ${where}: ${LISTEN_ERRORS[code] ?? code} (${code})`;
  }
  // Node's loader reads a module graph's files all at once: under a low `ulimit -n` the start fails on
  // whichever one came last, and its bare message ("open .../errors.js") sent people looking at that file.
  if (code === 'EMFILE' || code === 'ENFILE') return `${(error as Error).message}: ${OUT_OF_DESCRIPTORS[code]}`;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** Waits for the app to be ready, at most READY_WAIT_MS, and no longer than until `stop` resolves. */
async function readyOrLate(app: App, stop: Promise<unknown>): Promise<void> {
  if (app.ready === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, READY_WAIT_MS);
    timer.unref();
  });
  await Promise.race([app.ready(), late, stop]);
  clearTimeout(timer);
}
