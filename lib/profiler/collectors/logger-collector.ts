import type { DebugLogBuffer, LogRecord } from '../../log/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import { jsonNumber, jsonString } from '../json.js';
import { RawJson } from '../profile.js';
import type { Redactor } from '../redactor.js';

/** Every log record written while handling the request (read late, so records written after the response count too). */
export class LoggerCollector implements DataCollector {
  readonly name = 'logger';

  constructor(
    readonly logs: DebugLogBuffer,
    readonly redactor: Redactor,
  ) {}

  /** LoggerData, written as JSON (the records' messages and contexts redacted). */
  lateCollect({ request }: CollectContext): RawJson {
    const records = this.logs.getLogs(request);
    const logs: string[] = [];
    const counts: Record<string, number> = {};
    let errorCount = 0;
    let warningCount = 0;
    for (const record of records) {
      counts[record.levelName] = (counts[record.levelName] ?? 0) + 1;
      if (record.level <= 3) errorCount++;
      else if (record.level === 4) warningCount++;
      logs.push(this.#recordJson(record));
    }
    return new RawJson(`{"logs":[${logs.join(',')}],"counts":${JSON.stringify(counts)},"errorCount":${errorCount},"warningCount":${warningCount}}`);
  }

  /** One LogRecord as JSON (the fields the Logger makes), its message and context redacted. */
  #recordJson(record: LogRecord): string {
    const { time, level, levelName, channel, message, context } = record;
    return `{"time":${jsonNumber(time)},"level":${jsonNumber(level)},"levelName":${jsonString(levelName)},"channel":${jsonString(channel)},"message":${jsonString(this.redactor.text(message))},"context":${this.redactor.valueJson(context)}}`;
  }
}
