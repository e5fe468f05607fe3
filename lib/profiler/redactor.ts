import { errorClassName, errorFields } from '../../kernel/error-fields.js';
import { isError } from '../../kernel/is-error.js';
import { flat, jsonNumber, jsonString, jsonValue, setOwn } from './json.js';

/** What counts as secret. */
export interface RedactionOptions {
  /** Header names whose values are always hidden (lower-case). */
  headers?: readonly string[];
  /** Keys (header, query, body, cookie, session) that look secret; by default, those with a secret word (see looksSecret). */
  keyPattern?: RegExp;
}

/** What a hidden value is replaced with. */
export const REDACTED = '[redacted]';
/** REDACTED as JSON, for those writing JSON directly. */
export const REDACTED_JSON = JSON.stringify(REDACTED);
/** What a copy holds in place of a value that cannot be read (a Proxy whose traps throw). */
const UNREADABLE = '[unreadable value]';
const UNREADABLE_JSON = JSON.stringify(UNREADABLE);
/** REDACTED as a query parameter's value. */
const REDACTED_QUERY_VALUE = encodeURIComponent(REDACTED);
/** A `;key=value` pair of a path or a value: the value runs to the next `;`, `/`, `?`, `#` or `&`. */
const SEMICOLON_PAIR = /;([^=;/?#&]+)=[^;/?#&]*/g;

/** What the redactor decided about a key (cached per key). */
interface KeyVerdict {
  secret: boolean;
  /** The key as JSON, followed by `:`. */
  json: string;
}

/** What the redactor decided about a header name (cached per name as given). */
interface HeaderVerdict {
  lower: string;
  /** `lower` as a JSON string. */
  json: string;
  hidden: boolean;
  /**
   * How its value is rewritten before storage, or null when kept: a percent-encoded message
   * (X-Debug-Exception) goes through Redactor.text(), decoded; a URL (Referer, Location) through Redactor.url().
   */
  rewrite: 'encoded-text' | 'url' | null;
  /** The last value written under this name (HEADER_VALUE_CACHE_CHARS at most; always null when hidden). */
  value: string | null;
  /** `"name":value` as JSON, for `value` (for any value when hidden). */
  entry: string;
  /** Whether `entry` is flat already (see flat()). */
  flat: boolean;
}

/** Longest header value whose JSON a header name's verdict keeps: enough for what repeats (hosts, agents, types). */
const HEADER_VALUE_CACHE_CHARS = 256;

/** What LastHeaders keeps for a header the redactor hides: its JSON does not depend on the value. */
const HIDDEN: unique symbol = Symbol('hidden header');

/**
 * The last headers written as JSON through Redactor.headersJson() by one caller (the request
 * collector's request headers): headers with the same names and values, in the same order, get
 * the same JSON, as a client's requests usually do one after the other. The value of a header the
 * redactor hides is not kept (a secret stays no longer in memory than its request) nor compared:
 * a client whose token changes from one request to the next still gets the JSON back.
 */
export class LastHeaders {
  /** The redactor that wrote #json: another one may hide other headers. */
  #redactor: Redactor | null = null;
  #names: string[] = [];
  #values: unknown[] = [];
  #json = '';
  /** Whether #json is flat already (see flat()). */
  #flat = false;

  /** The JSON `redactor` wrote for these headers last time, or null when they differ from the last ones. */
  jsonOf(headers: Record<string, unknown>, redactor: Redactor): string | null {
    if (this.#redactor !== redactor) return null;
    const names = this.#names;
    const values = this.#values;
    let i = 0;
    for (const name in headers) {
      if (i >= names.length || names[i] !== name) return null;
      const value = headers[name];
      const known = values[i];
      if (known === HIDDEN ? value === undefined : known !== value) return null;
      i++;
    }
    if (i !== names.length) return null;
    // Made flat on its first reuse only: headers that change every time are not worth the copy.
    if (!this.#flat) {
      this.#json = flat(this.#json);
      this.#flat = true;
    }
    return this.#json;
  }

  /**
   * Keeps the headers' names and values (one set: the last; HIDDEN for a value the redactor hid),
   * and the JSON `redactor` wrote for them.
   */
  remember(names: string[], values: unknown[], json: string, redactor: Redactor): void {
    this.#names = names;
    this.#values = values;
    this.#json = json;
    this.#flat = false;
    this.#redactor = redactor;
  }
}

/** A header's value as one string (several values joined with `, `). */
function headerText(value: string | string[] | number): string {
  return typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : String(value);
}

const DEFAULT_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie'];
/** The error page's message, percent-encoded (see the error controller): its secret pairs are hidden as in free text. */
const ENCODED_MESSAGE_HEADERS: ReadonlySet<string> = new Set(['x-debug-exception']);
/**
 * Headers that hold a URL: its secret query values and path pairs are hidden as the request URL's
 * are. A page given a token in its URL (`/callback?access_token=...`) sends it in the Referer of
 * every request it makes to its own origin.
 */
const URL_HEADERS: ReadonlySet<string> = new Set(['referer', 'location', 'content-location']);
/** The profiler's own headers: their "token" is a profile's name, not a secret. */
const DEBUG_HEADERS: ReadonlySet<string> = new Set(['x-debug-token', 'x-previous-debug-token', 'x-debug-token-link']);
/** Where a key is split into words: non-alphanumerics, camelCase steps (`authToken`), and between letters and digits (`auth2`). */
const WORD_BREAK = /[^\p{L}\p{N}]+|(?<=\p{Ll})(?=\p{Lu})|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u;
/** Words (lower-cased) that name a secret: `db_pass`, `x-auth`, `userPin`, `connect.sid`, `X-Auth-Token`; not `passenger`, `author`, `spin`, `tokenizer`. */
const SECRET_WORDS: ReadonlySet<string> = new Set([
  'password', 'passwords', 'passwd', 'passphrase', 'pass', 'pwd', 'secret', 'secrets', 'token', 'tokens', 'apikey', 'auth', 'authorization',
  'credential', 'credentials', 'signature', 'csrf', 'xsrf', 'jwt', 'bearer', 'otp', 'pin', 'sid',
]);
/**
 * A secret word written as one with the word before (`csrfmiddlewaretoken`, `clientsecret`, `newpassword`,
 * `PHPSESSID`, `JSESSIONID`) or after (`secretkey`, `passwordconfirm`; not `secretary`), a private key
 * or a session id anywhere in a word (`userprivatekey`, IIS's `ASPSESSIONIDQQGGQQGG`).
 */
const SECRET_IN_WORD = /^(?:password|passwd|passphrase|secret(?!ar))|(?:token|secret|password|passwd|passphrase|apikey)$|privatekey|sess(?:ion)?id/;
/** Two words that name a secret together (`api_key`, `X-Api-Key`, `privateKey`, `session_id`, `ASP.NET_SessionId`). */
const SECRET_PAIRS: ReadonlySet<string> = new Set(['api key', 'private key', 'session id']);
/** Words that, right before or after it, make `token` or `tokens` a number of them, not a token (`max_tokens`, `token_count`, `prompt_tokens`). */
const COUNT_WORDS: ReadonlySet<string> = new Set(['max', 'min', 'num', 'number', 'count', 'total', 'limit', 'used', 'remaining', 'prompt', 'completion']);

/**
 * Whether a key looks secret by default: one of its words is a secret word (SECRET_WORDS; `token`
 * and `tokens` but next to a count word), ends with one or holds a session id (SECRET_IN_WORD), two of them make one
 * (SECRET_PAIRS), or its last word is `session` (session cookies: `session`, `laravel_session`).
 * `AUTHOR` is one word and `API_PIN` two; `session_idle_timeout` is no session id.
 */
function looksSecret(key: string): boolean {
  const words = key
    .split(WORD_BREAK)
    .filter((word) => word !== '')
    .map((word) => word.toLowerCase());
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if ((word === 'token' || word === 'tokens') && (COUNT_WORDS.has(words[i - 1] ?? '') || COUNT_WORDS.has(words[i + 1] ?? ''))) continue;
    if (SECRET_WORDS.has(word) || SECRET_IN_WORD.test(word) || (i > 0 && SECRET_PAIRS.has(`${words[i - 1]} ${word}`))) return true;
  }
  return words[words.length - 1] === 'session';
}

/**
 * A `key=value` pair in free text. The value is a quoted run (`password="a b"`, `'…'`, at most
 * 1,024 characters, so an unclosed quote costs no scan to the end; one the text ends in, as a string
 * cut at 10,000 characters may, to its end: cut first, `password="a b` showed `b`; otherwise unclosed,
 * the quote and the run after it up to a separator), an authorization scheme and its credentials
 * (`Authorization=Bearer abc`), or a run up to a separator.
 */
const TEXT_PAIR = /([?&;\s]|^)([^=&#?;\s"']+)=("[^"\n]{0,1024}(?:"|$)|'[^'\n]{0,1024}(?:'|$)|["'][^&#;\s]*|(?:bearer|basic|digest|token|negotiate)[ \t]+[^&#;\s"']*|[^&#;\s"']*)/gi;

/** How much of a value a copy keeps. */
interface CopyLimits {
  depth: number;
  items: number;
  chars: number;
  /** Characters of JSON a whole value is written in (valueJson); past them a note takes its place. */
  total: number;
}

/**
 * Most characters of JSON of one value from code (a log record's context, an attribute, the
 * session) in a profile, as a context in stderr's JSON lines: the limits per level alone let 100
 * items of 100 items of 10,000 characters through, 100 MB for one log record.
 */
export const MAX_VALUE_JSON = 256 * 1024;

/** Values from code (attributes, log context, session): bounded, they can be anything. */
const BOUNDED: CopyLimits = { depth: 8, items: 100, chars: 10_000, total: MAX_VALUE_JSON };
/** A JSON body, already capped in bytes: shown whole. */
const WHOLE: CopyLimits = { depth: 64, items: Infinity, chars: Infinity, total: Infinity };

/**
 * Most characters of a JSON body pretty-printed; past them it is written compact. Indented, a 62 KB
 * body 60 levels deep is 3.8 MB, and its request's whole data was a note in the profile (MAX_COLLECTOR_JSON).
 */
const MAX_PRETTY_BODY = 256 * 1024;

/** Thrown from inside a value's JSON once it passes its `total`: valueJson writes a note in its place. */
class ValueTooLong {
  constructor(readonly length: number) {}
}

/** Distinct keys whose verdict is remembered; the cache starts over beyond it. */
const VERDICT_CACHE_SIZE = 2048;
/**
 * Longest key (or header name) whose verdict is remembered: those that come back are short, and a
 * client's 64 KiB JSON body key per request filled the cache with 2,048 of them (over 120 MB held).
 */
const VERDICT_KEY_CHARS = 256;

/** Hides secrets before a profile is stored: sensitive headers, and any key that looks secret. */
export class Redactor {
  readonly #headers: ReadonlySet<string>;
  readonly #looksSecret: (key: string) => boolean;
  /** Verdicts of isSecretKey, with each key as JSON: the same few header and parameter names come back on every request. */
  readonly #verdicts = new Map<string, KeyVerdict>();
  /** Header names as given -> lower-case name and whether its value is hidden. */
  readonly #headerVerdicts = new Map<string, HeaderVerdict>();

  constructor(options: RedactionOptions = {}) {
    this.#headers = new Set((options.headers ?? DEFAULT_HEADERS).map((name) => name.toLowerCase()));
    const pattern = options.keyPattern;
    this.#looksSecret = pattern === undefined ? looksSecret : (key) => pattern.test(key);
  }

  /** Whether a key (query parameter, body field, cookie, header...) looks secret. */
  isSecretKey(key: string): boolean {
    return this.#keyVerdict(key).secret;
  }

  /** The key as JSON followed by `:` (`"name":`), for those writing JSON objects directly; cached. */
  keyJson(key: string): string {
    return this.#keyVerdict(key).json;
  }

  #keyVerdict(key: string): KeyVerdict {
    let verdict = this.#verdicts.get(key);
    if (verdict === undefined) {
      verdict = { secret: this.#looksSecret(key), json: `${jsonString(key)}:` };
      if (key.length > VERDICT_KEY_CHARS) return verdict;
      if (this.#verdicts.size >= VERDICT_CACHE_SIZE) this.#verdicts.clear();
      this.#verdicts.set(key, verdict);
    }
    return verdict;
  }

  /** Headers with sensitive values hidden; several values joined with `, `. */
  headers(headers: Record<string, string | string[] | number | undefined>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name in headers) {
      const value = headers[name];
      if (value === undefined) continue;
      const verdict = this.#headerVerdict(name);
      setOwn(out, verdict.lower, verdict.hidden ? REDACTED : verdict.rewrite !== null ? this.#rewritten(verdict, value) : headerText(value));
    }
    return out;
  }

  /**
   * headers() as JSON, written directly (the profiler's request collector: it runs for every
   * request). Each header's `"name":value` is kept with its name's verdict and reused while the
   * value repeats; with `last`, headers equal to the last ones given with it get their JSON back
   * whole (no escaping check, and one flat piece for the profile's copy instead of a dozen). Both
   * together: the profiler's own cost per /health request about 8% lower in process.
   */
  headersJson(headers: Record<string, string | string[] | number | undefined>, last?: LastHeaders): string {
    const known = last?.jsonOf(headers, this);
    if (known !== undefined && known !== null) return known;
    // What `last` will keep: every name in order, and each value unless it is hidden.
    const names: string[] | null = last === undefined ? null : [];
    const values: unknown[] = [];
    let json = '';
    for (const name in headers) {
      const value = headers[name];
      if (value === undefined) {
        if (names !== null) {
          names.push(name);
          values.push(undefined);
        }
        continue;
      }
      const verdict = this.#headerVerdict(name);
      // Two spellings of one header would be two keys here, one in headers(): let it decide.
      if (verdict.lower !== name) return jsonValue(this.headers(headers));
      if (names !== null) {
        names.push(name);
        values.push(verdict.hidden ? HIDDEN : value);
      }
      const entry = verdict.rewrite !== null ? `${verdict.json}:${jsonString(this.#rewritten(verdict, value))}` : headerEntry(verdict, value);
      json += json === '' ? `{${entry}` : `,${entry}`;
    }
    json = json === '' ? '{}' : `${json}}`;
    if (names !== null) last!.remember(names, values, json, this);
    return json;
  }

  #headerVerdict(name: string): HeaderVerdict {
    let verdict = this.#headerVerdicts.get(name);
    if (verdict === undefined) {
      const lower = name.toLowerCase();
      const hidden = this.#headers.has(lower) || (!DEBUG_HEADERS.has(lower) && this.isSecretKey(lower));
      const json = jsonString(lower);
      const rewrite = ENCODED_MESSAGE_HEADERS.has(lower) ? 'encoded-text' : URL_HEADERS.has(lower) ? 'url' : null;
      verdict = { lower, json, hidden, rewrite, value: null, entry: hidden ? flat(`${json}:${REDACTED_JSON}`) : '', flat: hidden };
      if (name.length > VERDICT_KEY_CHARS) return verdict;
      if (this.#headerVerdicts.size >= VERDICT_CACHE_SIZE) this.#headerVerdicts.clear();
      this.#headerVerdicts.set(name, verdict);
    }
    return verdict;
  }

  /**
   * A JSON-safe copy of any value with secrets hidden, in one pass: values under secret-looking
   * keys replaced, `key=value` pairs in strings redacted; functions by name, errors by class,
   * message, code and own fields, Maps as objects, cycles cut, size bounded (100 items per level, 8 levels, 10,000
   * characters per string).
   */
  value(value: unknown): unknown {
    return this.#copy(value, 0, [], BOUNDED);
  }

  /**
   * `JSON.stringify(value(x))`, written directly: no copy is built only to be serialised (the
   * profiler's collectors, for every log record's context and every request's parameters). A value
   * whose JSON passes MAX_VALUE_JSON characters is a note instead, `[value of at least N characters left out: …]`.
   */
  valueJson(value: unknown): string {
    try {
      return this.#json(value, 0, [], BOUNDED);
    } catch (error) {
      if (!(error instanceof ValueTooLong)) throw error;
      // Left as soon as it passes the bound: an array of millions costs what 256 KiB of it do.
      return jsonString(`[value of at least ${error.length} characters left out: longer than ${BOUNDED.total}]`);
    }
  }

  /** #copy, emitting JSON: the same rules, case for case. */
  #json(value: unknown, depth: number, path: object[], limits: CopyLimits): string {
    if (value === null || value === undefined) return 'null';
    switch (typeof value) {
      case 'string':
        return jsonString(this.text(value.length > limits.chars ? `${value.slice(0, limits.chars)}…` : value));
      case 'number':
        return jsonNumber(value);
      case 'boolean':
        return value ? 'true' : 'false';
      case 'bigint':
      case 'symbol':
        return jsonString(value.toString());
      case 'function':
        return jsonString(`[function ${value.name || 'anonymous'}]`);
    }
    if (depth > limits.depth) return '"[too deep]"';
    const object = value as object;
    if (path.includes(object)) return '"[circular]"';
    try {
      return this.#objectJson(object, depth, path, limits);
    } catch (error) {
      if (error instanceof ValueTooLong) throw error;
      // A Proxy whose traps throw (thrown, then logged as a context's `exception`) or a getter that throws: that value is left out, not the record and its profile.
      return UNREADABLE_JSON;
    }
  }

  /** #json of an object (any Proxy trap or getter here may throw). */
  #objectJson(object: object, depth: number, path: object[], limits: CopyLimits): string {
    const value: unknown = object;
    if (value instanceof Date) return jsonValue(this.#copy(value, depth, path, limits));
    path.push(object);
    try {
      // Member by member too, left as soon as they pass the total: through the copy, an error's fields or a
      // Map of 100 items of 100 items of 10,000 characters were built whole, 100 MB, to be written as a note.
      if (isError(value)) return this.#errorJson(value, depth, path, limits);
      if (value instanceof Map) return this.#mapJson(value, depth, path, limits);
      let json = '';
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length && i < limits.items; i++) json = bounded(`${json}${i === 0 ? '' : ','}${this.#json(value[i], depth + 1, path, limits)}`, limits);
        return `[${json}]`;
      }
      if (isTypedArray(value)) {
        for (let i = 0; i < value.length && i < limits.items; i++) json = bounded(`${json}${i === 0 ? '' : ','}"${i}":${this.#json(value[i], depth + 1, path, limits)}`, limits);
        return `{${json}}`;
      }
      let count = 0;
      for (const key in object) {
        if (!Object.hasOwn(object, key)) continue;
        if (count++ >= limits.items) break;
        const verdict = this.#keyVerdict(key);
        json = bounded(`${json}${json === '' ? '' : ','}${verdict.json}${verdict.secret ? REDACTED_JSON : this.#json((object as Record<string, unknown>)[key], depth + 1, path, limits)}`, limits);
      }
      return `{${json}}`;
    } finally {
      path.pop();
    }
  }

  /** #json of a Map, as #copy writes it: an object of its keys as text, a later key of the same text replacing the earlier. */
  #mapJson(map: Map<unknown, unknown>, depth: number, path: object[], limits: CopyLimits): string {
    const members: Record<string, string> = {};
    let length = 0;
    let count = 0;
    for (const [key, inner] of map) {
      if (count++ >= limits.items) break;
      const name = String(key);
      const verdict = this.#keyVerdict(name);
      const json = verdict.secret ? REDACTED_JSON : this.#json(inner, depth + 1, path, limits);
      // Counted as written (a key of control characters is 6 times longer in JSON); a later key of the same text replaces the earlier's value.
      length = boundedLength(Object.hasOwn(members, name) ? length - members[name]!.length + json.length : length + verdict.json.length + json.length + 1, limits);
      setOwn(members, name, json);
    }
    return this.#membersJson(members);
  }

  /** #json of an error, as #errorCopy writes it: its class and message, then its code and own fields. */
  #errorJson(error: Error, depth: number, path: object[], limits: CopyLimits): string {
    const className = errorClassName(error);
    const members: Record<string, string> = { class: jsonString(className), message: this.#json(error.message, depth + 1, path, limits) };
    const code: unknown = (error as { code?: unknown }).code;
    if (typeof code === 'string' || typeof code === 'number') members.code = this.isSecretKey('code') ? REDACTED_JSON : this.#json(code, depth + 1, path, limits);
    let length = boundedLength(members.class!.length + members.message!.length + (members.code?.length ?? 0), limits);
    let count = 0;
    for (const [key, inner] of errorFields(error, className)) {
      if (Object.hasOwn(members, key)) continue;
      if (count++ >= limits.items) break;
      const verdict = this.#keyVerdict(key);
      const json = verdict.secret ? REDACTED_JSON : this.#json(inner, depth + 1, path, limits);
      length = boundedLength(length + verdict.json.length + json.length + 1, limits);
      setOwn(members, key, json);
    }
    return this.#membersJson(members);
  }

  /** Members' JSON by name as an object's JSON, in the order JSON.stringify lists an object's keys (index-like ones first). */
  #membersJson(members: Record<string, string>): string {
    let json = '';
    for (const key in members) if (Object.hasOwn(members, key)) json += `${json === '' ? '' : ','}${this.keyJson(key)}${members[key]}`;
    return `{${json}}`;
  }

  /** `path`: the objects being copied above this one, to cut cycles (a shared object met twice is copied twice). */
  #copy(value: unknown, depth: number, path: object[], limits: CopyLimits): unknown {
    if (value === null || value === undefined) return null;
    switch (typeof value) {
      case 'string':
        return this.text(value.length > limits.chars ? `${value.slice(0, limits.chars)}…` : value);
      case 'number':
      case 'boolean':
        return value;
      case 'bigint':
        return value.toString();
      case 'function':
        return `[function ${value.name || 'anonymous'}]`;
      case 'symbol':
        return value.toString();
    }
    if (depth > limits.depth) return '[too deep]';
    const object = value as object;
    if (path.includes(object)) return '[circular]';
    try {
      return this.#objectCopy(object, depth, path, limits);
    } catch {
      return UNREADABLE;
    }
  }

  /** #copy of an object (any Proxy trap or getter here may throw). */
  #objectCopy(object: object, depth: number, path: object[], limits: CopyLimits): unknown {
    const value: unknown = object;
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
    path.push(object);
    try {
      if (isError(value)) return this.#errorCopy(value, depth, path, limits);
      if (Array.isArray(value)) {
        const out: unknown[] = [];
        for (let i = 0; i < value.length && i < limits.items; i++) out.push(this.#copy(value[i], depth + 1, path, limits));
        return out;
      }
      const out: Record<string, unknown> = {};
      if (isTypedArray(value)) {
        for (let i = 0; i < value.length && i < limits.items; i++) out[i] = this.#copy(value[i], depth + 1, path, limits);
        return out;
      }
      let count = 0;
      if (value instanceof Map) {
        for (const [key, inner] of value) {
          if (count++ >= limits.items) break;
          const name = String(key);
          setOwn(out, name, this.isSecretKey(name) ? REDACTED : this.#copy(inner, depth + 1, path, limits));
        }
        return out;
      }
      for (const key in object) {
        if (!Object.hasOwn(object, key)) continue;
        if (count++ >= limits.items) break;
        setOwn(out, key, this.isSecretKey(key) ? REDACTED : this.#copy((object as Record<string, unknown>)[key], depth + 1, path, limits));
      }
      return out;
    } finally {
      path.pop();
    }
  }

  /**
   * An error by class and message, then its code and own fields (see errorFields), redacted as an
   * object's are; an odd one (no constructor, a message that is no string) is still written as an error.
   */
  #errorCopy(error: Error, depth: number, path: object[], limits: CopyLimits): Record<string, unknown> {
    const className = errorClassName(error);
    const message: unknown = error.message;
    // Cut as any string of the value is: a 10 MB message logged with its error was stored whole, twice (the log record and the error page's).
    const out: Record<string, unknown> = { class: className, message: this.#copy(message, depth + 1, path, limits) };
    const code: unknown = (error as { code?: unknown }).code;
    if (typeof code === 'string' || typeof code === 'number') out.code = this.isSecretKey('code') ? REDACTED : this.#copy(code, depth + 1, path, limits);
    let count = 0;
    for (const [key, inner] of errorFields(error, className)) {
      if (Object.hasOwn(out, key)) continue;
      if (count++ >= limits.items) break;
      setOwn(out, key, this.isSecretKey(key) ? REDACTED : this.#copy(inner, depth + 1, path, limits));
    }
    return out;
  }

  /** Free text (a log message, an error message, a URL in a log context) with `secret=value` pairs hidden. */
  text(text: string): string {
    if (text.indexOf('=') === -1) return text;
    // A key or value stops at every separator (`;` too): runs that may start at one separator and
    // cross others made a text of many `;` and no `=` cost a scan per separator (quadratic).
    return text.replace(TEXT_PAIR, (pair, lead: string, key: string) => (this.isSecretKey(decodeSafe(key)) ? `${lead}${key}=${REDACTED}` : pair));
  }

  /** A header value rewritten as its verdict says. */
  #rewritten(verdict: HeaderVerdict, value: string | string[] | number): string {
    const text = headerText(value);
    return verdict.rewrite === 'url' ? this.url(text) : this.#encodedText(text);
  }

  /** A percent-encoded message with its secret pairs hidden (as it was when there are none). */
  #encodedText(value: string): string {
    const decoded = decodeSafe(value);
    const redacted = this.text(decoded);
    return redacted === decoded ? value : encodeURIComponent(redacted);
  }

  /** Query parameters as a record, secret ones hidden, and the secret `;key=value` pairs within values (`x=1;secret=...`). */
  searchParams(params: URLSearchParams): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    for (const key of new Set(params.keys())) {
      const values = params.getAll(key).map((value) => this.#semicolonPairs(value, REDACTED));
      setOwn(out, key, this.isSecretKey(key) ? REDACTED : values.length === 1 ? values[0]! : values);
    }
    return out;
  }

  /**
   * A URL (or a path) with the values of secret query parameters hidden, and of secret `;key=value`
   * pairs in its path (`/cart;jsessionid=...`) and query values; the rest left as it was written (searched by substring).
   * A fragment's `key=value` pairs too: an OAuth implicit grant redirects to `/cb#access_token=...` (a bare `#anchor` is kept).
   */
  url(url: string): string {
    const hash = url.indexOf('#');
    const beforeHash = hash === -1 ? url : url.slice(0, hash);
    const q = beforeHash.indexOf('?');
    const path = q === -1 ? beforeHash : beforeHash.slice(0, q);
    const hiddenPath = this.#semicolonPairs(path, REDACTED_QUERY_VALUE);
    const query = q === -1 ? '' : beforeHash.slice(q + 1);
    const hiddenQuery = q === -1 ? '' : this.#queryPairs(query, true);
    const fragment = hash === -1 ? '' : url.slice(hash + 1);
    const hiddenFragment = hash === -1 ? '' : this.#queryPairs(fragment, false);
    if (hiddenPath === path && hiddenQuery === query && hiddenFragment === fragment) return url;
    return `${hiddenPath}${q === -1 ? '' : `?${hiddenQuery}`}${hash === -1 ? '' : `#${hiddenFragment}`}`;
  }

  /** `&`-separated pairs with secret values hidden (as it was when there are none); `flags`: a secret key without a value gets the hidden one too. */
  #queryPairs(text: string, flags: boolean): string {
    const pairs = text.split('&');
    let changed = false;
    for (let i = 0; i < pairs.length; i++) {
      const pair = pairs[i]!;
      const eq = pair.indexOf('=');
      const key = eq === -1 ? pair : pair.slice(0, eq);
      const hidden = key !== '' && (flags || eq !== -1) && this.isSecretKey(decodeSafe(key.replace(/\+/g, ' '))) ? `${key}=${REDACTED_QUERY_VALUE}` : this.#semicolonPairs(pair, REDACTED_QUERY_VALUE);
      if (hidden !== pair) {
        pairs[i] = hidden;
        changed = true;
      }
    }
    return changed ? pairs.join('&') : text;
  }

  /** `text` with the value of each secret `;key=value` pair replaced by `hidden` (a path parameter, as servlet containers put the session id). */
  #semicolonPairs(text: string, hidden: string): string {
    if (text.indexOf(';') === -1) return text;
    return text.replace(SEMICOLON_PAIR, (pair, key: string) => (this.isSecretKey(decodeSafe(key)) ? `;${key}=${hidden}` : pair));
  }

  /**
   * A body as text with secrets hidden: JSON, form and multipart bodies field by field (a JSON
   * body that does not parse, as one cut at the body cap, pair by pair); anything else as free
   * text and by its JSON pairs too: a JSON body sent as text/plain (sendBeacon(), fetch() of a string) kept its password.
   */
  body(text: string, contentType: string): string {
    if (contentType === 'application/json' || contentType.endsWith('+json')) {
      try {
        const copy = this.#copy(JSON.parse(text), 0, [], WHOLE);
        const pretty = JSON.stringify(copy, null, 2);
        return pretty.length <= MAX_PRETTY_BODY ? pretty : JSON.stringify(copy);
      } catch {
        return this.#jsonPairs(text);
      }
    }
    if (contentType === 'application/x-www-form-urlencoded') {
      const params = new URLSearchParams(text);
      for (const key of new Set(params.keys())) if (this.isSecretKey(key)) params.set(key, REDACTED);
      return params.toString();
    }
    if (contentType === 'multipart/form-data') {
      // A field of another name may hold JSON (GraphQL's `operations`, a JSON blob): its secret pairs are hidden, as in a text body.
      return text.replace(MULTIPART_FIELD, (part, head: string, name: string) =>
        this.isSecretKey(name) ? `${head}${REDACTED}` : part.indexOf('"', head.length) === -1 ? part : `${head}${this.#jsonPairs(part.slice(head.length))}`,
      );
    }
    return this.text(text.indexOf('"') === -1 ? text : this.#jsonPairs(text));
  }

  /**
   * JSON text, whole or not, with the value of each `"secret": value` pair hidden: a string or a
   * scalar, or a list or an object whole (to its closing bracket, or the end of a cut text), as a
   * parsed body's is. A hidden value is not scanned again for pairs: each character is read once.
   */
  #jsonPairs(text: string): string {
    let out = '';
    let copied = 0;
    JSON_PAIR.lastIndex = 0;
    for (let match = JSON_PAIR.exec(text); match !== null; match = JSON_PAIR.exec(text)) {
      const value = match[3];
      if (value === undefined || !this.isSecretKey(jsonKeyText(match[1]!))) continue;
      const end = value === '[' || value === '{' ? closingBracketEnd(text, JSON_PAIR.lastIndex) : JSON_PAIR.lastIndex;
      out += `${text.slice(copied, match.index)}"${match[1]}"${match[2]}${REDACTED_JSON}`;
      copied = end;
      JSON_PAIR.lastIndex = end;
    }
    return copied === 0 ? text : out + text.slice(copied);
  }
}

