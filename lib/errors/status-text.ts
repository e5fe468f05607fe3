import { STATUS_CODES } from 'node:http';

/** The reason phrase for an HTTP status (`404` -> `Not Found`), with a class-wide fallback for unregistered codes. */
export function statusText(status: number): string {
  const known = STATUS_CODES[status];
  if (known !== undefined) return known;
  // nginx's, which ClientClosedError takes: the profiler and the logs name it.
  if (status === 499) return 'Client Closed Request';
  if (status >= 500 && status <= 599) return 'Server Error';
  if (status >= 400 && status <= 499) return 'Client Error';
  return 'Unknown Status';
}
