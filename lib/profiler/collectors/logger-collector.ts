import { countedLevel } from '../../log/counted-level.js';
import { LogLevel, messageWithSecretsHidden, type DebugLogBuffer, type LogLevelName, type LogRecord } from '../../log/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import { jsonNumber, jsonString, setOwn } from '../json.js';
import { RawJson, type LoggerData } from '../profile.js';
import type { Redactor } from '../redactor.js';

/** Every log record written while handling the request (read late, so records written after the response count too). */
export class LoggerCollector implements DataCollector {
  readonly name = 'logger';
  /** Its lateCollect only reads: a provisional view may run it too. */
  readonly provisional = true;

  constructor(
    readonly logs: DebugLogBuffer,
    readonly redactor: Redactor,
  ) {}

  readonly #isSecretKey = (key: string): boolean => this.redactor.isSecretKey(key);

  /**
   * The records as JSON (messages and contexts redacted), without what present() works out from
   * them on reading: level names and the counts by level.
   */
  lateCollect({ request }: CollectContext): RawJson {
    const records = this.logs.getLogs(request);
    let logs = '';
    let i = 0;
    // Bounded as the debug page is: past LOGS_BUDGET characters of JSON the records are counted, not kept; so are those the buffer did not keep.
    for (; i < records.length && logs.length < LOGS_BUDGET; i++) logs += `${i === 0 ? '' : ','}${this.#recordJson(records[i]!)}`;
    const omitted = records.length - i + this.logs.droppedCount(request);
    if (omitted === 0) return new RawJson(`{"logs":[${logs}]}`);
    // Counted by level too: an error past the records kept is still one of the errors (the toolbar said none).
    const levels = [...this.logs.droppedByLevel(request)];
    for (; i < records.length; i++) {
      const level = countedLevel(records[i]!.level);
      levels[level] = (levels[level] ?? 0) + 1;
    }
    const byName: Record<string, number> = {};
    for (let level = 0; level < LEVEL_NAMES.length; level++) if (levels[level] !== undefined) byName[LEVEL_NAMES[level]!] = levels[level]!;
    return new RawJson(`{"logs":[${logs}],"omitted":${omitted},"omittedLevels":${JSON.stringify(byName)}}`);
  }

  /** LoggerData: the records with their level names, and the counts by level. */
  present(data: unknown): LoggerData {
    return presentLogger(data);
  }

  /** One LogRecord as JSON (the fields the Logger makes, less the level name), its message and context redacted. */
  #recordJson(record: LogRecord): string {
    const { time, level, channel, context } = record;
    const message = cutMessage(this.redactor.text(messageWithSecretsHidden(record, this.#isSecretKey)));
    return `{"time":${jsonNumber(time)},"level":${jsonNumber(level)},"channel":${jsonString(channel)},"message":${jsonString(message)},"context":${this.redactor.valueJson(context)}}`;
  }

}

/** Most characters of a log message a profile keeps (as of a context string); the rest is cut, with a note. */
const MAX_MESSAGE_CHARS = 10_000;
/** Characters of log record JSON a profile keeps before it only counts the records (`omitted`). */
const LOGS_BUDGET = 1_000_000;

function cutMessage(message: string): string {
  return message.length <= MAX_MESSAGE_CHARS ? message : `${message.slice(0, MAX_MESSAGE_CHARS)}… (${message.length - MAX_MESSAGE_CHARS} more characters)`;
}

/** Level number -> name. */
const LEVEL_NAMES: LogLevelName[] = [];
for (const [name, level] of Object.entries(LogLevel)) LEVEL_NAMES[level] = name as LogLevelName;

/** The stored logger data as pages show it (LoggerData); what a profile saved with it already has is kept. */
export function presentLogger(data: unknown): LoggerData {
  const stored = (data !== null && typeof data === 'object' ? data : {}) as Partial<LoggerData>;
  const logs = (Array.isArray(stored.logs) ? stored.logs : []).map((record) =>
    record !== null && typeof record === 'object' && typeof record.levelName !== 'string' && typeof record.level === 'number' ? { ...record, levelName: LEVEL_NAMES[record.level] ?? 'INFO' } : record,
  );
  const counts: Record<string, number> = {};
  let errorCount = 0;
  let warningCount = 0;
  for (const record of logs) {
    if (record === null || typeof record !== 'object') continue;
    // Own counts only: a stored name (`constructor`, `__proto__`) would otherwise start from Object.prototype's member, or set the prototype.
    setOwn(counts, record.levelName, (Object.hasOwn(counts, record.levelName) ? counts[record.levelName]! : 0) + 1);
    if (record.level <= LogLevel.ERROR) errorCount++;
    else if (record.level === LogLevel.WARNING) warningCount++;
  }
  // The records counted, not kept, by level name.
  for (const [name, count] of Object.entries(stored.omittedLevels ?? {})) {
    const level = Object.hasOwn(LogLevel, name) ? LogLevel[name as LogLevelName] : undefined;
    // A count of records: stored data that holds anything else (-5, 0.5, 1e999) would make the toolbar's counts negative or infinite.
    if (!Number.isSafeInteger(count) || (count as number) <= 0 || level === undefined) continue;
    counts[name] = (counts[name] ?? 0) + count;
    if (level <= LogLevel.ERROR) errorCount += count;
    else if (level === LogLevel.WARNING) warningCount += count;
  }
  return { counts, errorCount, warningCount, ...stored, logs };
}