/** `json`, or a ValueTooLong thrown once it passes the value's total: its writer stops there. */
function bounded(json: string, limits: CopyLimits): string {
  boundedLength(json.length, limits);
  return json;
}

/** `length`, or a ValueTooLong thrown once it passes the value's total (see bounded). */
function boundedLength(length: number, limits: CopyLimits): number {
  if (length > limits.total) throw new ValueTooLong(length);
  return length;
}

/**
 * A Buffer or another typed array: copied item by item up to the limit, as a `for...in` over it
 * would list them, but without listing the keys of all its items first (seconds for a 10 MiB Buffer).
 */
function isTypedArray(value: unknown): value is ArrayLike<number | bigint> {
  return ArrayBuffer.isView(value) && !(value instanceof DataView);
}

/** A header's `"name":value` as JSON, its value hidden when the name says so; kept with the verdict while the value repeats. */
function headerEntry(verdict: HeaderVerdict, value: string | string[] | number): string {
  if (verdict.hidden) return verdict.entry;
  if (value === verdict.value) {
    if (!verdict.flat) {
      verdict.entry = flat(verdict.entry);
      verdict.flat = true;
    }
    return verdict.entry;
  }
  const entry = `${verdict.json}:${jsonString(headerText(value))}`;
  if (typeof value === 'string' && value.length <= HEADER_VALUE_CACHE_CHARS) {
    verdict.value = value;
    verdict.entry = entry;
    verdict.flat = false;
  }
  return entry;
}

