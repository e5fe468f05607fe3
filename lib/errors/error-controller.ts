import type { Controller, Request, RequestStack } from '../../kernel/index.js';
import { HttpKernel, Response } from '../../kernel/index.js';
import type { DebugLogBuffer } from '../log/index.js';
import { createCspNonce } from './csp-nonce.js';
import { debugPagePolicy, renderDebugPage } from './debug-page.js';
import type { FileLinker } from './file-link.js';
import { flattenError, type FlatError } from './flatten-error.js';
import { pageHeaders } from './page-headers.js';
import { plainPagePolicy, renderPlainPage } from './plain-page.js';
import { prefersJson } from './prefers-json.js';
import { PROBLEM_CONTENT_TYPE, renderProblem, serializeProblem } from './problem-json.js';
import { safeUri } from './safe-request.js';

/** What the error controller needs to know. */
export interface ErrorControllerOptions {
  /** Show internals (stack traces, logs, debug headers). */
  debug: boolean;
  /** In debug mode, whether this client may see them (default: every client). */
  showDebug?: (request: Request) => boolean;
  requestStack: RequestStack;
  /** Each request's logs (debug mode). */
  logs?: DebugLogBuffer | null;
  /** The profiler link of a request, when a profiler records it. */
  profilerUrl?: (request: Request) => string | null;
  charset?: string;
  /** Links the debug page's frames to the developer's editor (see createFileLinker). */
  fileLink?: FileLinker | null;
}

/**
 * The controller that renders error pages. It runs in a sub-request made by the
 * ErrorListener, reads the error from the `exception` attribute and answers with the
 * debug page, the plain page, or problem+json for clients that prefer JSON.
 */
export function createErrorController(options: ErrorControllerOptions): Controller {
  const { requestStack } = options;
  const showDebug = options.showDebug ?? (() => true);
  const charset = options.charset ?? 'UTF-8';

  return function errorController(request: Request): Response {
    const error = request.attributes.get('exception');
    const failed = requestStack.getParentRequest() ?? request;
    const debug = options.debug && showDebug(failed);
    // Only a debug page shows frames: mapping them to their sources reads files.
    const errors = flattenError(error, { sourceMaps: debug });
    const status = errors[0]?.status ?? 500;
    const headers = pageHeaders(errors[0]?.headers);
    if (debug) Object.assign(headers, debugHeaders(errors[0]));

    if (prefersJson(request)) {
      const body = serializeProblem(renderProblem({ errors, status, debug, instance: failed.path }));
      return new Response(body, status, { ...headers, 'content-type': PROBLEM_CONTENT_TYPE });
    }
    // An HTML page gets its own policy, with a nonce for its <style> (a policy the error asked for was for another body).
    const nonce = createCspNonce();
    if (!debug) {
      return new Response(renderPlainPage(status, charset, nonce), status, { ...headers, 'content-type': `text/html; charset=${charset}`, 'content-security-policy': plainPagePolicy(nonce) });
    }
    const failedRequests = requestStack.all().filter((r) => r !== request);
    const logs = options.logs ? options.logs.getLogsOf(failedRequests) : [];
    const droppedLogs = options.logs ? failedRequests.reduce((sum, r) => sum + options.logs!.droppedCount(r), 0) : 0;
    // An error a kernel.exception listener threw (it escaped the kernel): the one it was handling too.
    const handledError = HttpKernel.handledErrorOf(error);
    const page = renderDebugPage({
      errors,
      handled: handledError === undefined ? [] : flattenError(handledError, { sourceMaps: true }),
      logs,
      droppedLogs,
      request: { method: failed.method, uri: safeUri(failed) },
      status,
      profilerUrl: options.profilerUrl?.(failed) ?? null,
      charset,
      nonce,
      fileLink: options.fileLink ?? null,
    });
    return new Response(page, status, { ...headers, 'content-type': `text/html; charset=${charset}`, 'content-security-policy': debugPagePolicy(nonce) });
  };
}

/**
 * Half of a UTF-16 surrogate pair, alone: a JSON.parse message quotes the first code unit of an emoji
 * it stopped at, and a slice may cut a pair. encodeURIComponent throws on one, so it becomes U+FFFD.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * The most X-Debug-Exception holds, encoded. A proxy's buffer for a response's whole header section
 * is often one page (nginx's proxy_buffer_size: 4 or 8 KiB, then a 502), and undici allows 16 KiB:
 * 2,000 characters of a CJK message would encode to 18,000. The full message is on the page.
 */
const DEBUG_EXCEPTION_MAX = 2048;

/**
 * The headers of a page that shows debug details: the X-Debug-Exception pair, and `no-store`, over
 * any Cache-Control the error asked for. The page is for this client alone: a shared cache in front
 * of a staging server (Varnish keeps a 404 for two minutes by default) would show its stack traces
 * and logs to clients the details are hidden from.
 */
function debugHeaders(error: FlatError | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'cache-control': 'no-store' };
  if (error === undefined) return headers;
  headers['x-debug-exception'] = encodedWithin(error.message, DEBUG_EXCEPTION_MAX);
  const frame = error.frames.find((f) => f.file !== null);
  // Bounded and made encodable as the message is: a frame's file may be long, non-ASCII or hold a lone surrogate (a forged stack, a vm filename).
  if (frame?.file) headers['x-debug-exception-file'] = `${encodedWithin(frame.file, DEBUG_EXCEPTION_MAX)}:${frame.line ?? 0}`;
  return headers;
}

/** The longest start of `text` whose percent-encoding fits in `max` characters, encoded; a surrogate pair is kept whole or left out. */
function encodedWithin(text: string, max: number): string {
  // Each UTF-16 code unit encodes to at least one character: longer text cannot fit.
  const clean = text.slice(0, max).replace(LONE_SURROGATE, '\ufffd');
  const whole = encodeURIComponent(clean);
  if (whole.length <= max) return whole;
  // The encoded length grows with the prefix: the longest prefix that fits, by bisection.
  let low = 0;
  let high = clean.length;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (encodeURIComponent(pairSafe(clean, middle)).length <= max) low = middle;
    else high = middle - 1;
  }
  return encodeURIComponent(pairSafe(clean, low));
}

/** The first `length` code units of `text`, one fewer when that would cut a surrogate pair. */
function pairSafe(text: string, length: number): string {
  const last = text.charCodeAt(length - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length);
}

