// Router bench: lookups per second for our UrlMatcher against find-my-way, Hono's RegExpRouter,
// rou3 (interpreted and compiled) and memoirist, on the route sets of their own benchmarks, on
// misses (404) and wrong methods (405), and ours with 100 against 10,000 routes.
//
//   npx tsc -p tsconfig.json && node bench/router/index.mjs [--quick] [--only <regex on "group: case">]
//
// Method: every router answers each request list in timed batches (~60 ms); the routers take
// turns batch by batch, in a rotating order, for several rounds; the figure is the median batch,
// and the ratio to the fastest peer the median of the rounds' own ratios (see versusPeers).
// Each router runs in its own compiled loop (new Function) so V8's type feedback stays its own,
// and every result feeds a checksum so no lookup can be optimised away.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildOurs, peers } from './peers.mjs';
import {
  generatedRoutes,
  githubNotFound,
  githubRoutes,
  githubWrongMethod,
  sample,
  smallNotFound,
  smallRequests,
  smallRoutes,
  smallWrongMethod,
} from './routes.mjs';

const OURS = 'ours';
const OURS_THROWING = 'ours (match)';
let checksum = 0;
const unsupported = new Set();

function request(method, path) {
  return { method, path, context: { method, host: 'localhost', scheme: 'http' } };
}

// A loop of its own for each router and case, so one router's types never slow another's.
function makeLoop() {
  return new Function('find', 'requests', 'repeat', `
    let sink = 0;
    for (let r = 0; r < repeat; r++) {
      for (let i = 0; i < requests.length; i++) {
        if (find(requests[i])) sink++;
      }
    }
    return sink;`);
}

function oursFind(matcher) {
  return (req) => matcher.lookup(req.path, req.context);
}

function oursThrowing(matcher) {
  return (req) => {
    try {
      return matcher.match(req.path, req.context);
    } catch (error) {
      return error.code;
    }
  };
}

// Peers know nothing of 405: to tell one from a 404 and list Allow they must try every method.
function probing(find, methods) {
  return (req) => {
    const hit = find(req);
    if (hit) return hit;
    const allowed = [];
    for (const method of methods) if (method !== req.method && find({ method, path: req.path })) allowed.push(method);
    return allowed.length > 0 ? allowed : null;
  };
}

// Each router gets its own copies of the request strings: a router that uses the path as an
// object key makes V8 internalize it in place, which would change string costs for the others.
function ownCopies(requests) {
  return requests.map((req) => {
    const method = Buffer.from(req.method).toString();
    const path = Buffer.from(req.path).toString();
    return { ...req, method, path, context: { method, host: 'localhost', scheme: 'http' } };
  });
}

function timeBatch(entry, requests, repeat) {
  const start = process.hrtime.bigint();
  checksum += entry.loop(entry.find, requests, repeat);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return (requests.length * repeat) / seconds;
}

