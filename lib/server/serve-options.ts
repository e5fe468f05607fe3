import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { compileTrustedHosts } from '../../kernel/index.js';
import { PRODUCTION_ENVIRONMENTS, isProductionEnvironment } from '../app/environment.js';
import { createFileLinker } from '../errors/file-link.js';
import { compileAddressList } from '../http/address-list.js';
import { LEVEL_NAMES_TEXT, isLevelName } from '../log/logger.js';
import { DEFAULT_LIMITS, MAX_TIMER_MS } from './listen.js';

/** What `bin/serve` was asked to do, after flags, environment variables and defaults are merged. */
export interface ServeOptions {
  host: string;
  port: number;
  /** `null` when https is turned off (`--https-port off`). */
  httpsPort: number | null;
  env: string;
  debug: boolean;
  /** Whether debug mode records requests (`--no-profiler`: debug pages and logs without the profiler's cost). */
  profiler: boolean;
  /** Both paths, or both `null` for the cached development certificate. */
  tlsCert: string | null;
  tlsKey: string | null;
  /** Where the profiler keeps its files. */
  profilerDir: string;
  /** Most profiles kept (the oldest go first). */
  profilerMaxProfiles: number;
  /** Clients that may see the profiler and debug details (CIDR list). */
  profilerAllow: string[];
  /** Proxies whose X-Forwarded-* headers are believed (CIDR list); none by default. */
  trustedProxies: string[];
  /** Hosts the service answers for (`example.com`, `.example.com`, `*.example.com`, IP addresses); `null`: every host. */
  trustedHosts: string[] | null;
  /** The editor stack frames link to in debug mode (a name or a URL format); `null`: no links. */
  ide: string | null;
  /** The least severe level written to stderr (lower case), or `off`. */
  logLevel: string;
  /** Milliseconds the kernel has to start a response before it answers 503 (Limits.responseTimeout); 0 is off. */
  responseTimeout: number;
  help: boolean;
}

/** The defaults of `bin/serve`, in one place: the parser and the --help text both read them. */
export const SERVE_DEFAULTS = Object.freeze({
  host: '127.0.0.1',
  port: 8000,
  httpsPort: 8443,
  env: 'staging',
  /** Debug is on, except in these environments, where only an explicit --debug or APP_DEBUG turns it on. */
  debugOffIn: PRODUCTION_ENVIRONMENTS,
  /** Where the self-signed development certificate is cached when no --tls-cert/--tls-key is given. */
  devCertificateDir: 'var/tls',
  profilerDir: 'var/profiler',
  profilerMaxProfiles: 10_000,
  profilerAllow: Object.freeze(['loopback']),
  trustedProxies: Object.freeze([] as string[]),
  /** Every host: a list is the operator's to give, the names the service is reached by. */
  trustedHosts: null,
  logLevel: 'warning',
  responseTimeout: DEFAULT_LIMITS.responseTimeout,
});

/** Thrown by parseServeOptions for a command line or environment the CLI cannot use; the message says what to fix. */
export class UsageError extends Error {
  readonly code = 'HK_CLI_USAGE';
  override readonly name = 'UsageError';
}

type ValueOption = 'host' | 'port' | 'https-port' | 'env' | 'tls-cert' | 'tls-key' | 'profiler-dir' | 'profiler-max-profiles' | 'profiler-allow' | 'trusted-proxies' | 'trusted-hosts' | 'ide' | 'log-level' | 'response-timeout';

