/**
 * Errors as `application/problem+json` (RFC 9457) for clients that ask for JSON.
 * Outside debug mode a 5xx says nothing about the failure; a 4xx keeps its message, which tells the client what to fix.
 */
import type { FlatError } from './flatten-error.js';
import { statusText } from './status-text.js';

/** The media type of a problem document. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** What a 5xx says outside debug mode. */
export const GENERIC_SERVER_ERROR_DETAIL = 'The server could not complete the request because of an internal error.';

/** One stack frame in a debug problem document. */
export interface ProblemTraceFrame {
  file: string | null;
  line: number | null;
  function: string | null;
}

/** An RFC 9457 problem document; `class`, `trace`, `causes` and `omittedCauses` are extension members present only in debug mode. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  class?: string;
  trace?: ProblemTraceFrame[];
  causes?: Array<{ class: string; message: string }>;
  /** How many errors of the chain come after those listed and are not (see FlatError.omitted); absent when none. */
  omittedCauses?: number;
}

/** What `renderProblem` needs. */
export interface ProblemInput {
  /** The cause chain from `flattenError`, outermost first. */
  errors: FlatError[];
  status: number;
  debug: boolean;
  /** A URI naming this occurrence, usually the request path. */
  instance?: string;
  /** A URI naming the problem type; `about:blank` (the status says it all) when absent. */
  type?: string;
}

/** Builds the problem document for a failed request. */
export function renderProblem(input: ProblemInput): ProblemDetails {
  const outermost = input.errors[0];
  const title = statusText(input.status);
  const message = outermost !== undefined && outermost.message !== '' ? outermost.message : title;
  const detail = input.status < 500 || input.debug ? message : GENERIC_SERVER_ERROR_DETAIL;
  const problem: ProblemDetails = {
    type: input.type !== undefined && input.type !== '' ? input.type : 'about:blank',
    title,
    status: input.status,
    detail,
  };
  if (input.instance !== undefined) problem.instance = input.instance;
  if (input.debug && outermost !== undefined) {
    problem.class = outermost.class;
    problem.trace = outermost.frames.map((frame) => ({ file: frame.file, line: frame.line, function: frame.function }));
    problem.causes = input.errors.slice(1).map((error) => ({ class: error.class, message: error.message }));
    const omitted = input.errors.at(-1)!.omitted ?? 0;
    if (omitted > 0) problem.omittedCauses = omitted;
  }
  return problem;
}

const htmlSensitive = /[<>&\u2028\u2029]/g;

/** The problem document as JSON text, HTML-safe (`htmlSafeJson`). */
export function serializeProblem(problem: ProblemDetails): string {
  return htmlSafeJson(problem);
}

/**
 * JSON text for an error body that may echo the client's input. `<`, `>`, `&` and the JS line separators are
 * written as `\u` escapes: the same JSON to a parser, but inert if a browser ever sniffs the body as HTML.
 */
export function htmlSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(htmlSensitive, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
