/**
 * The one way we build HTML: a tagged template that escapes every interpolation,
 * so a message, URL or log line can never become markup by accident.
 */

const trusted = Symbol('SafeHtml');

/** A string of HTML that is safe to send as is; made only by `html` and `unsafeRaw`. */
export class SafeHtml {
  readonly #value: string;

  /** @internal Use the `html` template or `unsafeRaw()`; the token keeps `new` out of reach. */
  constructor(token: symbol, value: string) {
    if (token !== trusted) throw new TypeError('SafeHtml is made with html`...` or unsafeRaw(), not with new');
    this.#value = value;
  }

  toString(): string {
    return this.#value;
  }
}

/** What may appear inside `${...}` of the `html` template. */
export type HtmlValue = SafeHtml | string | number | bigint | boolean | null | undefined | readonly HtmlValue[];

// Control characters but tab, LF and CR: a browser shows none of them (an escape sequence of a log line
// would read `[31m`, a NUL is dropped), so a message or value would read other than it is.
const specialCharacters = /[&<>"'\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const specialCharactersGlobal = /[&<>"'\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;
const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Its picture (Unicode's Control Pictures: `␛` for ESC, `␀` for NUL, `␡` for DEL). */
function controlPicture(character: string): string {
  const code = character.charCodeAt(0);
  return String.fromCharCode(code === 0x7f ? 0x2421 : 0x2400 + code);
}

/** Escapes `& < > " '` so text is safe in element content and quoted attribute values, and shows control characters (but tab, LF, CR) as their pictures. */
export function escapeHtml(text: string): string {
  // Most strings need no escaping; testing first avoids building a copy for them.
  if (!specialCharacters.test(text)) return text;
  return text.replace(specialCharactersGlobal, (character) => entities[character] ?? controlPicture(character));
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.toString();
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) {
    let out = '';
    for (const item of value as readonly HtmlValue[]) out += render(item);
    return out;
  }
  return escapeHtml(String(value));
}

/** Tagged template: literal parts are kept, every `${value}` is escaped unless it is already SafeHtml. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(trusted, out);
}

/** Marks a string as HTML without escaping it. Only for markup we wrote ourselves; grep for it in reviews. */
export function unsafeRaw(markup: string): SafeHtml {
  return new SafeHtml(trusted, markup);
}

/** The text cut in its middle to at most `max` characters (code points), an ellipsis where the cut is: both ends of a URL or a message tell most. */
export function elideMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  const tail = Math.floor((max - 1) / 3);
  return `${chars.slice(0, max - 1 - tail).join('')}…${chars.slice(chars.length - tail).join('')}`;
}

/** Text of a few lines at most: a long one cut in its middle, whole in the title of its span (`elided`). */
export function renderElided(text: string, max: number): SafeHtml {
  const shown = elideMiddle(text, max);
  return shown === text ? html`${text}` : html`<span class="elided" title="${text}">${shown}</span>`;
}
