import type { ProfileSummary } from '../profile.js';
import type { SearchCriteria } from './profiler-storage.js';

/** Most results of a search when the criteria name no limit. */
export const DEFAULT_SEARCH_LIMIT = 10;

/** Search criteria checked once, so matching each summary is a few comparisons. */
export interface CompiledCriteria {
  ip: string | undefined;
  /** Upper-cased. */
  method: string | undefined;
  status: number | undefined;
  url: string | undefined;
  /** `url` as a URL may carry it (`élève` as `%C3%A9l%C3%A8ve` or `%c3%a9l%c3%a8ve`), when that differs: what a user types is found either way. */
  encodedUrl: RegExp | undefined;
  start: number;
  end: number;
  limit: number;
}

/** Normalises criteria: empty strings mean "any", the method compares upper-cased, limit defaults to 10. */
export function compileCriteria(criteria: SearchCriteria = {}): CompiledCriteria {
  const limit = criteria.limit;
  return {
    ip: criteria.ip || undefined,
    method: criteria.method ? criteria.method.toUpperCase() : undefined,
    status: typeof criteria.status === 'number' && Number.isFinite(criteria.status) ? criteria.status : undefined,
    url: criteria.url || undefined,
    encodedUrl: criteria.url ? urlPattern(criteria.url) : undefined,
    start: typeof criteria.start === 'number' && Number.isFinite(criteria.start) ? criteria.start : -Infinity,
    end: typeof criteria.end === 'number' && Number.isFinite(criteria.end) ? criteria.end : Infinity,
    limit: typeof limit === 'number' && Number.isFinite(limit) && limit >= 0 ? Math.floor(limit) : DEFAULT_SEARCH_LIMIT,
  };
}

/** Whether a summary passes every filter of the criteria. */
export function matchesCriteria(summary: ProfileSummary, criteria: CompiledCriteria): boolean {
  return (
    summary.time >= criteria.start &&
    summary.time <= criteria.end &&
    (criteria.status === undefined || summary.status === criteria.status) &&
    (criteria.ip === undefined || summary.ip === criteria.ip) &&
    (criteria.method === undefined || summary.method.toUpperCase() === criteria.method) &&
    (criteria.url === undefined || summary.url.includes(criteria.url) || (criteria.encodedUrl !== undefined && criteria.encodedUrl.test(summary.url)))
  );
}

/** Characters a request's URL holds percent-encoded: non-ASCII, spaces and controls. */
const ENCODED_IN_URL = /[^\x21-\x7e]+/g;

/** A space, and an escape's hex digits, as they may be written in a URL. */
const VARIANT_IN_URL = /%20|%[0-9A-Fa-f]{2}/g;

/**
 * Text as a URL may hold it, as a pattern: UTF-8 percent-encoded, an escape's hex in either case (a client may
 * write `%c3%a9`, RFC 3986 2.1) and a space as `+` too (a form's query); undefined when that finds no more than
 * the text itself, or none (a lone surrogate, which no URL holds).
 */
function urlPattern(text: string): RegExp | undefined {
  let encoded: string;
  try {
    encoded = text.replace(ENCODED_IN_URL, (run) => encodeURIComponent(run));
  } catch {
    return undefined;
  }
  if (encoded === text && !/%[0-9A-Fa-f]{2}/.test(text)) return undefined;
  let source = '';
  let from = 0;
  for (const match of encoded.matchAll(VARIANT_IN_URL)) {
    source += escapeRegExp(encoded.slice(from, match.index)) + (match[0] === '%20' ? '(?:%20|\\+)' : `%[${match[0][1]!.toUpperCase()}${match[0][1]!.toLowerCase()}][${match[0][2]!.toUpperCase()}${match[0][2]!.toLowerCase()}]`);
    from = match.index + match[0].length;
  }
  return new RegExp(source + escapeRegExp(encoded.slice(from)));
}

/** Text matched as it is in a RegExp. */
function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

/** The summary fields only, so a storage never leaks its bookkeeping into search results. */
export function toSummary(entry: ProfileSummary): ProfileSummary {
  return { token: entry.token, parent: entry.parent, ip: entry.ip, method: entry.method, url: entry.url, time: entry.time, status: entry.status };
}
