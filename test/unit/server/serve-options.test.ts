import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SERVE_DEFAULTS, UsageError, formatServeHelp, parseServeOptions } from '../../../lib/server/serve-options.js';

function usageError(argv: string[], env: NodeJS.ProcessEnv = {}): UsageError {
  try {
    parseServeOptions(argv, env);
  } catch (error) {
    assert.instance(error, UsageError);
    assert.is((error as UsageError).code, 'HK_CLI_USAGE');
    return error as UsageError;
  }
  assert.unreachable(`expected a UsageError for ${JSON.stringify(argv)}`);
  throw new Error('unreachable');
}

test('no flags and no environment give the documented defaults', () => {
  assert.equal(parseServeOptions([], {}), {
    host: '127.0.0.1',
    port: 8000,
    httpsPort: 8443,
    env: 'staging',
    debug: true,
    profiler: true,
    tlsCert: null,
    tlsKey: null,
    profilerDir: 'var/profiler',
    profilerMaxProfiles: 10000,
    profilerAllow: ['loopback'],
    trustedProxies: [],
    trustedHosts: null,
    ide: null,
    logLevel: 'warning',
    responseTimeout: 30_000,
    help: false,
  });
});

test('environment variables fill in options not given as flags', () => {
  const options = parseServeOptions([], {
    HOST: '::1',
    PORT: '9000',
    HTTPS_PORT: '9443',
    APP_ENV: 'test',
    APP_DEBUG: '0',
    TLS_CERT: 'c.pem',
    TLS_KEY: 'k.pem',
    PROFILER_DIR: '/tmp/p',
    PROFILER_MAX_PROFILES: '50',
    PROFILER_ALLOW: '127.0.0.1/32, 10.0.0.0/8',
    TRUSTED_PROXIES: 'loopback',
    TRUSTED_HOSTS: 'example.com, .example.org',
    HTTP_KERNEL_IDE: 'cursor',
    LOG_LEVEL: 'ERROR',
    RESPONSE_TIMEOUT: '12',
  });
  assert.equal(options, {
    host: '::1',
    port: 9000,
    httpsPort: 9443,
    env: 'test',
    debug: false,
    profiler: false,
    tlsCert: 'c.pem',
    tlsKey: 'k.pem',
    profilerDir: '/tmp/p',
    profilerMaxProfiles: 50,
    profilerAllow: ['127.0.0.1/32', '10.0.0.0/8'],
    trustedProxies: ['loopback'],
    trustedHosts: ['example.com', '.example.org'],
    ide: 'cursor',
    logLevel: 'error',
    responseTimeout: 12_000,
    help: false,
  });
});

test('--log-level takes a level in any case, or its short name (warn, err, crit, emerg) as the logger does, or off; anything else is a usage error naming the levels', () => {
  assert.is(parseServeOptions(['--log-level', 'Critical'], {}).logLevel, 'critical');
  assert.is(parseServeOptions(['--log-level', 'warn'], {}).logLevel, 'warn');
  assert.is(parseServeOptions([], { LOG_LEVEL: 'ERR' }).logLevel, 'err');
  assert.is(parseServeOptions(['--log-level=off'], {}).logLevel, 'off');
  assert.is(parseServeOptions([], { LOG_LEVEL: 'debug' }).logLevel, 'debug');
  assert.throws(() => parseServeOptions(['--log-level', 'verbose'], {}), (error: Error) => error instanceof UsageError && /^--log-level must be a level \(emergency, alert, critical, error, warning, notice, info, debug \(or emerg, crit, err, warn\)\) or off \(got "verbose"\)$/.test(error.message));
});