/** Each flag that takes a value, with its environment variable and the help line; order is the --help order. */
const VALUE_OPTIONS: ReadonlyArray<{ flag: ValueOption; envVar: string; value: string; default: string; help: string }> = [
  { flag: 'host', envVar: 'HOST', value: '<address>', default: SERVE_DEFAULTS.host, help: 'interface to listen on (0.0.0.0 or :: for all)' },
  { flag: 'port', envVar: 'PORT', value: '<port>', default: String(SERVE_DEFAULTS.port), help: 'http port, 0 picks a free one' },
  { flag: 'https-port', envVar: 'HTTPS_PORT', value: '<port|off>', default: String(SERVE_DEFAULTS.httpsPort), help: 'https port, 0 picks a free one, off turns https off' },
  { flag: 'env', envVar: 'APP_ENV', value: '<name>', default: SERVE_DEFAULTS.env, help: 'application environment (without APP_ENV: NODE_ENV, if set)' },
  { flag: 'tls-cert', envVar: 'TLS_CERT', value: '<file>', default: `self-signed, cached in ${SERVE_DEFAULTS.devCertificateDir}/`, help: 'PEM certificate (chain) for https; needs --tls-key' },
  { flag: 'tls-key', envVar: 'TLS_KEY', value: '<file>', default: `self-signed, cached in ${SERVE_DEFAULTS.devCertificateDir}/`, help: 'PEM private key for https; needs --tls-cert' },
  { flag: 'profiler-dir', envVar: 'PROFILER_DIR', value: '<dir>', default: SERVE_DEFAULTS.profilerDir, help: 'where the profiler keeps profiles (several servers may share one)' },
  { flag: 'profiler-max-profiles', envVar: 'PROFILER_MAX_PROFILES', value: '<n>', default: String(SERVE_DEFAULTS.profilerMaxProfiles), help: 'most profiles kept; the oldest go first (also: 2 days at most)' },
  { flag: 'profiler-allow', envVar: 'PROFILER_ALLOW', value: '<cidr,...>', default: SERVE_DEFAULTS.profilerAllow.join(','), help: 'clients that may see the profiler, stack traces and logs,\non IP addresses, localhost, *.localhost and the trusted hosts' },
  { flag: 'trusted-proxies', envVar: 'TRUSTED_PROXIES', value: '<cidr,...>', default: 'none', help: 'proxies whose X-Forwarded-For/-Proto/-Host/-Port are believed' },
  { flag: 'trusted-hosts', envVar: 'TRUSTED_HOSTS', value: '<host,...>', default: 'any', help: 'hosts answered for (example.com; .example.com: it and its subdomains;\n*.example.com: subdomains only; IP addresses); others get a 400' },
  { flag: 'ide', envVar: 'HTTP_KERNEL_IDE', value: '<editor|format>', default: 'none', help: 'debug pages link stack frames to this editor (vscode, cursor, webstorm,\nidea, zed, sublime, ...) or URL format (%f file, %l line: vscode://file/%f:%l)' },
  { flag: 'response-timeout', envVar: 'RESPONSE_TIMEOUT', value: '<seconds|off>', default: String(SERVE_DEFAULTS.responseTimeout / 1000), help: 'time the application has to start a response (0.5 is half a second);\nthen it answers 503, logged, through its error page; 0 or off: no limit' },
  { flag: 'log-level', envVar: 'LOG_LEVEL', value: '<level|off>', default: SERVE_DEFAULTS.logLevel, help: 'least severe level written to stderr (emergency, alert, critical, error,\nwarning, notice, info, debug; or emerg, crit, err, warn), or off; 4xx\nerrors are error (a client that left, 499: info), 5xx critical' },
];

/** Flags that take no value. */
const SWITCHES: ReadonlySet<string> = new Set(['help', 'debug', 'no-debug', 'profiler', 'no-profiler']);

const PARSE_CONFIG = {
  ...Object.fromEntries(VALUE_OPTIONS.map(({ flag }) => [flag, { type: 'string' as const }])),
  debug: { type: 'boolean' as const },
  'no-debug': { type: 'boolean' as const },
  profiler: { type: 'boolean' as const },
  'no-profiler': { type: 'boolean' as const },
  help: { type: 'boolean' as const, short: 'h' },
};

/** The --help text: every flag with its environment variable and default. */
export function formatServeHelp(): string {
  const rows: Array<[string, string]> = VALUE_OPTIONS.map((option) => [
    `--${option.flag} ${option.value}`,
    `${option.help}\n[env ${option.envVar}; default ${option.default}]`,
  ]);
  rows.push(
    ['--debug, --no-debug', `profiler and debug error pages\n[env APP_DEBUG=1|0; default on, off when the environment is ${SERVE_DEFAULTS.debugOffIn.join(' or ')}]`],
    ['--profiler, --no-profiler', 'in debug mode, record every request for the profiler\n[env PROFILER=1|0; default on]'],
    ['-h, --help', 'show this help'],
  );
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  const lines = rows.flatMap(([left, right]) =>
    right.split('\n').map((text, i) => `  ${(i === 0 ? left : '').padEnd(width)}${text}`),
  );
  return [
    'Usage: node bin/serve [options]   (installed as a dependency: npx http-kernel-serve [options])',
    '',
    'Serves the reference application over http and https, and shuts down gracefully on SIGTERM, SIGINT, SIGHUP or SIGUSR2.',
    'Flags beat environment variables; an empty or blank variable (spaces only) counts as unset,\nan empty or blank flag value is a usage error.',
    '',
    'Options:',
    ...lines,
    '',
  ].join('\n');
}

