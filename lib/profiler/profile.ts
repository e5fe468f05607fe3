import type { CalledListener } from '../../kernel/index.js';
import type { LogRecord } from '../log/index.js';
import type { ByteSlab } from './byte-slab.js';
import { flat, jsonNumber, jsonString, jsonStringOrNull } from './json.js';

/** The summary of a profile: what the search page lists and the storage indexes. */
export interface ProfileSummary {
  /** 6 lowercase hex characters by default; unique in its storage. */
  token: string;
  /** The token of the request that made this sub-request, or null for a main request. */
  parent: string | null;
  /** The client's IP address. */
  ip: string;
  method: string;
  /** Absolute URL, query included. */
  url: string;
  /** When the request began, epoch milliseconds. */
  time: number;
  /** The response status code. */
  status: number;
}

/** One recorded request: its summary, its sub-requests and what each collector gathered. */
export interface Profile extends ProfileSummary {
  /** Tokens of the sub-requests made while handling this request, in order. */
  children: string[];
  /** Collector name -> its JSON-serialisable data (see the *Data types below for the built-in ones). */
  collectors: Record<string, unknown>;
}

/**
 * A profile already serialised: its summary and its JSON, as a string or UTF-8 bytes. What waits
 * in the profiler's save queue is then one flat string per profile (a single object the garbage
 * collector copies without looking inside), not an object graph to trace.
 */
export interface EncodedProfile extends ProfileSummary {
  readonly json: string | Buffer;
}

/** What a storage accepts: a profile, or one already serialised. */
export type StorableProfile = Profile | EncodedProfile;

/**
 * Collector data already serialised, spliced as it is into the profile's JSON (what
 * `JSON.rawJSON` does on Node 21+). A collector that writes its own JSON for what it records on
 * every request saves building objects only for `JSON.stringify` to walk them. `json` must be
 * valid JSON; anything else serialising a profile (`JSON.stringify`) gets it parsed back.
 */
export class RawJson {
  constructor(readonly json: string) {}

  toJSON(): unknown {
    return JSON.parse(this.json);
  }
}

/**
 * Serialises a profile once; throws a TypeError when a collector's data is not JSON-serialisable.
 * With `slab`, the JSON is UTF-8 bytes copied there (see ByteSlab); without, one flat string.
 */
export function encodeProfile(profile: Profile, slab?: ByteSlab): EncodedProfile {
  const names: string[] = [];
  const data: unknown[] = [];
  for (const name in profile.collectors) {
    if (!Object.hasOwn(profile.collectors, name)) continue;
    names.push(name);
    data.push(profile.collectors[name]);
  }
  return encodeProfileParts(profile, profile.children, names, data, slab);
}

/**
 * Most characters of JSON a profile keeps of one collector's data; past them a note takes its
 * place (a collector of an embedder's that returned 50 MB made a profile, and each of its pages' JSON, of 50 MB).
 * The built-in collectors stay well within it.
 */
export const MAX_COLLECTOR_JSON = 2 * 1024 * 1024;

/** The note stored in place of a collector's data of `length` characters of JSON, past MAX_COLLECTOR_JSON. */
function leftOutNote(length: number): string {
  return `[data of ${length} characters left out: longer than ${MAX_COLLECTOR_JSON}]`;
}

/**
 * Whether a collector's stored data is the note that took its place past MAX_COLLECTOR_JSON
 * (`[data of 52428811 characters left out: longer than 2097152]`): its panel shows the note, and
 * present() is not asked to make sense of it.
 */
export function isLeftOutData(data: unknown): data is string {
  return typeof data === 'string' && LEFT_OUT_NOTE.test(data);
}

const LEFT_OUT_NOTE = /^\[data of \d+ characters left out: longer than \d+\]$/;

/**
 * encodeProfile for a profile given in parts: its summary, its children, and its collectors'
 * names and data in the order JSON.stringify would meet them (the profiler has them so, and
 * building a collectors object only to walk it cost about a microsecond per profile).
 *
 * The JSON is appended piece by piece and made flat once: by the copy into the slab, or here.
 * Joining an array of the pieces instead made a flat string that the slab's copy then read
 * again (about 15% dearer on a typical profile).
 */
