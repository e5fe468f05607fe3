// Internal: the storage errors createKernel's storage log (its storage's onError), or an onError of one's own
// that returned true (see StorageErrorHandler), has logged at ERROR. A call failed by one of them need not be
// logged at ERROR again by its caller: one failure, one ERROR line. Marked where the line is written: an error
// merely given to an onError (one's own, which may log nothing, or the log passing over a message said before)
// is logged by the caller at ERROR, as nobody else did.

const reported = new WeakSet<object>();

/** `error` was logged at ERROR (or it repeats one that was: a stop again, during the backoff). */
export function markReported(error: Error): void {
  reported.add(error);
}

/** Whether `error` was logged at ERROR (see markReported). */
export function wasReported(error: unknown): boolean {
  return typeof error === 'object' && error !== null && reported.has(error);
}
