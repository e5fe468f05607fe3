import { LogLevel, type DebugLogBuffer, type LogLevelName, type LogRecord } from '../../log/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import { jsonNumber, jsonString } from '../json.js';
import { RawJson, type LoggerData } from '../profile.js';
import type { Redactor } from '../redactor.js';

/** Every log record written while handling the request (read late, so records written after the response count too). */
export class LoggerCollector implements DataCollector {
  readonly name = 'logger';

  constructor(
    readonly logs: DebugLogBuffer,
    readonly redactor: Redactor,
  ) {}

  /**
   * The records as JSON (messages and contexts redacted), without what present() works out from
   * them on reading: level names and the counts by level.
   */
  lateCollect({ request }: CollectContext): RawJson {
    const records = this.logs.getLogs(request);
    let logs = '';
    for (let i = 0; i < records.length; i++) logs += `${i === 0 ? '' : ','}${this.#recordJson(records[i]!)}`;
    return new RawJson(`{"logs":[${logs}]}`);
  }

  /** LoggerData: the records with their level names, and the counts by level. */
  present(data: unknown): LoggerData {
    return presentLogger(data);
  }

  /** One LogRecord as JSON (the fields the Logger makes, less the level name), its message and context redacted. */
  #recordJson(record: LogRecord): string {
    const { time, level, channel, message, context } = record;
    return `{"time":${jsonNumber(time)},"level":${jsonNumber(level)},"channel":${jsonString(channel)},"message":${jsonString(this.redactor.text(message))},"context":${this.redactor.valueJson(context)}}`;
  }
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
    counts[record.levelName] = (counts[record.levelName] ?? 0) + 1;
    if (record.level <= LogLevel.ERROR) errorCount++;
    else if (record.level === LogLevel.WARNING) warningCount++;
  }
  return { counts, errorCount, warningCount, ...stored, logs };
}