export function encodeProfileParts(summary: ProfileSummary, children: readonly string[], names: readonly string[], data: readonly unknown[], slab?: ByteSlab): EncodedProfile {
  const { token, parent, ip, method, url, time, status } = summary;
  // The same JSON as JSON.stringify(profile), with RawJson data spliced in rather than re-read.
  let json = `{"token":${jsonString(token)},"parent":${jsonStringOrNull(parent)},"children":${children.length === 0 ? '[]' : JSON.stringify(children)}${requestLineJson(ip, method, url)}${jsonNumber(time)},"status":${jsonNumber(status)},"collectors":{`;
  let first = true;
  for (let i = 0; i < names.length; i++) {
    const value = data[i];
    const written = value instanceof RawJson ? value.json : (JSON.stringify(value) as string | undefined);
    if (written === undefined) continue;
    const encoded = written.length <= MAX_COLLECTOR_JSON ? written : jsonString(leftOutNote(written.length));
    json += first ? `${memberName(names[i]!)}${encoded}` : `,${memberName(names[i]!)}${encoded}`;
    first = false;
  }
  json += '}}';
  return { token, parent, ip, method, url, time, status, json: slab === undefined ? flat(json) : slab.copy(json) };
}

/** The last `,"ip":…,"method":…,"url":…,"time":` written, and what it was made of. */
let lastRequestLine = { ip: '', method: '', url: '', json: '' };

/**
 * The JSON of a profile's ip, method and URL (and the key of its time), reused while they repeat,
 * as they do from one request to the next on a server: one entry, keyed by all three, so never
 * stale and never more than one string kept.
 */
function requestLineJson(ip: string, method: string, url: string): string {
  const last = lastRequestLine;
  if (ip === last.ip && method === last.method && url === last.url && last.json !== '') return last.json;
  const json = flat(`,"ip":${jsonString(ip)},"method":${jsonString(method)},"url":${jsonString(url)},"time":`);
  lastRequestLine = { ip, method, url, json };
  return json;
}

/** Collector names as JSON object keys (`"request":`): the same few on every profile. */
const memberNames = new Map<string, string>();

function memberName(name: string): string {
  let json = memberNames.get(name);
  if (json === undefined) {
    json = flat(`${jsonString(name)}:`);
    // Names are collectors' own: a registry that keeps growing would be a bug, not a reason to grow this.
    if (memberNames.size < 256) memberNames.set(name, json);
  }
  return json;
}

/** The JSON of a profile (a string or UTF-8 bytes), serialising it unless it already is. */
export function profileJson(profile: StorableProfile): string | Buffer {
  return isEncodedProfile(profile) ? profile.json : JSON.stringify(profile);
}

/** The profile itself, parsed back from its JSON when it is encoded. */
export function decodeProfile(profile: StorableProfile): Profile {
  if (!isEncodedProfile(profile)) return profile;
  const json = profile.json;
  return JSON.parse(typeof json === 'string' ? json : json.toString('utf8')) as Profile;
}

export function isEncodedProfile(profile: StorableProfile): profile is EncodedProfile {
  const json = (profile as Partial<EncodedProfile>).json;
  return (typeof json === 'string' || Buffer.isBuffer(json)) && !('collectors' in profile);
}

/** `collectors.request`: the request and response, redacted. */
export interface RequestData {
  method: string;
  url: string;
  path: string;
  /** Header name (lower-case) -> value; secrets replaced by `[redacted]`. */
  requestHeaders: Record<string, string>;
  query: Record<string, string | string[]>;
  cookies: Record<string, string>;
  /** The body as text when it was read and is small enough; null otherwise. */
  body: string | null;
  bodyTruncated: boolean;
  /** Request attributes, made JSON-safe (`_controller` shown by name). */
  attributes: Record<string, unknown>;
  /** How many attributes are not kept, past MAX_ATTRIBUTES_JSON of them; absent when none. */
  attributesOmitted?: number;
  route: string | null;
  routeParams: Record<string, unknown>;
  controller: string | null;
  clientIp: string;
  /** Whether this is the main request or a sub-request. */
  requestType: 'main' | 'sub';
  statusCode: number;
  statusText: string;
  responseHeaders: Record<string, string>;
  contentType: string | null;
  /** Session data when a session was used (redacted); null otherwise. */
  session: Record<string, unknown> | null;
}

/** One stack frame as recorded. */
export interface FrameData {
  function: string | null;
  file: string | null;
  line: number | null;
  column: number | null;
  internal: boolean;
}

