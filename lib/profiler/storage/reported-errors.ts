// Internal: the errors a storage has given to its onError (logged there by createKernel's storage log). A call
// failed by one of them need not be logged at ERROR again by its caller: one failure, one ERROR line.

const reported = new WeakSet<object>();

/** The storage gave `error` to its onError (or it repeats one it gave: a stop again, during the backoff). */
export function markReported(error: Error): void {
  reported.add(error);
}

/** Whether the storage gave `error` to its onError. */
export function wasReported(error: unknown): boolean {
  return typeof error === 'object' && error !== null && reported.has(error);
}