/**
 * A JSON string, then either `:` and a string or scalar value or the bracket a list or an object opens
 * with (a key and its value; the value's closing quote may be missing where the text was cut), or nothing
 * (a string value, skipped whole). A string runs to its closing quote or to the end of the text (a cut
 * one may end in a lone backslash), so a match never fails once started: a failed one would start again
 * inside the string, at each escaped quote, and a cut body of `\"` cost a scan per quote (quadratic).
 */
const JSON_PAIR = /"((?:[^"\\]|\\[^])*)\\?(?:"|$)(?:(\s*:\s*)("(?:[^"\\]|\\[^])*\\?(?:"|$)|[^\s,:{}[\]"]+|[[{]))?/g;

/** Where the list or object whose opening bracket ends before `from` ends: after its closing bracket, brackets in strings skipped; the text's end when it is cut. */
function closingBracketEnd(text: string, from: number): number {
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 34 /* " */) {
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92 /* \ */) i++;
    } else if (code === 91 /* [ */ || code === 123 /* { */) {
      depth++;
    } else if ((code === 93 /* ] */ || code === 125 /* } */) && --depth === 0) {
      return i + 1;
    }
  }
  return text.length;
}

/**
 * A multipart part's headers with its field name, then its content up to the next boundary line (or the end, where the body was cut).
 * Only at a line's start, a name within its line, and headers that may end with the text: a match that
 * could fail after reading on (no blank line, no closing quote) was tried again at every later
 * `content-disposition:` or `name="`, which made a 64 KiB body cost up to a second (quadratic).
 */
const MULTIPART_FIELD = /(?<![^\n])(content-disposition:[^\r\n]*?\bname="([^"\r\n]*)"[^\r\n]*(?:\r?\n(?:[^\r\n]+\r?\n)*(?:\r?\n|$)|$))[\s\S]*?(?=\r?\n--|$)/gi;

/** A JSON key's text, its escapes decoded (as written when it does not decode). */
function jsonKeyText(key: string): string {
  if (key.indexOf('\\') === -1) return key;
  try {
    return JSON.parse(`"${key}"`) as string;
  } catch {
    return key;
  }
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