test('--response-timeout takes seconds (up to three decimals) or off; 0 is off too', () => {
  assert.is(parseServeOptions(['--response-timeout', '5'], {}).responseTimeout, 5_000);
  assert.is(parseServeOptions(['--response-timeout=0.25'], {}).responseTimeout, 250);
  assert.is(parseServeOptions(['--response-timeout', 'OFF'], {}).responseTimeout, 0);
  assert.is(parseServeOptions(['--response-timeout', '0'], {}).responseTimeout, 0);
  assert.is(parseServeOptions([], { RESPONSE_TIMEOUT: 'off' }).responseTimeout, 0);
  assert.is(parseServeOptions(['--response-timeout', '2147483'], {}).responseTimeout, 2_147_483_000);
});

test('a --response-timeout that is no number of seconds is a usage error saying what it takes', () => {
  for (const value of ['1e3', '0x10', '5s', '1.2345', '.5', '2147484', 'never', '-1']) {
    const error = usageError(['--response-timeout', value]);
    assert.is(error.message, `--response-timeout must be a number of seconds from 0 to 2147483, with at most three decimals (30, 0.5), or off (got "${value}")`);
  }
  assert.match(usageError([], { RESPONSE_TIMEOUT: '-1' }).message, /^RESPONSE_TIMEOUT must be a number of seconds/);
  assert.match(usageError(['--response-timeout', '-1']).message, /^--response-timeout must be a number of seconds/);
});

test('--response-timeout refuses spaces around its value, as ports and counts do', () => {
  for (const value of [' 5 ', '5 ', ' 0.5', ' off', 'off ']) {
    assert.match(usageError(['--response-timeout', value]).message, /^--response-timeout must be a number of seconds/, JSON.stringify(value));
  }
  assert.is(usageError([], { RESPONSE_TIMEOUT: ' 5 ' }).message, 'RESPONSE_TIMEOUT must be a number of seconds from 0 to 2147483, with at most three decimals (30, 0.5), or off (got " 5 ")');
});

test('a flag beats its environment variable', () => {
  const options = parseServeOptions(['--port', '9001', '--host=0.0.0.0', '--env', 'dev', '--debug'], {
    PORT: '9000',
    HOST: '127.0.0.1',
    APP_ENV: 'test',
    APP_DEBUG: '0',
  });
  assert.is(options.port, 9001);
  assert.is(options.host, '0.0.0.0');
  assert.is(options.env, 'dev');
  assert.is(options.debug, true);
});

