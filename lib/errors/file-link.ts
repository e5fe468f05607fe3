// Links from a stack frame's file and line to the developer's editor, as Symfony's `framework.ide`
// makes them on its exception pages and profiler: a URL format with %f (the file's absolute path)
// and %l (the line), or the name of an editor whose URL scheme opens a file at a line.
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeValue } from '../../kernel/describe-value.js';

/** URL formats of editors that open a file at a line, by the name `ide` takes. */
export const EDITOR_LINK_FORMATS: Readonly<Record<string, string>> = {
  vscode: 'vscode://file/%f:%l',
  'vscode-insiders': 'vscode-insiders://file/%f:%l',
  cursor: 'cursor://file/%f:%l',
  windsurf: 'windsurf://file/%f:%l',
  zed: 'zed://file/%f:%l',
  webstorm: 'webstorm://open?file=%f&line=%l',
  idea: 'idea://open?file=%f&line=%l',
  phpstorm: 'phpstorm://open?file=%f&line=%l',
  sublime: 'subl://open?url=file://%f&line=%l',
  textmate: 'txmt://open?url=file://%f&line=%l',
  macvim: 'mvim://open?url=file://%f&line=%l',
  emacs: 'emacs://open?url=file://%f&line=%l',
};

/** The editor URL of a frame's file and line; null for a frame that names no file on disk. */
export type FileLinker = (file: string, line: number | null) => string | null;

/** URL schemes that run code in the page rather than open an editor. */
const SCRIPTING_SCHEMES = new Set(['javascript', 'vbscript', 'data', 'blob']);
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

/**
 * A linker for `ide`: an editor's name (see EDITOR_LINK_FORMATS) or a URL format with `%f` and
 * optionally `%l`; null when `ide` is undefined or empty. Throws a TypeError for anything else:
 * a format without a scheme, with a scripting one (`javascript:`), or without `%f`.
 */
export function createFileLinker(ide: string | null | undefined): FileLinker | null {
  if (ide === undefined || ide === null) return null;
  // Typed, but called from JavaScript too: a number or an object is no editor, said as such rather than as `ide.trim is not a function`.
  if (typeof ide !== 'string') throw new TypeError(`ide must be an editor's name or a URL format (a string), not ${describeValue(ide)}.`);
  if (ide.trim() === '') return null;
  const name = ide.trim().toLowerCase();
  // Own entries only: `constructor`, `toString` or `__proto__` would find Object.prototype's member, a function or an object, no format.
  const format = Object.hasOwn(EDITOR_LINK_FORMATS, name) ? EDITOR_LINK_FORMATS[name]! : ide.trim();
  const scheme = SCHEME.exec(format)?.[1]?.toLowerCase();
  if (scheme === undefined || SCRIPTING_SCHEMES.has(scheme) || !format.includes('%f')) {
    throw new TypeError(
      `ide must be an editor (${Object.keys(EDITOR_LINK_FORMATS).join(', ')}) or a URL format with %f for the file and %l for the line, such as "vscode://file/%f:%l", not ${JSON.stringify(ide)}.`,
    );
  }
  return (file, line) => {
    const path = diskPath(file);
    const encoded = path === null ? null : encodePath(path);
    if (encoded === null) return null;
    // One pass, so that a `%l` in the path is not taken for the line.
    return format.replace(/%[fl]/g, (placeholder) => (placeholder === '%f' ? encoded : line === null ? '1' : String(line)));
  };
}

/** The absolute path of a frame's file (a path, or a file: URL), or null (`node:internal/...`, a relative name). */
function diskPath(file: string): string | null {
  if (file.startsWith('file:')) {
    try {
      return fileURLToPath(file);
    } catch {
      return null;
    }
  }
  return isAbsolute(file) ? file : null;
}

/**
 * The path as a URL keeps it: `/` and `:` as they are, Windows' `\` as `/`, what would end or split
 * the URL encoded. null for a path with a lone surrogate (a forged stack names any text), which no URL holds.
 */
function encodePath(path: string): string | null {
  try {
    return encodeURI(path.replaceAll('\\', '/')).replace(/[?#&]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
  } catch {
    return null;
  }
}
