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
  /** `url` as a URL carries it (`élève` as `%C3%A9l%C3%A8ve`), when that differs: what a user types is found either way. */
  encodedUrl: string | undefined;
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
    encodedUrl: criteria.url ? encodedAsInUrl(criteria.url) : undefined,
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
    (criteria.url === undefined || summary.url.includes(criteria.url) || (criteria.encodedUrl !== undefined && summary.url.includes(criteria.encodedUrl)))
  );
}

/** Characters a request's URL holds percent-encoded: non-ASCII, spaces and controls. */
const ENCODED_IN_URL = /[^\x21-\x7e]+/g;

/** Text as a URL holds it (UTF-8, upper-case hex, as browsers send it); undefined when that is the text itself, or none (a lone surrogate, which no URL holds). */
function encodedAsInUrl(text: string): string | undefined {
  let encoded: string;
  try {
    encoded = text.replace(ENCODED_IN_URL, (run) => encodeURIComponent(run));
  } catch {
    return undefined;
  }
  return encoded === text ? undefined : encoded;
}

/** The summary fields only, so a storage never leaks its bookkeeping into search results. */
export function toSummary(entry: ProfileSummary): ProfileSummary {
  return { token: entry.token, parent: entry.parent, ip: entry.ip, method: entry.method, url: entry.url, time: entry.time, status: entry.status };
}
