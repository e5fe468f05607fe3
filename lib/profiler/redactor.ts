/** What counts as secret. */
export interface RedactionOptions {
  /** Header names whose values are always hidden (lower-case). */
  headers?: readonly string[];
  /** Keys (header, query, body, cookie, session) that look secret. */
  keyPattern?: RegExp;
}

/** What a hidden value is replaced with. */
export const REDACTED = '[redacted]';

const DEFAULT_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie'];
/** The profiler's own headers: their "token" is a profile's name, not a secret. */
const DEBUG_HEADERS: ReadonlySet<string> = new Set(['x-debug-token', 'x-previous-debug-token', 'x-debug-token-link']);
const DEFAULT_KEY_PATTERN = /pass(?:word|wd|phrase)?|secret|token|api[-_]?key|auth|credential|private[-_]?key|signature|session[-_]?id|csrf|xsrf|otp|pin$/i;

/** How much of a value a copy keeps. */
interface CopyLimits {
  depth: number;
  items: number;
  chars: number;
}

/** Values from code (attributes, log context, session): bounded, they can be anything. */
const BOUNDED: CopyLimits = { depth: 8, items: 100, chars: 10_000 };
/** A JSON body, already capped in bytes: shown whole. */
const WHOLE: CopyLimits = { depth: 64, items: Infinity, chars: Infinity };

/** Distinct keys whose verdict is remembered; the cache starts over beyond it. */
const VERDICT_CACHE_SIZE = 2048;

/** Hides secrets before a profile is stored: sensitive headers, and any key that looks secret. */
export class Redactor {
  readonly #headers: ReadonlySet<string>;
  readonly #keyPattern: RegExp;
  /** Verdicts of isSecretKey: the same few header and parameter names come back on every request. */
  readonly #verdicts = new Map<string, boolean>();
  /** Header names as given -> lower-case name and whether its value is hidden. */
  readonly #headerVerdicts = new Map<string, { lower: string; hidden: boolean }>();

  constructor(options: RedactionOptions = {}) {
    this.#headers = new Set((options.headers ?? DEFAULT_HEADERS).map((name) => name.toLowerCase()));
    this.#keyPattern = options.keyPattern ?? DEFAULT_KEY_PATTERN;
  }

  /** Whether a key (query parameter, body field, cookie, header...) looks secret. */
  isSecretKey(key: string): boolean {
    let verdict = this.#verdicts.get(key);
    if (verdict === undefined) {
      verdict = this.#keyPattern.test(key);
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
      let verdict = this.#headerVerdicts.get(name);
      if (verdict === undefined) {
        const lower = name.toLowerCase();
        verdict = { lower, hidden: this.#headers.has(lower) || (!DEBUG_HEADERS.has(lower) && this.isSecretKey(lower)) };
        if (this.#headerVerdicts.size >= VERDICT_CACHE_SIZE) this.#headerVerdicts.clear();
        this.#headerVerdicts.set(name, verdict);
      }
      out[verdict.lower] = verdict.hidden ? REDACTED : typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : String(value);
    }
    return out;
  }

  /**
   * A JSON-safe copy of any value with secrets hidden, in one pass: values under secret-looking
   * keys replaced, `key=value` pairs in strings redacted; functions by name, errors by class and
   * message, Maps as objects, cycles cut, size bounded (100 items per level, 8 levels, 10,000
   * characters per string).
   */
  value(value: unknown): unknown {
    return this.#copy(value, 0, [], BOUNDED);
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
    if (value instanceof Error) return { class: value.constructor.name, message: this.text(value.message) };
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
    path.push(object);
    try {
      if (Array.isArray(value)) {
        const out: unknown[] = [];
        for (let i = 0; i < value.length && i < limits.items; i++) out.push(this.#copy(value[i], depth + 1, path, limits));
        return out;
      }
      const out: Record<string, unknown> = {};
      let count = 0;
      if (value instanceof Map) {
        for (const [key, inner] of value) {
          if (count++ >= limits.items) break;
          const name = String(key);
          out[name] = this.isSecretKey(name) ? REDACTED : this.#copy(inner, depth + 1, path, limits);
        }
        return out;
      }
      for (const key in object) {
        if (!Object.hasOwn(object, key)) continue;
        if (count++ >= limits.items) break;
        out[key] = this.isSecretKey(key) ? REDACTED : this.#copy((object as Record<string, unknown>)[key], depth + 1, path, limits);
      }
      return out;
    } finally {
      path.pop();
    }
  }

  /** Free text (a log message, a URL in a log context) with `secret=value` pairs hidden. */
  text(text: string): string {
    if (text.indexOf('=') === -1) return text;
    return text.replace(/([?&;]|^)([^=&#?\s"']+)=([^&#\s"']*)/g, (pair, lead: string, key: string) => (this.isSecretKey(decodeSafe(key)) ? `${lead}${key}=${REDACTED}` : pair));
  }

  /** Query parameters as a record, secret ones hidden. */
  searchParams(params: URLSearchParams): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    for (const key of new Set(params.keys())) {
      const values = params.getAll(key);
      out[key] = this.isSecretKey(key) ? REDACTED : values.length === 1 ? values[0]! : values;
    }
    return out;
  }

  /** A URL with the values of secret query parameters hidden. */
  url(url: string): string {
    const q = url.indexOf('?');
    if (q === -1) return url;
    const params = new URLSearchParams(url.slice(q + 1));
    let changed = false;
    for (const key of new Set(params.keys())) {
      if (this.isSecretKey(key)) {
        params.set(key, REDACTED);
        changed = true;
      }
    }
    return changed ? `${url.slice(0, q)}?${params.toString()}` : url;
  }

  /** A body as text with secrets hidden: JSON and form bodies field by field; anything else as it is. */
  body(text: string, contentType: string): string {
    if (contentType === 'application/json' || contentType.endsWith('+json')) {
      try {
        return JSON.stringify(this.#copy(JSON.parse(text), 0, [], WHOLE), null, 2);
      } catch {
        return text;
      }
    }
    if (contentType === 'application/x-www-form-urlencoded') {
      const params = new URLSearchParams(text);
      for (const key of new Set(params.keys())) if (this.isSecretKey(key)) params.set(key, REDACTED);
      return params.toString();
    }
    return text;
  }
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
