import type { DebugLogBuffer, LogRecord } from '../../log/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import type { LoggerData } from '../profile.js';
import type { Redactor } from '../redactor.js';

/** Every log record written while handling the request (read late, so records written after the response count too). */
export class LoggerCollector implements DataCollector {
  readonly name = 'logger';

  constructor(
    readonly logs: DebugLogBuffer,
    readonly redactor: Redactor,
  ) {}

  lateCollect({ request }: CollectContext): LoggerData {
    const records = this.logs.getLogs(request);
    return summarize(records, records.map((record) => ({ ...record, message: this.redactor.text(record.message), context: this.redactor.value(record.context) as Record<string, unknown> })));
  }
}

function summarize(records: readonly LogRecord[], logs: LogRecord[]): LoggerData {
  const counts: Record<string, number> = {};
  let errorCount = 0;
  let warningCount = 0;
  for (const record of records) {
    counts[record.levelName] = (counts[record.levelName] ?? 0) + 1;
    if (record.level <= 3) errorCount++;
    else if (record.level === 4) warningCount++;
  }
  return { logs, counts, errorCount, warningCount };
}
