// Several OS processes sharing one storage directory, as several servers on one machine do.
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FileStorage } from '../../../../lib/profiler/storage/index.js';
import { BASE_TIME, indexLines, listFiles, makeTempDir, referencedSegments, segmentFiles, tokenFor, within } from './fixtures.js';

const test = suite('FileStorage shared by processes');

const STORAGE_MODULE = new URL('../../../../lib/profiler/storage/index.js', import.meta.url).href;
const CHILD_TIMEOUT_MS = 60_000;

// A writer process: claims and writes profiles for the given tokens, prints the tokens it won.
// With a batch size, it claims them all first, then writes them with writeMany; with 'forever',
// it then draws tokens and writes batches until killed, printing each batch's tokens once written.
const CHILD_SOURCE = `
const [moduleUrl, dir, tokensJson, baseTime, maxProfiles, batchSize, forever, gated] = process.argv.slice(2);
const { FileStorage } = await import(moduleUrl);
const storage = new FileStorage({
  dir,
  bounds: maxProfiles === '0' ? {} : { maxProfiles: Number(maxProfiles) },
  segmentBytes: 64 * 1024,
  onError: (error) => { process.stderr.write('onError: ' + error.stack + '\\n'); process.exitCode = 1; },
});
// Gated: says it is ready, then waits for a line on stdin, so that gated writers start together.
if (gated === '1') {
  process.stdout.write('ready\\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  process.stdin.pause();
}
const profile = (token, offset) => ({
  token, parent: null, children: [], ip: '127.0.0.' + (process.pid % 250), method: 'GET',
  url: 'http://127.0.0.1:8000/items/' + token, time: Number(baseTime) + offset, status: 200,
  collectors: { logger: { logs: Array.from({ length: 20 }, (_, i) => ({ message: 'line ' + i + ' of ' + token })) } },
});
const won = [];
if (forever === '1') {
  for (let n = 0; ; n++) {
    const batch = [];
    for (let i = 0; i < Number(batchSize); i++) batch.push(profile(await storage.drawToken(6), n));
    await storage.writeMany(batch);
    process.stdout.write(JSON.stringify(batch.map((p) => p.token)) + '\\n');
  }
}
if (Number(batchSize) > 0) {
  const batch = [];
  for (const [token, offset] of JSON.parse(tokensJson)) if (await storage.claim(token)) batch.push(profile(token, offset));
  for (let i = 0; i < batch.length; i += Number(batchSize)) await storage.writeMany(batch.slice(i, i + Number(batchSize)));
  won.push(...batch.map((p) => p.token));
} else {
  for (const [token, offset] of JSON.parse(tokensJson)) {
    if (!(await storage.claim(token))) continue;
    won.push(token);
    await storage.write(profile(token, offset));
  }
}
await storage.close();
process.stdout.write(JSON.stringify(won));
`;

let root = '';
let cleanup: () => Promise<void> = async () => {};
let childScript = '';

test.before(async () => {
  ({ dir: root, cleanup } = await makeTempDir('file-storage-processes'));
  childScript = join(root, 'writer.mjs');
  await writeFile(childScript, CHILD_SOURCE);
});

test.after(async () => {
  await cleanup();
});

/**
 * Runs a writer process; resolves with the tokens it wrote, rejects on failure or after the timeout.
 * With `gate`, the writer waits, once ready, until `gate` settles: writers given one gate start
 * together however long each took to load (on a busy machine one could otherwise finish first).
 */
function runWriter(dir: string, tokens: Array<[string, number]>, maxProfiles = 0, batchSize = 0, gate?: Gate): Promise<string[]> {
  const child = spawn(process.execPath, [childScript, STORAGE_MODULE, dir, JSON.stringify(tokens), String(BASE_TIME), String(maxProfiles), String(batchSize), '0', gate === undefined ? '0' : '1'], {
    stdio: 'pipe',
  });
  if (gate === undefined) child.stdin.end();
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    if (gate === undefined || !stdout.startsWith('ready\n')) return;
    stdout = stdout.slice('ready\n'.length);
    gate.arrive(() => child.stdin.write('go\n'));
  });
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const done = new Promise<string[]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(JSON.parse(stdout) as string[]);
      else reject(new Error(`writer exited with ${code}: ${stderr}`));
    });
  });
  return within(done, CHILD_TIMEOUT_MS, 'a writer process').catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
}

