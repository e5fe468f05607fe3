// The load generator: a long-lived process (pinned to its own core by the caller) that reads
// one JSON job per line on stdin, runs autocannon against it, and writes one JSON line per job
// to stdout. It stays alive between jobs so autocannon itself is warm for every measurement.
//
//   echo '{"url":"http://127.0.0.1:3000/health","duration":2}' | node bench/http/load.mjs
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

const defaults = { connections: 100, pipelining: 1, duration: 5, timeout: 10 };

/** Runs one autocannon job and reduces its result to the figures the bench reports. */
async function measure(job) {
  const opts = { ...defaults, ...job };
  const cpuBefore = process.cpuUsage();
  const wallBefore = process.hrtime.bigint();
  const result = await autocannon({
    url: opts.url,
    connections: opts.connections,
    pipelining: opts.pipelining,
    duration: opts.duration,
    timeout: opts.timeout,
    // Checking each body costs the loader CPU, so it is opt-in; status codes are always counted.
    ...(opts.expectBody === undefined ? {} : { expectBody: opts.expectBody }),
  });
  const cpu = process.cpuUsage(cpuBefore);
  const wallMicros = Number(process.hrtime.bigint() - wallBefore) / 1000;
  const ok = result['2xx'];
  return {
    rps: ok / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    latencyAvg: result.latency.average,
    requests: result.requests.total,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count])),
    duration: result.duration,
    loaderCpu: (cpu.user + cpu.system) / wallMicros,
  };
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim() === '') continue;
  let id;
  try {
    const job = JSON.parse(line);
    id = job.id;
    delete job.id;
    const result = await measure(job);
    process.stdout.write(JSON.stringify({ id, ok: true, result }) + '\n');
  } catch (error) {
    process.stdout.write(JSON.stringify({ id, ok: false, error: String(error?.stack ?? error) }) + '\n');
  }
}
