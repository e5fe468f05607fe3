import { HttpKernel } from '../../../kernel/index.js';
import { flattenError } from '../../errors/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import { RawJson, type ExceptionData, type ExceptionItemData } from '../profile.js';
import { Redactor } from '../redactor.js';

/** What most requests record: no error. */
const NO_EXCEPTIONS = new RawJson('{"exceptions":[]}');

/** The error that escaped, with its whole cause chain and source-mapped stack frames. */
export class ExceptionCollector implements DataCollector {
  readonly name = 'exception';
  /** Its lateCollect only reads: a provisional view may run it too. */
  readonly provisional = true;

  /** `redactor` hides secret pairs in messages and stacks, as the log records of the same error have them. */
  constructor(readonly redactor: Redactor = new Redactor()) {}

  lateCollect({ error, failed }: CollectContext): ExceptionData | RawJson {
    // The error page sub-request carries the error it renders; the failed request records it from kernel.exception.
    // `failed` tells a thrown `undefined` or `null` from no error at all (a collector context made elsewhere may lack it).
    const escaped = failed === true ? error : (error ?? null);
    if (failed !== true && escaped === null) return NO_EXCEPTIONS;
    const exceptions = this.#chain(escaped);
    // An error a kernel.exception listener threw (it escaped the kernel): the one it was handling too.
    const handled = HttpKernel.handledErrorOf(escaped);
    return handled === undefined ? { exceptions } : { exceptions, handled: this.#chain(handled) };
  }

  #chain(error: unknown): ExceptionItemData[] {
    return flattenError(error, { sourceMaps: true }).map((item) => ({
      class: item.class,
      message: this.redactor.text(item.message),
      status: item.status,
      ...(item.code === undefined ? {} : { code: item.code }),
      frames: item.frames.map((frame) => ({ function: frame.function, file: frame.file, line: frame.line, column: frame.column, internal: frame.internal })),
      stack: this.redactor.text(item.stack),
      ...(item.omitted === undefined ? {} : { omitted: item.omitted }),
    }));
  }
}