/** Every environment variable serve reads, as its --help lists them. */
const ENV_VARS = [...formatServeHelp().matchAll(/\[env ([A-Z_]+)/g)].map((match) => match[1]!);

test('empty environment variables count as unset', () => {
  assert.is(parseServeOptions([], { PORT: '', APP_DEBUG: '' }).port, 8000);
});

test('every environment variable that is empty or blank (whitespace only) counts as unset: the defaults apply', () => {
  assert.ok(ENV_VARS.length >= 16, ENV_VARS.join(', '));
  for (const blank of ['', ' ', '  \t ', '\n']) {
    const env = Object.fromEntries(ENV_VARS.map((name) => [name, blank]));
    assert.equal(parseServeOptions([], env), parseServeOptions([], {}), JSON.stringify(blank));
  }
  // Blank beside a value set elsewhere: the flag or the other variable decides.
  assert.is(parseServeOptions(['--log-level', 'debug'], { LOG_LEVEL: ' ' }).logLevel, 'debug');
  assert.is(parseServeOptions([], { APP_ENV: 'prod', APP_DEBUG: ' ' }).debug, false);
  assert.is(parseServeOptions([], { HTTP_KERNEL_IDE: ' ', LOG_LEVEL: ' ' }).ide, null);
});

test('a blank flag value is a usage error, as an empty one is, for every value flag', () => {
  for (const flag of ['--host', '--port', '--env', '--ide', '--log-level', '--trusted-hosts', '--response-timeout']) {
    assert.match(usageError([flag, ' ']).message, `${flag} needs a value`);
    assert.match(usageError([`${flag}=\t`]).message, `${flag} needs a value`);
  }
});

test('--https-port off turns https off, from the flag or HTTPS_PORT', () => {
  assert.is(parseServeOptions(['--https-port', 'off'], {}).httpsPort, null);
  assert.is(parseServeOptions([], { HTTPS_PORT: 'off' }).httpsPort, null);
});

test('port 0 is accepted for both listeners', () => {
  const options = parseServeOptions(['--port', '0', '--https-port', '0'], {});
  assert.is(options.port, 0);
  assert.is(options.httpsPort, 0);
});

test('the prod environment defaults debug off', () => {
  assert.is(parseServeOptions(['--env', 'prod'], {}).debug, false);
  assert.is(parseServeOptions([], { APP_ENV: 'prod' }).debug, false);
});

test('NODE_ENV is the environment when APP_ENV is unset: NODE_ENV=production (as a Node image sets it) turns debug off; APP_ENV and --env beat it', () => {
  const production = parseServeOptions([], { NODE_ENV: 'production' });
  assert.is(production.env, 'production');
  assert.is(production.debug, false);
  assert.is(production.profiler, false);
  assert.is(parseServeOptions([], { NODE_ENV: 'production', APP_ENV: ' ' }).debug, false, 'a blank APP_ENV is unset');
  assert.is(parseServeOptions([], { NODE_ENV: 'development' }).env, 'development');
  assert.is(parseServeOptions([], { NODE_ENV: 'production', APP_ENV: 'dev' }).env, 'dev');
  assert.is(parseServeOptions(['--env', 'dev'], { NODE_ENV: 'production' }).env, 'dev');
  assert.is(parseServeOptions([], { NODE_ENV: ' ' }).env, 'staging');
  assert.is(parseServeOptions([], { NODE_ENV: 'production', APP_DEBUG: '1' }).debug, true, 'APP_DEBUG=1 still turns debug on');
});

test('the environment\'s name is trimmed, from --env, APP_ENV and NODE_ENV alike: NODE_ENV=\' production \' is named production', () => {
  assert.is(parseServeOptions([], { NODE_ENV: ' production ' }).env, 'production');
  assert.is(parseServeOptions([], { NODE_ENV: ' production ' }).debug, false);
  assert.is(parseServeOptions([], { APP_ENV: '\tdev\n' }).env, 'dev');
  assert.is(parseServeOptions(['--env', ' PROD '], {}).env, 'PROD');
  assert.is(parseServeOptions([], { NODE_ENV: 'dev-eu.2' }).env, 'dev-eu.2');
});

test('an environment name as CI systems and deployments write it, with / or : inside (GitLab\'s review/feature-x, prod:eu), is taken as it is', () => {
  assert.is(parseServeOptions([], { APP_ENV: 'review/feature-x' }).env, 'review/feature-x');
  assert.is(parseServeOptions(['--env', 'prod:eu'], {}).env, 'prod:eu');
  assert.is(parseServeOptions([], { NODE_ENV: 'staging/2' }).env, 'staging/2');
  assert.match(usageError([], { APP_ENV: 'review/' }).message, /^APP_ENV must be an environment name: /);
  assert.match(usageError([], { APP_ENV: '/prod' }).message, /^APP_ENV must be an environment name: /);
});

test('an environment name with spaces, quotes or other characters inside is a usage error naming its source', () => {
  assert.is(usageError([], { NODE_ENV: 'pro duction' }).message, 'NODE_ENV must be an environment name: letters and digits, with . _ - / or : inside (prod, staging, review/feature-x) (got "pro duction")');
  assert.match(usageError([], { APP_ENV: '"prod"' }).message, /^APP_ENV must be an environment name: .*\(got ""prod""\)$/);
  assert.match(usageError(['--env', 'prod;rm'], {}).message, /^--env must be an environment name: /);
  assert.match(usageError(['--env=-prod'], {}).message, /^--env must be an environment name: /);
});

test('--env prod --debug keeps debug on', () => {
  assert.is(parseServeOptions(['--env', 'prod', '--debug'], {}).debug, true);
  assert.is(parseServeOptions(['--env', 'prod'], { APP_DEBUG: '1' }).debug, true);
});

test('--no-debug turns debug off, and the last of --debug/--no-debug wins', () => {
  assert.is(parseServeOptions(['--no-debug'], {}).debug, false);
  assert.is(parseServeOptions(['--no-debug', '--debug'], {}).debug, true);
  assert.is(parseServeOptions(['--debug', '--no-debug'], { APP_DEBUG: '1' }).debug, false);
});

test('a port outside 0..65535 or not an integer is a usage error naming its source', () => {
  assert.match(usageError(['--port', '65536']).message, '--port must be an integer from 0 to 65535 (got "65536")');
  assert.match(usageError(['--port', '80.5']).message, '--port');
  assert.match(usageError(['--port', 'abc']).message, '--port');
  assert.match(usageError([], { PORT: '-1' }).message, 'PORT must be');
  assert.match(usageError(['--https-port', 'on']).message, '--https-port must be an integer from 0 to 65535, or off');
});

test('an unknown flag is a usage error that names it and points at --help', () => {
  const { message } = usageError(['--prot', '8000']);
  assert.match(message, '--prot');
  assert.match(message, '--help');
  assert.match(usageError(['-x']).message, '-x');
});

test('a value flag without its value is a usage error', () => {
  assert.match(usageError(['--port']).message, '--port needs a value');
  assert.match(usageError(['--port', '--debug']).message, '--port needs a value');
});

test('an empty flag value is a usage error, never a silent fallback (--host "" would listen on every interface)', () => {
  assert.match(usageError(['--host', '']).message, '--host needs a value');
  assert.match(usageError(['--host=']).message, '--host needs a value');
  assert.match(usageError(['--tls-cert', '', '--tls-key', 'key.pem']).message, '--tls-cert needs a value');
  assert.match(usageError(['--profiler-dir=']).message, '--profiler-dir needs a value');
  assert.match(usageError(['--env', '']).message, '--env needs a value');
});

test('a positional argument is a usage error', () => {
  assert.match(usageError(['serve']).message, '"serve"');
});

test('--tls-cert without --tls-key is a usage error, and so is the reverse', () => {
  assert.match(usageError(['--tls-cert', 'cert.pem']).message, '--tls-cert needs --tls-key');
  assert.match(usageError([], { TLS_KEY: 'key.pem' }).message, '--tls-key needs --tls-cert');
});

test('--tls-cert and --tls-key with --https-port off is a usage error naming where each came from', () => {
  assert.is(usageError(['--https-port', 'off', '--tls-cert', 'c.pem', '--tls-key', 'k.pem']).message, '--tls-cert and --tls-key are for https, which --https-port off turns off: give --https-port a port, or leave the certificate and key out');
  assert.match(usageError(['--tls-cert', 'c.pem'], { HTTPS_PORT: 'off', TLS_KEY: 'k.pem' }).message, /^--tls-cert and TLS_KEY are for https, which HTTPS_PORT=off turns off/);
  assert.is(parseServeOptions(['--https-port', 'off'], {}).tlsCert, null, 'https off without a certificate is fine');
});

test('a certificate flag pairs with a key from the environment', () => {
  const options = parseServeOptions(['--tls-cert', 'c.pem'], { TLS_KEY: 'k.pem' });
  assert.is(options.tlsCert, 'c.pem');
  assert.is(options.tlsKey, 'k.pem');
});

test('http and https on the same fixed port is a usage error', () => {
  assert.match(usageError(['--port', '9000', '--https-port', '9000']).message, 'cannot share port 9000');
});

test('APP_DEBUG other than a boolean word is a usage error', () => {
  assert.match(usageError([], { APP_DEBUG: 'maybe' }).message, 'APP_DEBUG');
});

test('--help and -h ask for help', () => {
  assert.is(parseServeOptions(['--help'], {}).help, true);
  assert.is(parseServeOptions(['-h'], {}).help, true);
});

test('the help text lists every flag with its environment variable and default', () => {
  const help = formatServeHelp();
  for (const flag of ['--host', '--port', '--https-port', '--env', '--debug', '--no-debug', '--profiler', '--no-profiler', '--tls-cert', '--tls-key', '--profiler-dir', '--profiler-max-profiles', '--profiler-allow', '--trusted-proxies', '--trusted-hosts', '--response-timeout', '--help']) {
    assert.ok(help.includes(flag), `help mentions ${flag}`);
  }
  for (const envVar of ['HOST', 'PORT', 'HTTPS_PORT', 'APP_ENV', 'APP_DEBUG', 'PROFILER', 'TLS_CERT', 'TLS_KEY', 'PROFILER_DIR', 'PROFILER_MAX_PROFILES', 'PROFILER_ALLOW', 'TRUSTED_PROXIES', 'TRUSTED_HOSTS', 'RESPONSE_TIMEOUT']) {
    assert.ok(help.includes(`env ${envVar}`), `help mentions ${envVar}`);
  }
  for (const value of [SERVE_DEFAULTS.host, String(SERVE_DEFAULTS.port), String(SERVE_DEFAULTS.httpsPort), SERVE_DEFAULTS.env, '30']) {
    assert.ok(help.includes(`default ${value}`), `help shows default ${value}`);
  }
  // The request believes a trusted proxy's X-Forwarded-Port too (Request.port), so the help names it.
  assert.ok(help.includes('X-Forwarded-For/-Proto/-Host/-Port'), 'help names every X-Forwarded-* header a trusted proxy sets');
});

test('--no-profiler (or PROFILER=0) keeps debug mode without recording; the profiler is never on without debug', () => {
  assert.equal([parseServeOptions(['--no-profiler'], {}).debug, parseServeOptions(['--no-profiler'], {}).profiler], [true, false]);
  assert.is(parseServeOptions([], { PROFILER: '0' }).profiler, false);
  assert.is(parseServeOptions(['--profiler'], { PROFILER: '0' }).profiler, true, 'a flag beats the environment');
  assert.is(parseServeOptions(['--no-profiler', '--profiler'], {}).profiler, true, 'the last flag wins');
  assert.is(parseServeOptions(['--no-debug', '--profiler'], {}).profiler, false);
  assert.is(parseServeOptions(['--env', 'prod'], {}).profiler, false);
  assert.throws(() => parseServeOptions([], { PROFILER: 'maybe' }), (error: unknown) => error instanceof UsageError && /PROFILER must be 1 or 0/.test((error as Error).message));
  assert.throws(() => parseServeOptions(['--no-profiler=1'], {}), (error: unknown) => error instanceof UsageError && /takes no value/.test((error as Error).message));
});

test('bad profiler bounds and address lists are usage errors naming the source', () => {
  assert.throws(() => parseServeOptions(['--profiler-max-profiles', '0'], {}), (error: unknown) => error instanceof UsageError && /--profiler-max-profiles/.test((error as Error).message));
  assert.throws(() => parseServeOptions(['--profiler-allow', 'not-an-ip'], {}), (error: unknown) => error instanceof UsageError && /--profiler-allow/.test((error as Error).message));
  assert.throws(() => parseServeOptions([], { TRUSTED_PROXIES: '300.1.1.1' }), (error: unknown) => error instanceof UsageError && /TRUSTED_PROXIES/.test((error as Error).message));
});

test('--trusted-hosts takes a comma-separated list of hosts, subdomain forms and IP addresses; the flag beats TRUSTED_HOSTS', () => {
  assert.equal(parseServeOptions(['--trusted-hosts', 'example.com,*.example.org, 127.0.0.1,[::1]'], {}).trustedHosts, ['example.com', '*.example.org', '127.0.0.1', '[::1]']);
  assert.equal(parseServeOptions(['--trusted-hosts=a.test'], { TRUSTED_HOSTS: 'b.test' }).trustedHosts, ['a.test']);
});

test('a trusted host the kernel would refuse is a usage error naming its source and the entry', () => {
  assert.is(usageError(['--trusted-hosts', 'example.com:8080']).message, '--trusted-hosts: Invalid trusted host "example.com:8080": hosts are matched without their port; give "example.com".');
  assert.is(usageError([], { TRUSTED_HOSTS: 'a.test,*' }).message, 'TRUSTED_HOSTS: Invalid trusted host "*": "*" would trust every host; leave trustedHosts out to accept every host.');
  assert.is(usageError(['--trusted-hosts', ', ,']).message, '--trusted-hosts lists no host; leave it out to answer for every host');
  assert.is(usageError(['--trusted-hosts', '']).message, 'option --trusted-hosts needs a value (see --help)');
});

test('a regular expression is not read from the command line: a usage error that says where patterns go', () => {
  assert.is(
    usageError(['--trusted-hosts', 'example.com,/^api\\d+\\.example\\.com$/']).message,
    '--trusted-hosts: "/^api\\d+\\.example\\.com$/" looks like a regular expression; give host names (example.com, .example.com, *.example.com, IP addresses), or RegExp entries to createKernel\'s trustedHosts',
  );
});

test('--ide names an editor or a URL format; anything else is a usage error naming where it came from', () => {
  assert.is(parseServeOptions(['--ide', 'vscode'], {}).ide, 'vscode');
  assert.is(parseServeOptions([], { HTTP_KERNEL_IDE: 'myeditor://open?f=%f&l=%l' }).ide, 'myeditor://open?f=%f&l=%l');
  assert.is(parseServeOptions(['--ide', 'zed'], { HTTP_KERNEL_IDE: 'vscode' }).ide, 'zed');
  for (const [args, env, source] of [
    [['--ide', 'notepad'], {}, '--ide'],
    [[], { HTTP_KERNEL_IDE: 'javascript:alert(%f)' }, 'HTTP_KERNEL_IDE'],
  ] as const) {
    const error = usageError([...args], { ...env });
    assert.match(error.message, new RegExp(`^${source}: must be an editor \\(vscode, `));
  }
  assert.match(formatServeHelp(), '--ide <editor|format>');
});

test('--help answers whatever the environment holds: a broken PORT must not hide the help that explains it', () => {
  assert.is(parseServeOptions(['--help'], { PORT: 'abc', APP_DEBUG: 'maybe', PROFILER_MAX_PROFILES: 'x' }).help, true);
  assert.is(parseServeOptions(['-h'], { HOST: 'http://x' }).help, true);
  // A flag of the wrong shape is still refused: the command line itself is wrong.
  usageError(['--help', '--bogus']);
});

test('--profiler-max-profiles takes digits only, as ports do', () => {
  for (const value of ['1e3', '0x10', ' 7 ', '5.0', '1e21', '+5']) {
    assert.match(usageError(['--profiler-max-profiles', value]).message, /must be a whole number of 1 or more/, value);
  }
  assert.is(parseServeOptions(['--profiler-max-profiles', '250'], {}).profilerMaxProfiles, 250);
});

test('--host is an address or a host name: a port, brackets or a scheme are usage errors naming --port', () => {
  for (const value of ['127.0.0.1:80', '[::1]', 'http://127.0.0.1', 'a b', 'localhost:8000']) {
    assert.match(usageError(['--host', value]).message, /must be an IP address .* the port is --port$/, value);
  }
  assert.match(usageError([], { HOST: '127.0.0.1:80' }).message, /^HOST must be an IP address/);
  for (const value of ['127.0.0.1', '::1', '0.0.0.0', '::', 'localhost', 'my-host.internal']) assert.is(parseServeOptions(['--host', value], {}).host, value);
});

test('a negative port is refused for what it is, not as a missing value', () => {
  assert.match(usageError(['--port', '-1']).message, /^--port must be an integer from 0 to 65535 \(got "-1"\)$/);
  assert.match(usageError(['--port', '--debug']).message, /needs a value/);
});

test('the production environment is recognised in any case and with spaces around: --env PROD turns debug off', () => {
  for (const value of ['PROD', ' prod ', 'Production']) assert.is(parseServeOptions(['--env', value], {}).debug, false, value);
  assert.is(parseServeOptions(['--env', 'PROD', '--debug'], {}).debug, true);
});

test('a range of prefix length 0 (every address) is accepted in --profiler-allow and --trusted-proxies', () => {
  assert.equal(parseServeOptions(['--profiler-allow', '0.0.0.0/0,::/0'], {}).profilerAllow, ['0.0.0.0/0', '::/0']);
  assert.equal(parseServeOptions(['--trusted-proxies', '0.0.0.0/0'], {}).trustedProxies, ['0.0.0.0/0']);
  assert.match(usageError(['--profiler-allow', 'nonsense/0']).message, /^--profiler-allow: /);
});

test('the help text: a usage line, what serve does, the rule for blank values, then each option with its value, description, variable and default, the descriptions in one column', () => {
  const help = formatServeHelp();
  const lines = help.split('\n');
  assert.match(lines[0]!, /^Usage: node bin\/serve \[options\] +\(installed as a dependency: npx http-kernel-serve \[options\]\)$/);
  assert.is(lines[1], '');
  assert.match(lines[2]!, /^Serves the reference application over http and https/);
  assert.match(help, /\nFlags beat environment variables; [^\n]+\n[^\n]+usage error\.\n\nOptions:\n {2}--/);
  assert.is(lines.at(-1), '', 'ends with a line break');
  const rows = lines.slice(lines.indexOf('Options:') + 1, -1);
  // An option's first row names it at two spaces in; the rows after it leave that column blank.
  const starts = rows.filter((row) => /^ {2}-/.test(row));
  const lefts = starts.map((row) => /^ {2}(-\S*(?: \S+)*)/.exec(row)![1]!);
  const column = 2 + Math.max(...lefts.map((left) => left.length)) + 2;
  for (const row of rows) {
    assert.match(row.slice(0, column), /^ {2}(?:-\S*(?: \S+)* *| *)$/, `the left column of ${JSON.stringify(row)}`);
    assert.match(row.slice(column), /^\S/, `a description starts at column ${column}: ${JSON.stringify(row)}`);
  }
  assert.ok(rows.some((row) => !/^ {2}-/.test(row)), 'descriptions of more than a line continue on rows of their own');
  // Each flag that takes a value names it, then says what it does, its variable and its default.
  const blocks = help.split(/\n(?= {2}-)/).slice(1);
  assert.is(blocks.length, starts.length);
  for (const block of blocks) {
    const text = block.split('\n').map((row) => row.slice(column)).join(' ');
    assert.match(text, /^\w[^[]*\w/, `a description: ${JSON.stringify(block)}`);
    // Not a switch (`--debug, --no-debug`, `-h, --help`): it takes a value.
    if (!/^ {2}-[^ ]*,/.test(block)) {
      assert.match(block, /^ {2}--[a-z-]+ <[^>]+>/, `a value: ${JSON.stringify(block)}`);
      assert.match(text, /\[env [A-Z_]+; default [^\]\s][^\]]*\]$/, `a variable and a default: ${JSON.stringify(block)}`);
    }
  }
  assert.match(help, /^ {2}-h, --help +show this help$/m);
  const debugOff = /off when the environment is ([^\]]+)\]/.exec(help)![1]!;
  assert.equal(debugOff.split(' or '), [...SERVE_DEFAULTS.debugOffIn]);
});