/** Merges argv, environment variables and SERVE_DEFAULTS; pure, throws UsageError. */
export function parseServeOptions(argv: readonly string[], env: NodeJS.ProcessEnv): ServeOptions {
  const { tokens } = parseArgs({ args: [...argv], options: PARSE_CONFIG, strict: false, allowPositionals: true, tokens: true });
  const flags = new Map<ValueOption, string>();
  let debugFlag: boolean | undefined;
  let profilerFlag: boolean | undefined;
  let help = false;

  for (const token of tokens) {
    if (token.kind === 'option-terminator') continue;
    if (token.kind === 'positional') throw new UsageError(`unexpected argument "${token.value}"; serve takes options only (see --help)`);
    if (SWITCHES.has(token.name)) {
      if (token.value !== undefined) throw new UsageError(`option ${token.rawName} takes no value (see --help)`);
      if (token.name === 'help') help = true;
      else if (token.name === 'debug' || token.name === 'no-debug') debugFlag = token.name === 'debug';
      else profilerFlag = token.name === 'profiler';
    } else if (VALUE_OPTIONS.some(({ flag }) => flag === token.name)) {
      // Non-strict parsing takes the next word whatever it is: `--port --debug` means the value was forgotten.
      // A blank one (`--host "$UNSET"`, `--ide ' '`) too: `--host ''` would listen on every interface.
      if (token.value === undefined || isBlank(token.value) || (!token.inlineValue && token.value.startsWith('-') && !/^-\d/.test(token.value))) {
        throw new UsageError(`option ${token.rawName} needs a value (see --help)`);
      }
      flags.set(token.name as ValueOption, token.value);
    } else {
      throw new UsageError(`unknown option ${token.rawName} (see --help)`);
    }
  }

  // --help answers whatever else is wrong: a broken PORT in the environment must not hide the help that explains it.
  if (help) {
    return {
      ...SERVE_DEFAULTS,
      debug: true,
      profiler: true,
      tlsCert: null,
      tlsKey: null,
      profilerAllow: [...SERVE_DEFAULTS.profilerAllow],
      trustedProxies: [...SERVE_DEFAULTS.trustedProxies],
      ide: null,
      logLevel: SERVE_DEFAULTS.logLevel,
      help: true,
    };
  }

  const pick = (flag: ValueOption): { value: string; source: string } | undefined => {
    const fromFlag = flags.get(flag);
    if (fromFlag !== undefined) return { value: fromFlag, source: `--${flag}` };
    const envVar = VALUE_OPTIONS.find((option) => option.flag === flag)!.envVar;
    const fromEnv = readEnv(env, envVar);
    return fromEnv === undefined ? undefined : { value: fromEnv, source: envVar };
  };

  const hostSetting = pick('host');
  const host = hostSetting?.value ?? SERVE_DEFAULTS.host;
  // An address or a name, no port, scheme or brackets: `127.0.0.1:80` or `http://…` would go to DNS and fail as an unknown host.
  if (hostSetting !== undefined && isIP(host) === 0 && !HOST_NAME.test(host)) {
    throw new UsageError(`${hostSetting.source} must be an IP address (127.0.0.1, ::1, 0.0.0.0 or :: for all) or a host name, without a port, brackets or scheme (got "${host}"); the port is --port`);
  }
  const port = parsePort(pick('port'), 'an integer from 0 to 65535') ?? SERVE_DEFAULTS.port;
  const httpsPortSetting = pick('https-port');
  const httpsPort =
    httpsPortSetting?.value === 'off'
      ? null
      : (parsePort(httpsPortSetting, 'an integer from 0 to 65535, or off') ?? SERVE_DEFAULTS.httpsPort);
  if (httpsPort !== null && httpsPort !== 0 && httpsPort === port) {
    throw new UsageError(`http and https cannot share port ${port}; give --https-port another port, or off`);
  }

  // NODE_ENV after APP_ENV: a Node image's NODE_ENV=production, with no APP_ENV, must not serve stack traces and the profiler.
  const appEnv = parseEnvironmentName(pick('env') ?? withSource(readEnv(env, 'NODE_ENV'), 'NODE_ENV')) ?? SERVE_DEFAULTS.env;
  const debug = debugFlag ?? parseSwitchEnv('APP_DEBUG', readEnv(env, 'APP_DEBUG')) ?? !isProductionEnvironment(appEnv);
  const profiler = debug && (profilerFlag ?? parseSwitchEnv('PROFILER', readEnv(env, 'PROFILER')) ?? true);

  const tlsCertSetting = pick('tls-cert');
  const tlsKeySetting = pick('tls-key');
  const tlsCert = tlsCertSetting?.value ?? null;
  const tlsKey = tlsKeySetting?.value ?? null;
  if ((tlsCert === null) !== (tlsKey === null)) {
    throw new UsageError(
      `${tlsCert === null ? '--tls-key' : '--tls-cert'} needs ${tlsCert === null ? '--tls-cert' : '--tls-key'}: give both (or TLS_CERT and TLS_KEY), or neither for the development certificate`,
    );
  }
  // A certificate nobody serves is a mistake in one of the two settings: said, not silently ignored.
  if (httpsPort === null && tlsCertSetting !== undefined && tlsKeySetting !== undefined) {
    const off = httpsPortSetting!.source === 'HTTPS_PORT' ? 'HTTPS_PORT=off' : '--https-port off';
    throw new UsageError(`${tlsCertSetting.source} and ${tlsKeySetting.source} are for https, which ${off} turns off: give --https-port a port, or leave the certificate and key out`);
  }

  const maxProfilesSetting = pick('profiler-max-profiles');
  // Digits only, as ports: Number() would read 1e3, 0x10, ' 7 ' and 5.0 as counts too.
  const profilerMaxProfiles = maxProfilesSetting === undefined ? SERVE_DEFAULTS.profilerMaxProfiles : /^\d{1,15}$/.test(maxProfilesSetting.value) ? Number(maxProfilesSetting.value) : NaN;
  if (!Number.isInteger(profilerMaxProfiles) || profilerMaxProfiles < 1) {
    throw new UsageError(`${maxProfilesSetting!.source} must be a whole number of 1 or more (got "${maxProfilesSetting!.value}")`);
  }
  const profilerAllow = parseList(pick('profiler-allow')) ?? [...SERVE_DEFAULTS.profilerAllow];
  const trustedProxies = parseList(pick('trusted-proxies')) ?? [...SERVE_DEFAULTS.trustedProxies];
  const trustedHosts = parseHostList(pick('trusted-hosts')) ?? SERVE_DEFAULTS.trustedHosts;
  const profilerDir = pick('profiler-dir')?.value ?? SERVE_DEFAULTS.profilerDir;
  const ideSetting = pick('ide');
  const ide = ideSetting?.value ?? null;
  if (ide !== null) {
    try {
      createFileLinker(ide);
    } catch (error) {
      throw new UsageError(`${ideSetting!.source}: ${(error as Error).message.replace(/^ide /, '')}`);
    }
  }

  const logLevelSetting = pick('log-level');
  const logLevel = logLevelSetting?.value.trim().toLowerCase() ?? SERVE_DEFAULTS.logLevel;
  if (logLevel !== 'off' && !isLevelName(logLevel)) {
    throw new UsageError(`${logLevelSetting!.source} must be a level (${LEVEL_NAMES_TEXT}) or off (got "${logLevelSetting!.value}")`);
  }

  const responseTimeout = parseSeconds(pick('response-timeout')) ?? SERVE_DEFAULTS.responseTimeout;

  return { host, port, httpsPort, env: appEnv, debug, profiler, tlsCert, tlsKey, profilerDir, profilerMaxProfiles, profilerAllow, trustedProxies, trustedHosts, ide, logLevel, responseTimeout, help };
}