// Times `contenders` ({ name, find }) on `requests`; returns each one's median ops/s and its
// samples, round by round (sample i of every contender comes from the same round).
function measure(contenders, requests, options) {
  const entries = contenders.map((contender) => ({ ...contender, loop: makeLoop(), samples: [], requests: ownCopies(requests) }));
  for (const entry of entries) {
    // Warm up, then size the batch to the target duration.
    let repeat = 1;
    for (;;) {
      const start = process.hrtime.bigint();
      checksum += entry.loop(entry.find, entry.requests, repeat);
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (ms > options.batchMs / 4 || repeat > 1e8) {
        entry.repeat = Math.max(1, Math.round((repeat * options.batchMs) / ms));
        break;
      }
      repeat *= 4;
    }
  }
  for (let round = 0; round < options.rounds; round++) {
    for (let k = 0; k < entries.length; k++) {
      const entry = entries[(k + round) % entries.length];
      entry.samples.push(timeBatch(entry, entry.requests, entry.repeat));
    }
  }
  return {
    opsPerSecond: Object.fromEntries(entries.map((entry) => [entry.name, median(entry.samples)])),
    samples: Object.fromEntries(entries.map((entry) => [entry.name, entry.samples])),
  };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function check(condition, message) {
  if (!condition) throw new Error(`router bench: ${message}`);
}

// Every router must answer as expected before it is timed.
function verifyHits(contenders, requests) {
  for (const { name, find } of contenders) {
    for (const req of requests) {
      const result = find(req);
      check(result, `${name} misses ${req.method} ${req.path}`);
      if (name === OURS) {
        check(result.kind === 'match', `ours: ${req.method} ${req.path} gives ${result.kind}`);
        if (req.params) for (const [key, value] of Object.entries(req.params)) check(result.params[key] === value, `ours: ${req.path} ${key}=${result.params[key]}`);
      }
    }
  }
}

function verifyMisses(contenders, requests, kind) {
  for (const { name, find } of contenders) {
    for (const req of requests) {
      const result = find(req);
      if (name === OURS) {
        check(result.kind === kind, `ours: ${req.method} ${req.path} gives ${result.kind}, not ${kind}`);
        if (req.allowed) check(result.allowedMethods.join() === req.allowed.join(), `ours: ${req.path} allows ${result.allowedMethods}`);
      } else if (name === OURS_THROWING) check(typeof result === 'string', `ours (match): ${req.path} does not throw`);
      else if (req.probe) check(Array.isArray(result), `${name}: no Allow for ${req.method} ${req.path}`);
      else check(!result, `${name} hits ${req.method} ${req.path}`);
    }
  }
}

function contendersFor(routes, { throwing = false, probe = false } = {}) {
  const methods = [...new Set(routes.map(([method]) => method))];
  const matcher = buildOurs(routes);
  const list = [];
  for (const peer of peers) {
    let find;
    try {
      find = peer.build(routes);
      find(request(routes[0][0], '/'));
    } catch (error) {
      // Hono's RegExpRouter refuses a static segment and a parameter at the same place (its SmartRouter then falls back to a trie).
      unsupported.add(`${peer.name}: ${error.name} for ${routes.length} routes`);
      continue;
    }
    list.push({ name: peer.name, find: probe ? probing(find, methods) : find });
  }
  list.push({ name: OURS, find: oursFind(matcher) });
  if (throwing) list.push({ name: OURS_THROWING, find: oursThrowing(matcher) });
  return list;
}

/** Runs the whole router bench; `quick` for a smoke run. Returns a JSON-serialisable report. */
export async function run({ quick = false, only = null } = {}) {
  const options = quick ? { rounds: 3, batchMs: 20 } : { rounds: 9, batchMs: 50 };
  const started = Date.now();
  const cases = [];
  const record = (group, name, requests, contenders) => {
    // Skipped cases still build and verify their routers, so V8's feedback is as in a full run.
    if (only !== null && !only.test(`${group}: ${name}`)) return;
    const { opsPerSecond, samples } = measure(contenders, requests, options);
    cases.push({ group, name, requests: requests.length, opsPerSecond, samples });
  };

  // The Hono / rou3 request set, one request at a time, then all together.
  const small = contendersFor(smallRoutes);
  const smallHits = smallRequests.map((req) => ({ ...request(req.method, req.path), params: req.name === 'wildcard' ? undefined : req.params }));
  verifyHits(small, smallHits);
  smallRequests.forEach((req, i) => record('hono/rou3 set (12 routes)', req.name, [smallHits[i]], small));
  record('hono/rou3 set (12 routes)', 'all together', smallHits, small);

  // The GitHub API: every route's sample request.
  const github = contendersFor(githubRoutes.map(([method, path]) => [method, path]));
  const githubHits = githubRoutes.map(([method, , path]) => request(method, path));
  verifyHits(github, githubHits);
  record('GitHub API (203 routes)', 'all routes', githubHits, github);
  record('GitHub API (203 routes)', 'static routes', githubHits.filter((_, i) => !githubRoutes[i][1].includes(':')), github);
  record('GitHub API (203 routes)', 'dynamic routes', githubHits.filter((_, i) => githubRoutes[i][1].includes(':')), github);

  // Misses and wrong methods.
  for (const [label, routes, notFound, wrongMethod] of [
    ['hono/rou3 set', smallRoutes, smallNotFound, smallWrongMethod],
    ['GitHub API', githubRoutes.map(([method, path]) => [method, path]), githubNotFound, githubWrongMethod],
  ]) {
    const contenders = contendersFor(routes, { throwing: true });
    const misses = notFound.map((req) => request(req.method, req.path));
    verifyMisses(contenders, misses, 'not-found');
    record('404 and 405', `404, ${label}`, misses, contenders);
    const wrong = wrongMethod.map((req) => ({ ...request(req.method, req.path), allowed: req.allowed }));
    verifyMisses(contenders, wrong, 'method-not-allowed');
    record('404 and 405', `405, ${label} (peers: plain miss)`, wrong, contenders);
    const probed = contendersFor(routes, { probe: true });
    const wrongProbed = wrong.map((req) => ({ ...req, probe: true }));
    verifyMisses(probed, wrongProbed, 'method-not-allowed');
    record('404 and 405', `405, ${label} (peers: probe methods for Allow)`, wrongProbed, probed);
  }

  // Scaling: 100 against 10,000 routes.
  for (const count of [100, 10_000]) {
    const routes = generatedRoutes(count);
    const contenders = contendersFor(routes.map(([method, path]) => [method, path]));
    const statics = sample(routes, 64, ([, path]) => !path.includes(':')).map((req) => request(req.method, req.path));
    const dynamics = sample(routes, 64, ([, path]) => path.includes(':')).map((req) => request(req.method, req.path));
    verifyHits(contenders, statics);
    verifyHits(contenders, dynamics);
    record(`scaling`, `static, ${count} routes`, statics, contenders);
    record(`scaling`, `dynamic, ${count} routes`, dynamics, contenders);
  }

  return {
    node: process.version,
    options,
    seconds: (Date.now() - started) / 1000,
    checksum,
    unsupported: [...unsupported],
    cases: cases.map((entry) => ({ ...entry, ...versusPeers(entry.opsPerSecond, entry.samples) })),
    scaling: scaling(cases),
  };
}

/**
 * How ours compares with the fastest peer. The machine's speed drifts by 2x over seconds (other
 * tenants of the VM), moving every router alike, so the medians of two routers may come from
 * different phases. The ratio is therefore paired: in each round, ours against the fastest peer
 * of that round (batches a few hundred ms apart), then the median of those ratios. Taking each
 * round's fastest peer makes it stricter than comparing with the peer of the best median.
 */
function versusPeers(opsPerSecond, samples) {
  let fastestPeer = null;
  const peerNames = Object.keys(opsPerSecond).filter((name) => name !== OURS && name !== OURS_THROWING);
  for (const name of peerNames) if (fastestPeer === null || opsPerSecond[name] > opsPerSecond[fastestPeer]) fastestPeer = name;
  const ratios = samples[OURS].map((ours, round) => ours / Math.max(...peerNames.map((name) => samples[name][round])));
  return { fastestPeer, ratio: median(ratios), ratioOfMedians: opsPerSecond[OURS] / opsPerSecond[fastestPeer] };
}

function scaling(cases) {
  const find = (name) => cases.find((entry) => entry.group === 'scaling' && entry.name === name)?.opsPerSecond;
  const result = {};
  for (const kind of ['static', 'dynamic']) {
    const small = find(`${kind}, 100 routes`);
    const large = find(`${kind}, 10000 routes`);
    if (small === undefined || large === undefined) continue;
    result[kind] = Object.fromEntries(Object.keys(small).filter((name) => name in large).map((name) => [name, small[name] / large[name]]));
  }
  return result;
}

/** The report as plain-text tables. */
export function format(report) {
  const lines = [];
  const groups = [...new Set(report.cases.map((entry) => entry.group))];
  for (const group of groups) {
    const entries = report.cases.filter((entry) => entry.group === group);
    const names = [...new Set(entries.flatMap((entry) => Object.keys(entry.opsPerSecond)))];
    const header = ['lookup (M ops/s)', ...names, 'ours/fastest peer (paired)'];
    const rows = entries.map((entry) => [
      entry.name,
      ...names.map((name) => (entry.opsPerSecond[name] === undefined ? '-' : (entry.opsPerSecond[name] / 1e6).toFixed(2))),
      `${entry.ratio.toFixed(2)}x (${entry.fastestPeer})`,
    ]);
    lines.push(`${group}\n${table(header, rows)}\n`);
  }
  const names = Object.keys(report.scaling.static ?? {});
  if (names.length > 0) lines.push(`slowdown from 100 to 10,000 routes (lower is better)\n${table(['kind', ...names], ['static', 'dynamic'].map((kind) => [kind, ...names.map((name) => `${report.scaling[kind][name].toFixed(2)}x`)]))}\n`);
  for (const note of report.unsupported) lines.push(`unsupported: ${note}`);
  lines.push(`node ${report.node}, ${report.options.rounds} rounds of ${report.options.batchMs} ms batches, ${report.seconds.toFixed(0)} s (checksum ${report.checksum})`);
  return lines.join('\n');
}

function table(header, rows) {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => String(row[column]).length)));
  const line = (cells) => cells.map((cell, column) => (column === 0 ? String(cell).padEnd(widths[column]) : String(cell).padStart(widths[column]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } } });
  const report = await run({ quick: values.quick, only: values.only === undefined ? null : new RegExp(values.only) });
  console.log(format(report));
}