test('the development certificate is cached in var/tls, as README says', () => {
  assert.is(SERVE_DEFAULTS.devCertificateDir, 'var/tls');
  assert.match(formatServeHelp(), 'default self-signed, cached in var/tls/]');
});

test('a UsageError is named so, and an unknown option is said to be one', () => {
  const error = usageError(['--bogus']);
  assert.is(error.name, 'UsageError');
  assert.is(error.message, 'unknown option --bogus (see --help)');
  assert.is(usageError(['--bogus=1']).message, 'unknown option --bogus (see --help)');
});

test('`--` ends the options: serve takes nothing after it', () => {
  assert.equal(parseServeOptions(['--port', '9000', '--'], {}).port, 9000);
  assert.match(usageError(['--', 'extra']).message, 'unexpected argument "extra"');
});

test('a value starting with a dash is a forgotten value unless it is a negative number', () => {
  assert.is(usageError(['--host', '-a-1']).message, 'option --host needs a value (see --help)');
});

test('--help answers with the defaults, debug and the profiler on', () => {
  const { help, ...options } = parseServeOptions(['--help'], {});
  assert.is(help, true);
  const { help: _, ...defaults } = parseServeOptions([], {});
  assert.equal(options, { ...defaults, devCertificateDir: SERVE_DEFAULTS.devCertificateDir, debugOffIn: SERVE_DEFAULTS.debugOffIn });
});