/** One error of a cause chain. */
export interface ExceptionItemData {
  class: string;
  message: string;
  status: number | null;
  code?: string;
  frames: FrameData[];
  /** The raw stack text. */
  stack: string;
  /** On the last error of a chain cut at 20: how many more there were (see FlatError). */
  omitted?: number;
}

/** `collectors.exception`: the cause chain of the error that escaped, outermost first (empty: none). */
export interface ExceptionData {
  exceptions: ExceptionItemData[];
  /**
   * When the error above escaped the kernel, thrown by a `kernel.exception` listener: the cause
   * chain of the error that listener was handling (see HttpKernel.handledErrorOf), which neither
   * the error page nor the listeners after it saw. Absent otherwise.
   */
  handled?: ExceptionItemData[];
}

/** `collectors.logger`: every record written while handling this request. */
export interface LoggerData {
  logs: LogRecord[];
  /** Level name -> count. */
  counts: Record<string, number>;
  /** Errors and worse. */
  errorCount: number;
  /** Warnings. */
  warningCount: number;
  /** How many records are counted, not kept (past the 1,000 a request keeps, or a million characters of them); absent when none. */
  omitted?: number;
  /** Those records by level name; in `counts`, `errorCount` and `warningCount` too. */
  omittedLevels?: Record<string, number>;
}

/** One listener call, as the traced dispatcher records it, but with `start` in milliseconds since the request began; `stoppedPropagation` only when true. */
export type ListenerCallData = Omit<CalledListener, 'stoppedPropagation'> & { stoppedPropagation?: true };

/** `collectors.events` as pages and tools see it: listeners called in order, not called, orphaned events. */
export interface EventsData {
  called: ListenerCallData[];
  /** Every dispatch (with or without listeners), `start` in milliseconds since the request began: the timeline's sections. */
  dispatches: Array<{ event: string; start: number; duration: number }>;
  notCalled: readonly NotCalledListenerData[];
  orphaned: string[];
}

/** A registered listener that was not called. */
export interface NotCalledListenerData {
  event: string;
  listener: string;
  priority: number;
}

/**
 * `collectors.events` as stored: times in whole microseconds since the request began and calls as
 * tuples, because serialising floats and keys was half the cost of saving a profile;
 * EventsCollector.present() turns it into EventsData.
 */
export interface StoredEventsData {
  /** `[event, listener, priority, startUs, durationUs]`, with a 6th element `1` when the listener stopped propagation. */
  calls: Array<[string, string, number, number, number] | [string, string, number, number, number, 1]>;
  /** `[event, startUs, durationUs]` */
  dispatches: Array<[string, number, number]>;
  notCalled: readonly NotCalledListenerData[];
  orphaned: string[];
}

/** One bar of the timeline. `start` is milliseconds since the request began. */
export interface TimelinePeriod {
  name: string;
  category: 'event' | 'listener' | 'controller' | 'section';
  start: number;
  duration: number;
}

/** `collectors.time`: the request's timeline, drawn as a waterfall. */
export interface TimeData {
  /** Epoch milliseconds when the request began. */
  startTime: number;
  /** Milliseconds from start to the response being ready. */
  duration: number;
  /** Worked out on reading from `collectors.events` (absent in storage). */
  periods?: TimelinePeriod[];
}

/** One route's verdict on the request. */
export interface RouteTraceData {
  name: string;
  path: string;
  verdict: 'match' | 'almost' | 'mismatch';
  reason: string;
}

/** `collectors.router`: the matched route and params, or why each route did not match. */
export interface RouterData {
  route: string | null;
  params: Record<string, unknown>;
  /** The Location of a redirect answer: the router's (trailing slash or scheme; `route` is null then) or one of a route's controller. */
  redirect: string | null;
  /** What was routed (null for a sub-request made with its own controller, never routed). */
  routed: { method: string; path: string; host: string; scheme: string } | null;
  /**
   * Each route's verdict, worked out on reading against the routes of the process that reads
   * (as Symfony's router panel does); absent in storage.
   */
  traces?: RouteTraceData[];
}

/** `collectors.memory`: memory of the process just after the response was sent (read late: it costs a system call). */
export interface MemoryData {
  /** Bytes of JavaScript heap in use. */
  heapUsed: number;
  /** Bytes of resident memory of the whole process; absent when it could not be read (out of file descriptors). */
  rss?: number;
}