/**
 * An environment name: letters and digits, with `.`, `_`, `-`, `/` or `:` inside (`prod`, `dev-eu.2`,
 * GitLab's `review/feature-x`). It is only shown and compared, never a path: what it refuses is a name
 * a quote, a space or a `;` made into another (`"prod"` from an env file would leave debug on).
 */
const ENVIRONMENT_NAME = /^[A-Za-z0-9](?:[\w.:/-]*[A-Za-z0-9])?$/;

/** The environment's name without the spaces around it (`NODE_ENV=' production '` is production, named `production`); anything but a name is refused. */
function parseEnvironmentName(setting: { value: string; source: string } | undefined): string | undefined {
  if (setting === undefined) return undefined;
  const name = setting.value.trim();
  if (!ENVIRONMENT_NAME.test(name)) throw new UsageError(`${setting.source} must be an environment name: letters and digits, with . _ - / or : inside (prod, staging, review/feature-x) (got "${setting.value}")`);
  return name;
}

function withSource(value: string | undefined, source: string): { value: string; source: string } | undefined {
  return value === undefined ? undefined : { value, source };
}

/** A host name as listen() resolves it: letters, digits, `-` and dots (`localhost`, `my-host.internal`). */
const HOST_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$/;

function parsePort(setting: { value: string; source: string } | undefined, allowed: string): number | undefined {
  if (setting === undefined) return undefined;
  const port = /^\d{1,5}$/.test(setting.value) ? Number(setting.value) : NaN;
  if (!(port <= 65535)) throw new UsageError(`${setting.source} must be ${allowed} (got "${setting.value}")`);
  return port;
}

