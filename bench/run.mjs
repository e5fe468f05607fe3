// Runs the benches and prints their tables: `node bench/run.mjs [router|http|profiler-memory|all] [--quick]`.
// Writes every figure to bench/results/latest.json. See bench/README.md.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { killAll, killChildrenOnExit } from './lib/children.mjs';
import * as http from './http/index.mjs';
import * as profilerMemory from './profiler-memory/index.mjs';

const usage = `usage: node bench/run.mjs [router|http|profiler-memory|all] [options]

  --quick               smoke run of about a minute (HTTP: 1 round of 2 s)
  --only a,b            HTTP servers to run: ${http.servers.map((server) => server.name).join(', ')}
  --rounds N            HTTP rounds per server (default ${http.defaults.rounds})
  --duration S          seconds measured per server, round and pipelining level (default ${http.defaults.duration})
  --warmup S            seconds of warm-up for each fresh server process (default ${http.defaults.warmup})
  --connections N       autocannon connections (default ${http.defaults.connections})
  --pipelining 1,10     pipelining levels (default ${http.defaults.pipelining.join(',')})
  -h, --help            this text`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    pipelining: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  console.log(usage);
  process.exit(0);
}
const suite = positionals[0] ?? 'all';
if (!['router', 'http', 'profiler-memory', 'all'].includes(suite) || positionals.length > 1) {
  console.error(`unknown suite ${positionals.join(' ')}\n\n${usage}`);
  process.exit(2);
}

const number = (value) => (value === undefined ? undefined : Number(value));
const list = (value) => (value === undefined ? undefined : value.split(',').map((item) => item.trim()).filter(Boolean));

killChildrenOnExit();
process.on('uncaughtException', (error) => {
  console.error(error);
  killAll();
  process.exit(1);
});

const here = fileURLToPath(new URL('.', import.meta.url));
const report = {
  date: new Date().toISOString(),
  node: process.version,
  cpu: `${cpus()[0]?.model ?? 'unknown'} x ${cpus().length}`,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  argv: process.argv.slice(2),
};
let failed = false;

if (suite === 'router' || suite === 'all') {
  const entry = new URL('./router/index.mjs', import.meta.url);
  if (!existsSync(entry)) {
    console.log('== router ==\nskipped: bench/router/index.mjs does not exist yet.\n');
    report.router = { skipped: 'bench/router/index.mjs does not exist' };
  } else {
    try {
      const router = await import(entry.href);
      const result = await router.run({ quick: values.quick });
      report.router = result;
      const text = typeof router.format === 'function' ? router.format(result) : JSON.stringify(result, null, 2);
      console.log(`== router ==\n${text}\n`);
    } catch (error) {
      failed = true;
      report.router = { error: String(error?.stack ?? error) };
      console.error(`== router ==\nFAILED\n${error?.stack ?? error}\n`);
    }
  }
}

if (suite === 'http' || suite === 'all') {
  let options;
  try {
    options = http.resolveOptions({
      quick: values.quick,
      only: list(values.only),
      rounds: number(values.rounds),
      duration: number(values.duration),
      warmup: number(values.warmup),
      connections: number(values.connections),
      pipelining: list(values.pipelining)?.map(Number),
    });
  } catch (error) {
    console.error(`${error.message}\n\n${usage}`);
    process.exit(2);
  }
  const minutes = Math.ceil(http.estimateSeconds(options) / 60);
  console.error(`http bench: about ${minutes} min (${options.rounds} rounds x ${options.duration} s per level)`);
  try {
    const result = await http.run(options);
    report.http = result;
    failed ||= result.failed;
    console.log(`\n== http ==\n${http.format(result)}\n`);
  } catch (error) {
    failed = true;
    report.http = { error: String(error?.stack ?? error) };
    console.error(`\n== http ==\nFAILED\n${error?.stack ?? error}\n`);
  }
}

if (suite === 'profiler-memory' || suite === 'all') {
  const { requests, after, limit } = profilerMemory.defaults;
  console.error(`profiler-memory bench: ${requests} requests to a debug server, then ${after} s of sampling (aborted after ${limit} s)`);
  try {
    const result = await profilerMemory.run();
    report.profilerMemory = result;
    failed ||= result.failed;
    console.log(`\n== profiler-memory ==\n${profilerMemory.format(result)}\n`);
  } catch (error) {
    failed = true;
    report.profilerMemory = { error: String(error?.stack ?? error) };
    console.error(`\n== profiler-memory ==\nFAILED\n${error?.stack ?? error}\n`);
  }
}

const resultsFile = join(here, 'results', 'latest.json');
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(resultsFile, `${JSON.stringify(report, null, 2)}\n`);
console.log(`Results written to ${relative(process.cwd(), resultsFile)}`);
if (failed) {
  console.error('bench: some part FAILED (see above)');
  process.exitCode = 1;
}
