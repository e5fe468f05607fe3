/**
 * Stack frames of compiled JavaScript mapped back to their sources (`.ts` files and lines) through
 * the `.js.map` files next to them, for the debug page when node runs without source maps.
 *
 * With `--enable-source-maps` V8 names the sources itself. Without it (an embedder's `node app.js`),
 * frames name `dist/*.js`, and `process.setSourceMapsEnabled(true)` does not help once the
 * modules are loaded: node only reads the maps of modules loaded after it. So any frame that still
 * names a `.js` file is looked up, whether source maps are on or not. This reads a map the
 * first time a frame points into its file (a `sourceMappingURL` comment naming a file beside it;
 * `data:` URLs and maps over MAX_MAP_BYTES are not read) and keeps the last MAP_CACHE_FILES.
 * Debug pages only: it reads files synchronously.
 */
import { closeSync, openSync, readFileSync, readSync, statSync, type Stats } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FileCache } from '../fs/file-cache.js';
import type { StackFrame } from './stack-frames.js';

/** Maps larger than this are never read. */
export const MAX_MAP_BYTES = 5 * 1024 * 1024;
/** How many files' maps (or their absence) are kept. */
export const MAP_CACHE_FILES = 100;
/** Only the end of a compiled file is searched for its sourceMappingURL comment. */
const TAIL_BYTES = 4096;

const SOURCE_MAPPING_URL = /\/\/[#@] sourceMappingURL=([^\s'"]+)\s*$/;

interface LoadedMap {
  map: SourceMap;
  /** The URL its sources are relative to. */
  base: string;
}

/** Per compiled file, its map, or null when it has none we read. */
const mapCache = new FileCache<LoadedMap | null>(MAP_CACHE_FILES);

/**
 * `frame` with its file, line and column those of the source its compiled position comes from,
 * or `frame` itself when its file has no readable map or the map does not cover that position.
 * Never throws.
 */
export function mapFrameToSource(frame: StackFrame): StackFrame {
  try {
    const file = frame.file;
    if (file === null || frame.line === null || !/\.[cm]?js$/.test(file) || !isAbsolute(file)) return frame;
    const cached = mapCache.get(file, loadMap);
    if (cached === undefined || cached === null) return frame;
    const line = frame.line - 1;
    const entry = cached.map.findEntry(line, (frame.column ?? 1) - 1) as {
      generatedLine?: number;
      originalSource?: string;
      originalLine?: number;
      originalColumn?: number;
    };
    // findEntry gives the nearest mapping before the position, which may be on an earlier line.
    if (entry.originalSource === undefined || entry.generatedLine !== line || entry.originalLine === undefined) return frame;
    const source = new URL(entry.originalSource, cached.base);
    if (source.protocol !== 'file:') return frame;
    return { ...frame, file: fileURLToPath(source), line: entry.originalLine + 1, column: (entry.originalColumn ?? 0) + 1 };
  } catch {
    return frame;
  }
}

function loadMap(file: string, stats: Stats): LoadedMap | null {
  const mapPath = mapPathOf(file, stats.size);
  if (mapPath === null) return null;
  const mapStats = statSync(mapPath, { throwIfNoEntry: false });
  if (!mapStats?.isFile() || mapStats.size > MAX_MAP_BYTES) return null;
  const payload = JSON.parse(readFileSync(mapPath, 'utf8')) as { sourceRoot?: string };
  const mapUrl = pathToFileURL(mapPath).href;
  const root = payload.sourceRoot;
  return {
    map: new SourceMap(payload as ConstructorParameters<typeof SourceMap>[0]),
    base: root ? new URL(root.endsWith('/') ? root : `${root}/`, mapUrl).href : mapUrl,
  };
}

/** The map file a compiled file names in its last lines, when it is a file beside it (not a data: or remote URL). */
function mapPathOf(file: string, size: number): string | null {
  const tail = readTail(file, size);
  const url = SOURCE_MAPPING_URL.exec(tail)?.[1];
  if (url === undefined || /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('/')) return null;
  return join(dirname(file), decodeURIComponent(url));
}

function readTail(file: string, size: number): string {
  const length = Math.min(size, TAIL_BYTES);
  const buffer = Buffer.alloc(length);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, length, size - length);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8').trimEnd();
}

/** Empties the cache (tests). */
export function clearSourceMapCache(): void {
  mapCache.clear();
}