/** Lets `count` writers go at once, when the last of them is ready. */
interface Gate {
  arrive(go: () => void): void;
}

function gateFor(count: number): Gate {
  const waiting: Array<() => void> = [];
  return {
    arrive(go) {
      waiting.push(go);
      if (waiting.length === count) for (const release of waiting) release();
    },
  };
}

async function indexedTokens(dir: string): Promise<string[]> {
  const storage = new FileStorage({ dir });
  try {
    return (await storage.find({ limit: 100_000 })).map((summary) => summary.token).sort();
  } finally {
    await storage.close();
  }
}

test('two processes writing 200 profiles each into one directory: all 400 are readable and findable, the index intact', async () => {
  const dir = join(root, 'disjoint');
  const series = (prefix: number): Array<[string, number]> => Array.from({ length: 200 }, (_, i) => [tokenFor(i, prefix), i]);
  const [first, second] = await Promise.all([runWriter(dir, series(1)), runWriter(dir, series(2))]);
  assert.is(first.length, 200);
  assert.is(second.length, 200);
  const expected = [...first, ...second].sort();
  assert.equal(await indexedTokens(dir), expected);
  const reader = new FileStorage({ dir });
  try {
    for (const token of expected) assert.is((await reader.read(token))?.token, token);
    assert.is((await reader.find({ limit: 1000, url: `/items/${tokenFor(7, 2)}` })).length, 1);
  } finally {
    await reader.close();
  }
  const lines = (await readFile(join(dir, 'index.ndjson'), 'utf8')).split('\n');
  assert.is(lines.pop(), '', 'the index ends with a complete line');
  for (const line of lines) assert.ok(JSON.parse(line), line);
  assert.equal(new Set(lines.filter((line) => line.startsWith('{"t":')).map((line) => (JSON.parse(line) as { t: string }).t)).size, 400);
  const leftovers = (await listFiles(dir)).filter((file) => file.endsWith('.tmp') || file.includes('lock'));
  assert.equal(leftovers, []);
});

test('two processes claiming the same 300 tokens in opposite orders: each token is won and written by exactly one', async () => {
  const dir = join(root, 'contended');
  const tokens: Array<[string, number]> = Array.from({ length: 300 }, (_, i) => [tokenFor(i, 3), i]);
  const gate = gateFor(2);
  const [first, second] = await Promise.all([runWriter(dir, tokens, 0, 0, gate), runWriter(dir, [...tokens].reverse(), 0, 0, gate)]);
  assert.ok(first.length > 0 && second.length > 0, `${first.length} and ${second.length} won`);
  assert.equal([...first, ...second].sort(), tokens.map(([token]) => token).sort());
  assert.equal(await indexedTokens(dir), [...first, ...second].sort());
});

test('two processes writing under a small maxProfiles, compacting all along: no index line lost, none left without its file', async () => {
  const dir = join(root, 'compacting');
  // Out of time order on purpose: a profile may be among the oldest, so dropped, the moment it is written.
  const series = (prefix: number): Array<[string, number]> => Array.from({ length: 300 }, (_, i) => [tokenFor(i, prefix), (i * 7919) % 300]);
  const [first, second] = await Promise.all([runWriter(dir, series(4), 50), runWriter(dir, series(5), 50)]);
  assert.is(first.length + second.length, 600);
  const indexed = await indexedTokens(dir);
  // A compaction trims to 75% of the bound (37 of 50); each process may have written up to a check's worth (32) since.
  assert.ok(indexed.length >= 37 && indexed.length <= 50 + 2 * 32, `${indexed.length} profiles indexed`);
  await assertAllReadable(dir, indexed);
  const leftovers = (await listFiles(dir)).filter((file) => file.endsWith('.tmp') || file.includes('lock'));
  assert.equal(leftovers, []);
  const referenced = await referencedSegments(dir);
  const segments = await segmentFiles(dir);
  for (const name of referenced) assert.ok(segments.includes(name), `${name} is referred to but gone`);
  // A closed writer's segments dropped by the other one after it exited wait for staleness: at most the records
  // of what was kept when it closed (segments roll over at a quarter of the bound, so there may be several files).
  let unreferencedRecords = 0;
  for (const name of segments.filter((segment) => !referenced.includes(segment))) {
    unreferencedRecords += (await readFile(join(dir, 'segments', name), 'utf8')).split('\n').length - 1;
  }
  assert.ok(unreferencedRecords <= 50 + 2 * 32, `${unreferencedRecords} records in ${segments.length - referenced.length} segments no line refers to`);
});