/** Longest duration parseSeconds takes: setTimeout's longest delay, whole seconds. */
const MAX_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

/** A duration in seconds, digits with at most three decimals (milliseconds), as milliseconds; `off` is 0. */
function parseSeconds(setting: { value: string; source: string } | undefined): number | undefined {
  if (setting === undefined) return undefined;
  if (setting.value.toLowerCase() === 'off') return 0;
  // Digits only, as ports and counts: Number() would read 1e3, 0x10, ' 5 ' and '' as durations too.
  const seconds = /^\d{1,7}(?:\.\d{1,3})?$/.test(setting.value) ? Number(setting.value) : NaN;
  if (!(seconds <= MAX_SECONDS)) throw new UsageError(`${setting.source} must be a number of seconds from 0 to ${MAX_SECONDS}, with at most three decimals (30, 0.5), or off (got "${setting.value}")`);
  return Math.round(seconds * 1000);
}

/** A comma-separated list of addresses or CIDR ranges, each checked the way the server will use it. */
function parseList(setting: { value: string; source: string } | undefined): string[] | undefined {
  if (setting === undefined) return undefined;
  const items = setting.value.split(',').map((item) => item.trim()).filter(Boolean);
  try {
    compileAddressList(items);
  } catch (error) {
    throw new UsageError(`${setting.source}: ${(error as Error).message} (addresses, CIDR ranges like 10.0.0.0/8, or loopback, linklocal, uniquelocal)`);
  }
  return items;
}

/**
 * A comma-separated list of trusted hosts, each checked as createKernel will. Regular expressions
 * are left to createKernel's RegExp entries: a comma is part of their syntax (`{1,3}`), and a pattern
 * typed into a shell or an environment file is where an unescaped dot or a backslash the shell ate goes unseen.
 */
function parseHostList(setting: { value: string; source: string } | undefined): string[] | undefined {
  if (setting === undefined) return undefined;
  const items = setting.value.split(',').map((item) => item.trim()).filter(Boolean);
  if (items.length === 0) throw new UsageError(`${setting.source} lists no host; leave it out to answer for every host`);
  const pattern = items.find((item) => item.startsWith('/'));
  if (pattern !== undefined) {
    throw new UsageError(`${setting.source}: "${pattern}" looks like a regular expression; give host names (example.com, .example.com, *.example.com, IP addresses), or RegExp entries to createKernel's trustedHosts`);
  }
  try {
    compileTrustedHosts(items);
  } catch (error) {
    throw new UsageError(`${setting.source}: ${(error as Error).message}`);
  }
  return items;
}

/**
 * An environment variable's value, or `undefined` when it is unset, empty or blank (spaces only): the
 * one rule for every variable serve reads. `LOG_LEVEL= ` left in an env file, or `PORT="$UNSET "` in
 * a script, means "not set" as `LOG_LEVEL=` does (dotenv, Symfony and 12-factor tools read empty as unset).
 */
function readEnv(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || isBlank(value) ? undefined : value;
}

/** Whether a flag's or variable's value is empty or whitespace only. */
function isBlank(value: string): boolean {
  return value.trim() === '';
}

/** An on/off environment variable (APP_DEBUG, PROFILER), already read by readEnv. */
function parseSwitchEnv(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  const normalized = value.toLowerCase();
  if (['1', 'true', 'on', 'yes'].includes(normalized)) return true;
  if (['0', 'false', 'off', 'no'].includes(normalized)) return false;
  throw new UsageError(`${name} must be 1 or 0 (got "${value}")`);
}
