// How the app logs its profiler storage's reports (the storage's onError): a stop of the storage's thread is said as such.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { storageErrorLogger } from '../../../lib/app/profiler-storage-log.js';
import { Logger, createBus, type LogRecord } from '../../../lib/log/index.js';
import { ProfilerStorageError, THREAD_RECOVERED_CODE, THREAD_STOPPED_CODE } from '../../../lib/profiler/storage/index.js';
import { wasReported } from '../../../lib/profiler/storage/reported-errors.js';

function logged(): { records: LogRecord[]; onError: (error: Error) => void } {
  const bus = createBus();
  const records: LogRecord[] = [];
  bus.on('log', ({ record }) => void records.push(record));
  return { records, onError: storageErrorLogger(new Logger({ bus }).withChannel('profiler')) };
}

test('a stop of the storage thread is an ERROR saying the thread stopped, with its reason, once per stop: not an upkeep failure, and a second stop of the same kind is not hidden as a repeat', () => {
  const { records, onError } = logged();
  const message = 'The profiler storage thread for /var/profiler stopped (exit code 1): Worker terminated due to reaching memory limit: JS heap out of memory.';
  onError(new ProfilerStorageError(message, THREAD_STOPPED_CODE));
  onError(new ProfilerStorageError(message, THREAD_STOPPED_CODE));
  assert.equal(
    records.map((record) => [record.channel, record.levelName, record.message]),
    [
      ['profiler', 'ERROR', message],
      ['profiler', 'ERROR', message],
    ],
  );
});

test('a storage thread that could not start is said as such too, once per message (a start failing for want of file descriptors repeats through the shortage)', () => {
  const { records, onError } = logged();
  const message = 'The profiler storage thread for /var/profiler could not start (ERR_WORKER_INIT_FAILED): EMFILE: too many open files.';
  onError(new ProfilerStorageError(message, 'HK_PROFILER_STORAGE'));
  onError(new ProfilerStorageError(message, 'HK_PROFILER_STORAGE'));
  assert.equal(records.map((record) => [record.levelName, record.message]), [['ERROR', message]]);
});

test('an error is known as reported (the profiler\'s line for it a WARNING) only once its ERROR line is written: a start failing again with a message said before, after the storage recovered, is not', () => {
  const { records, onError } = logged();
  const message = 'The profiler storage thread for /var/profiler could not start (ERR_WORKER_INIT_FAILED): EMFILE: too many open files.';
  const first = new ProfilerStorageError(message, 'HK_PROFILER_STORAGE');
  const again = new ProfilerStorageError(message, 'HK_PROFILER_STORAGE');
  const stop = new ProfilerStorageError('The profiler storage thread for /var/profiler stopped (exit code 1).', THREAD_STOPPED_CODE);
  onError(first);
  onError(again);
  onError(stop);
  assert.is(records.length, 2, 'the repeat is passed over');
  assert.ok(wasReported(first), 'logged at ERROR');
  assert.not.ok(wasReported(again), 'not logged: the profiler logs it at ERROR');
  assert.ok(wasReported(stop), 'a stop, logged at ERROR');
});

test("an upkeep failure is still said as one, once per message; the storage's notices (the disk full) are WARNINGs", () => {
  const { records, onError } = logged();
  const eio = new ProfilerStorageError("Cannot compact the profiler index in /var/profiler: EIO: i/o error, rename 'a' -> 'b'", 'HK_PROFILER_STORAGE');
  onError(eio);
  onError(eio);
  onError(new ProfilerStorageError('The disk is full: the profiler keeps at most 10 profiles (12 KiB) in /var/profiler until restarted, dropping the oldest.', 'HK_PROFILER_STORAGE_DISK_FULL'));
  assert.equal(
    records.map((record) => [record.levelName, record.message]),
    [
      ['ERROR', `Profiler storage upkeep failed: ${eio.message}`],
      ['WARNING', 'The disk is full: the profiler keeps at most 10 profiles (12 KiB) in /var/profiler until restarted, dropping the oldest.'],
    ],
  );
});

test('the storage thread working again after a failure that cost profiles is a NOTICE saying how many, each time: not an upkeep failure, not passed over as a repeat', () => {
  const { records, onError } = logged();
  const message = 'The profiler storage thread for /var/profiler works again; 3 profiles were not saved while it failed (in flight on a thread that stopped, or refused while the storage waited to start one).';
  const recovered = new ProfilerStorageError(message, THREAD_RECOVERED_CODE);
  onError(recovered);
  onError(new ProfilerStorageError(message, THREAD_RECOVERED_CODE));
  assert.equal(
    records.map((record) => [record.channel, record.levelName, record.message]),
    [
      ['profiler', 'NOTICE', message],
      ['profiler', 'NOTICE', message],
    ],
  );
  assert.not.ok(wasReported(recovered), 'no failure');
});

test.run();