test('the bounds are taken: port 65535, one profile', () => {
  assert.is(parseServeOptions(['--port', '65535'], {}).port, 65535);
  assert.is(parseServeOptions(['--https-port', '65535'], {}).httpsPort, 65535);
  assert.is(parseServeOptions([], { PROFILER_MAX_PROFILES: '1' }).profilerMaxProfiles, 1);
});

test('names of one character: an environment, a host and its labels', () => {
  assert.is(parseServeOptions([], { APP_ENV: 'p' }).env, 'p');
  assert.is(parseServeOptions(['--host', 'h'], {}).host, 'h');
  assert.is(parseServeOptions(['--host', 'my-host.b'], {}).host, 'my-host.b');
});

test('the log level is read without the spaces around it, in any case', () => {
  assert.is(parseServeOptions([], { LOG_LEVEL: ' Info ' }).logLevel, 'info');
  assert.is(parseServeOptions(['--log-level', 'DEBUG '], {}).logLevel, 'debug');
});

test('address lists leave out empty items', () => {
  assert.equal(parseServeOptions(['--trusted-proxies', '10.0.0.0/8, ,loopback,'], {}).trustedProxies, ['10.0.0.0/8', 'loopback']);
  assert.equal(parseServeOptions([], { PROFILER_ALLOW: ',127.0.0.1' }).profilerAllow, ['127.0.0.1']);
});

test('a trusted host given as a regular expression with flags is refused as one', () => {
  assert.match(usageError(['--trusted-hosts', 'example.com,/^api\\.example\\.com$/i']).message, '"/^api\\.example\\.com$/i" looks like a regular expression');
});

test('APP_DEBUG and PROFILER take 1, true, on, yes and 0, false, off, no, in any case', () => {
  for (const value of ['1', 'true', 'on', 'yes', 'TRUE', 'On', 'Yes']) {
    assert.is(parseServeOptions([], { APP_ENV: 'prod', APP_DEBUG: value }).debug, true, `APP_DEBUG=${value}`);
  }
  for (const value of ['0', 'false', 'off', 'no', 'FALSE', 'Off', 'No']) {
    assert.is(parseServeOptions([], { APP_DEBUG: value }).debug, false, `APP_DEBUG=${value}`);
    assert.is(parseServeOptions([], { PROFILER: value }).profiler, false, `PROFILER=${value}`);
  }
});

test.run();
