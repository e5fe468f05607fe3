import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createKernel } from '../../../lib/app/index.js';
import type { LogEntry } from '../../../lib/log/index.js';

/** What reaches the kernel's bus and what is written to stderr while `fn` runs. */
async function observe(options: Parameters<typeof createKernel>[0], fn: (app: ReturnType<typeof createKernel>) => void) {
  const stderr: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string) => (stderr.push(String(chunk)), true)) as typeof process.stderr.write;
  const app = createKernel(options);
  const levels: string[] = [];
  app.bus.on('log', (entry: LogEntry) => void levels.push(entry.record.levelName));
  try {
    fn(app);
  } finally {
    process.stderr.write = write;
    await app.close();
  }
  return { levels, stderr };
}

function logEveryLevel(app: ReturnType<typeof createKernel>): void {
  app.logger.error('e');
  app.logger.warning('w');
  app.logger.info('i');
  app.logger.debug('d');
}

test('logLevel sends records below the stderr level to the bus, for a sink of your own, without writing them to stderr', async () => {
  const { levels, stderr } = await observe({ stderrLogLevel: false, logLevel: 'info' }, logEveryLevel);
  assert.equal(levels, ['ERROR', 'WARNING', 'INFO']);
  assert.equal(stderr, []);
});

test('logLevel and stderrLogLevel are independent: stderr keeps its own level', async () => {
  const { levels, stderr } = await observe({ stderrLogLevel: 'error', logLevel: 'debug' }, logEveryLevel);
  assert.equal(levels, ['ERROR', 'WARNING', 'INFO', 'DEBUG']);
  assert.is(stderr.length, 1);
  assert.match(stderr[0]!, /"level":"error"/);
});

test('without logLevel the logger keeps what stderr writes (warning and above by default), and everything in debug mode', async () => {
  assert.equal((await observe({}, (app) => { process.stderr.write = (() => true) as typeof process.stderr.write; logEveryLevel(app); })).levels, ['ERROR', 'WARNING']);
  assert.equal((await observe({ stderrLogLevel: false, debug: true, profiler: false }, logEveryLevel)).levels, ['ERROR', 'WARNING', 'INFO', 'DEBUG']);
});

test('stderrLogLevel and logLevel take the short names the logger takes (warn, err, crit, emerg), so --log-level warn is warning', async () => {
  const { levels, stderr } = await observe({ stderrLogLevel: 'err', logLevel: 'warn' }, logEveryLevel);
  assert.equal(levels, ['ERROR', 'WARNING']);
  assert.is(stderr.length, 1);
  assert.match(stderr[0]!, /"level":"error"/);
});

test('an unknown logLevel is refused at construction, by a TypeError naming the option', () => {
  assert.throws(() => createKernel({ stderrLogLevel: false, logLevel: 'verbose' as 'info' }), (error: Error) => error instanceof TypeError && /^logLevel is a level name .* not the string "verbose"\.$/.test(error.message));
});

test.run();