/** Every token reads back as its profile from a fresh instance. */
async function assertAllReadable(dir: string, tokens: string[]): Promise<void> {
  const reader = new FileStorage({ dir });
  try {
    for (const token of tokens) assert.is((await reader.read(token))?.token, token, `${token} unreadable`);
  } finally {
    await reader.close();
  }
}

test('two processes writing batches of 50 into one directory at once: all 1,000 are readable and findable, each batch in one segment write', async () => {
  const dir = join(root, 'batches');
  const series = (prefix: number): Array<[string, number]> => Array.from({ length: 500 }, (_, i) => [tokenFor(i, prefix), i]);
  const [first, second] = await Promise.all([runWriter(dir, series(6), 0, 50), runWriter(dir, series(7), 0, 50)]);
  assert.is(first.length + second.length, 1_000);
  const expected = [...first, ...second].sort();
  assert.equal(await indexedTokens(dir), expected);
  await assertAllReadable(dir, expected);
  const lines = await indexLines(dir);
  assert.is(lines.length, 1_000, 'one line each, none torn or lost');
  const segments = await segmentFiles(dir);
  assert.equal(segments, await referencedSegments(dir));
  const pids = new Set(segments.map((name) => name.split('-')[1]));
  assert.is(pids.size, 2, 'each process writes its own segments');
});

test('a writer killed with SIGKILL in the middle of its batches: the index stays whole, every indexed profile reads, another process goes on', async () => {
  const dir = join(root, 'killed');
  const child = spawn(process.execPath, [childScript, STORAGE_MODULE, dir, '[]', String(BASE_TIME), '0', '40', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await within(
    new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        if (stdout.split('\n').length > 8) resolve();
      });
    }),
    CHILD_TIMEOUT_MS,
    `a writer writing batches (${stderr})`,
  );
  child.kill('SIGKILL');
  await exited;
  const acknowledged = stdout.split('\n').filter((line) => line.endsWith(']')).flatMap((line) => JSON.parse(line) as string[]);
  assert.ok(acknowledged.length >= 8 * 40, `${acknowledged.length} acknowledged`);
  const indexed = await indexedTokens(dir);
  for (const token of acknowledged) assert.ok(indexed.includes(token), `${token} was acknowledged but is lost`);
  await assertAllReadable(dir, indexed);
  // The killed writer drew its tokens at random in the prefixes it leased; a token the index holds
  // is rightly refused, so the next writer's tokens come from a prefix the index has none of.
  const prefixOf = (series: number): string => tokenFor(0, series).slice(0, 2);
  const series = [8, 9, 10, 11, 12, 13].find((candidate) => !indexed.some((token) => token.startsWith(prefixOf(candidate))));
  assert.ok(series !== undefined, 'a token prefix the killed writer left free');
  const tokens: Array<[string, number]> = Array.from({ length: 100 }, (_, i) => [tokenFor(i, series), i]);
  assert.is((await runWriter(dir, tokens, 0, 25)).length, 100);
  const after = await indexedTokens(dir);
  assert.is(after.length, indexed.length + 100);
  await assertAllReadable(dir, after);
});

test.run();
