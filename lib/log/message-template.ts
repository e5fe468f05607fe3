// The templates of log messages, split once: kept apart from logger.ts so that its probe for tests
// (templateCacheChars) is no export of `http-kernel/log`.

import { stringCopy } from '../../kernel/string-copy.js';

/** Messages are constants: each is split once into [text, key, text, key, ..., text]. */
const templates = new Map<string, readonly string[]>();
const TEMPLATE_CACHE_SIZE = 1024;
/**
 * Longest message whose template is kept: constants are short, and a message with a request's
 * body written into it (`Invalid payload: ${text}`, JSON and its braces) is seldom seen twice;
 * 1,024 of 100 KB bodies held 100 MB, of 1 MiB ones a gigabyte.
 */
const TEMPLATE_MESSAGE_CHARS = 1024;
const PLACEHOLDER = /\{([A-Za-z0-9_.]+)\}/g;

export function templateOf(message: string): readonly string[] {
  let template = templates.get(message);
  if (template === undefined) {
    // A message cut from a request body (`body.slice(0, 200)`) kept the whole body alive.
    if (message.length <= TEMPLATE_MESSAGE_CHARS) message = stringCopy(message);
    const parts: string[] = [];
    let last = 0;
    for (const match of message.matchAll(PLACEHOLDER)) {
      parts.push(message.slice(last, match.index), match[1]!);
      last = match.index + match[0].length;
    }
    parts.push(message.slice(last));
    template = parts;
    if (message.length > TEMPLATE_MESSAGE_CHARS) return template;
    // Messages built at run time (not constants) must not grow the cache without bound.
    if (templates.size >= TEMPLATE_CACHE_SIZE) templates.clear();
    templates.set(message, template);
  }
  return template;
}

/** Characters of the messages whose templates are kept now; for tests of its bound. */
export function templateCacheChars(): number {
  let chars = 0;
  for (const message of templates.keys()) chars += message.length;
  return chars;
}
