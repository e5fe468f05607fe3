/**
 * V8 stack traces as data, and the source lines around a frame for the debug page.
 * With source maps enabled (`--enable-source-maps` or `process.setSourceMapsEnabled(true)`)
 * V8 already names the original `.ts` files and lines, so nothing here reads source maps.
 */
import { readFileSync, type Stats } from 'node:fs';
import { FileCache } from '../fs/file-cache.js';
import { extname, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One call site of a stack trace. */
export interface StackFrame {
  /** `Foo.bar`, `new Foo`, `async handle`; null for anonymous code. */
  function: string | null;
  /** An absolute path (file URLs are turned into paths), `node:...`, or another script name; null when V8 gives none. */
  file: string | null;
  line: number | null;
  column: number | null;
  /** V8 built-in code (`at native`). */
  native: boolean;
  /** Not the application's code: Node's own modules, node_modules, built-ins. */
  internal: boolean;
}

/** Lines of a source file around one line, for showing where a frame points. */
export interface SourceExcerpt {
  /** Number (1-based) of the first line in `lines`. */
  start: number;
  lines: string[];
  /** Number (1-based) of the line the frame points to. */
  highlight: number;
  /** When the file was last modified, epoch milliseconds: a later time than the error's means the lines may have moved since. */
  modifiedMs: number;
}

const frameLine = /^\s*at\s+(.*)$/;
const positionAtEnd = /^(.*):(\d+):(\d+)$/;
const lineAtEnd = /^(.*):(\d+)$/;
// `eval at outer (eval at inner (/app/x.js:1:2), <anonymous>:1:1)`: the innermost parentheses name the real file.
const evalOrigin = /\(([^()]*)\)/;

/**
 * Parses the frames of a V8 `error.stack`. `header` is the `Name: message` text the stack starts with,
 * when known: skipping it exactly keeps a message that contains "    at ..." lines from posing as frames.
 * At most `limit` frames are parsed, the first ones (a stack of 300,000 frames costs its split, not 300,000 parses).
 */
export function parseStack(stack: string, header?: string, limit = Infinity): StackFrame[] {
  let body = stack;
  if (header !== undefined && header !== '' && stack.startsWith(header)) body = stack.slice(header.length);
  const lines = body.split(/\r?\n/);
  // Frames are the last block of "at" lines; anything before belongs to the (possibly multi-line) message.
  let first = lines.length;
  while (first > 0 && (frameLine.test(lines[first - 1]!) || lines[first - 1]!.trim() === '')) first--;
  const frames: StackFrame[] = [];
  for (let i = first; i < lines.length && frames.length < limit; i++) {
    const match = frameLine.exec(lines[i]!);
    if (match) frames.push(parseFrame(match[1]!.trim()));
  }
  return frames;
}

/** Parses one frame's text, the part after `at `. */
export function parseFrame(text: string): StackFrame {
  let fn: string | null = null;
  let location = text;
  // `fn (location)`: the function ends at the first " (" (a location may hold more, as eval origins do).
  // Found with indexOf: a lazy regex for it took quadratic time on a line of many " (".
  const open = text.endsWith(')') ? text.indexOf(' (') : -1;
  if (open !== -1) {
    fn = text.slice(0, open);
    location = text.slice(open + 2, -1);
  } else if (text.startsWith('async ')) {
    location = text.slice('async '.length);
  }
  if (fn === '<anonymous>' || fn === '') fn = null;

  if (location.startsWith('eval at ')) location = evalOrigin.exec(location)?.[1] ?? '<anonymous>';

  if (location === 'native') return frame(fn, null, null, null, true);
  if (location === '<anonymous>' || /^index \d+$/.test(location)) return frame(fn, null, null, null, false);

  let file = location;
  let line: number | null = null;
  let column: number | null = null;
  const position = positionAtEnd.exec(location) ?? lineAtEnd.exec(location);
  if (position) {
    file = position[1]!;
    line = Number(position[2]);
    column = position[3] === undefined ? null : Number(position[3]);
  }
  return frame(fn, toPath(file), line, column, false);
}

function frame(fn: string | null, file: string | null, line: number | null, column: number | null, native: boolean): StackFrame {
  return { function: fn, file, line, column, native, internal: native || isInternalFile(file) };
}

function toPath(file: string): string {
  if (!file.startsWith('file://')) return file;
  try {
    return fileURLToPath(file);
  } catch {
    return file;
  }
}

/** True for code that is not the application's: `node:` modules, node_modules, and frames without a file. */
export function isInternalFile(file: string | null): boolean {
  if (file === null || file === '') return true;
  return (
    file.startsWith('node:') ||
    file.startsWith('internal/') ||
    file.includes('/node_modules/') ||
    file.includes('\\node_modules\\')
  );
}

/** Files larger than this are never read for excerpts. */
export const MAX_SOURCE_BYTES = 1024 * 1024;
/** How many files the excerpt cache keeps. */
export const SOURCE_CACHE_FILES = 50;
/** Longer lines are cut in excerpts (minified code would otherwise swamp the page). */
const MAX_LINE_LENGTH = 500;

/**
 * What an excerpt may be read from: JavaScript and TypeScript sources. A stack is text anyone may
 * set (`error.stack = ...`), so a frame naming `/etc/passwd` or `.env` must not put that file on a page.
 */
const SOURCE_EXTENSIONS = new Set(['.js', '.mjs', '.cjs', '.jsx', '.ts', '.mts', '.cts', '.tsx']);

/** A source file's lines, and when it was last modified. */
interface SourceFile {
  lines: string[];
  modifiedMs: number;
}

const sourceCache = new FileCache<SourceFile | null>(SOURCE_CACHE_FILES);

/**
 * Reads `around` lines either side of `line` from a source file, or null when that is not possible:
 * not an absolute path or file URL, not a JavaScript or TypeScript source (by its extension), missing,
 * not a regular file, larger than 1 MB, binary, or no such line.
 * Never throws. Reads synchronously: this runs only while rendering a debug page.
 */
export function readSourceExcerpt(file: string, line: number, around = 5): SourceExcerpt | null {
  try {
    if (!Number.isInteger(line) || line < 1) return null;
    const path = file.startsWith('file://') ? fileURLToPath(file) : file;
    if (!isAbsolute(path) || !SOURCE_EXTENSIONS.has(extname(path).toLowerCase())) return null;
    const source = sourceCache.get(path, readSource) ?? null;
    if (source === null || line > source.lines.length) return null;
    const { lines, modifiedMs } = source;
    const span = Math.max(0, Math.floor(Number.isFinite(around) ? around : 5));
    const start = Math.max(1, line - span);
    const end = Math.min(lines.length, line + span);
    return { start, lines: lines.slice(start - 1, end), highlight: line, modifiedMs };
  } catch {
    return null;
  }
}

// Larger files and binary ones have no lines to show (kept as null, so they are not read again).
function readSource(path: string, stats: Stats): SourceFile | null {
  if (stats.size > MAX_SOURCE_BYTES) return null;
  const content = readFileSync(path);
  if (content.length > MAX_SOURCE_BYTES || content.includes(0)) return null;
  const lines = content
    .toString('utf8')
    .split(/\r\n|\r|\n/)
    .map((text) => (text.length > MAX_LINE_LENGTH ? `${text.slice(0, MAX_LINE_LENGTH)}…` : text));
  return { lines, modifiedMs: stats.mtimeMs };
}

/** Empties the excerpt cache (tests, or after files changed in a way mtime and size do not show). */
export function clearSourceCache(): void {
  sourceCache.clear();
}

/** How many files the excerpt cache holds now; for tests of its bound. */
export function sourceCacheSize(): number {
  return sourceCache.size;
}
