import { flattenError } from '../../errors/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import type { ExceptionData } from '../profile.js';

/** The error that escaped, with its whole cause chain and source-mapped stack frames. */
export class ExceptionCollector implements DataCollector {
  readonly name = 'exception';

  lateCollect({ error }: CollectContext): ExceptionData {
    // The error page sub-request carries the error it renders; the failed request records it from kernel.exception.
    const escaped = error ?? null;
    if (escaped === null) return { exceptions: [] };
    return {
      exceptions: flattenError(escaped).map((item) => ({
        class: item.class,
        message: item.message,
        status: item.status,
        ...(item.code === undefined ? {} : { code: item.code }),
        frames: item.frames.map((frame) => ({ function: frame.function, file: frame.file, line: frame.line, column: frame.column, internal: frame.internal })),
        stack: item.stack,
      })),
    };
  }
}
