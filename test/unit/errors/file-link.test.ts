import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EDITOR_LINK_FORMATS, createFileLinker } from '../../../lib/errors/file-link.js';
import { thrown } from '../helpers.js';

test('an editor by name links a file and line with its URL scheme', () => {
  assert.is(createFileLinker('vscode')!('/app/lib/router.ts', 41), 'vscode://file//app/lib/router.ts:41');
  assert.is(createFileLinker('WebStorm')!('/app/lib/router.ts', 41), 'webstorm://open?file=/app/lib/router.ts&line=41');
  assert.is(createFileLinker(' cursor ')!('/app/x.ts', 2), 'cursor://file//app/x.ts:2');
  for (const [name, format] of Object.entries(EDITOR_LINK_FORMATS)) {
    const link = createFileLinker(name)!('/a/b.ts', 3);
    assert.is(link, format.replace('%f', '/a/b.ts').replace('%l', '3'), name);
  }
});

test('a format of its own: %f is the absolute path, %l the line (1 when unknown), each replaced once', () => {
  const link = createFileLinker('myeditor://open?path=%f&at=%l')!;
  assert.is(link('/srv/app/main.ts', 7), 'myeditor://open?path=/srv/app/main.ts&at=7');
  assert.is(link('/srv/app/main.ts', null), 'myeditor://open?path=/srv/app/main.ts&at=1');
  // A `%l` inside the path is the path's, not the line.
  assert.is(link('/srv/%l/main.ts', 7), 'myeditor://open?path=/srv/%25l/main.ts&at=7');
});

test('file: URLs are links to their path; frames with no file on disk have none', () => {
  const link = createFileLinker('vscode')!;
  assert.is(link('file:///app/lib/x.ts', 5), 'vscode://file//app/lib/x.ts:5');
  assert.is(link('node:internal/process/task_queues', 95), null);
  assert.is(link('relative/file.ts', 1), null);
  assert.is(link('file://host-name/x.ts', 1), null);
  assert.is(link('evalmachine.<anonymous>', 1), null);
});

test('a path cannot end or split the URL: spaces, ?, # and & are encoded, quotes too', () => {
  const link = createFileLinker('phpstorm')!;
  assert.is(link('/home/me/my app/a#b?c&d.ts', 1), 'phpstorm://open?file=/home/me/my%20app/a%23b%3Fc%26d.ts&line=1');
  assert.not.match(link('/x/"onmouseover=alert(1)".ts', 1)!, '"');
  // A forged stack may name a path with a lone surrogate, which no URL can hold: no link, no error.
  assert.is(link('/x/\ud800.ts', 1), null);
});

test('no ide, no links; a format that names no scheme, a scripting scheme or no %f is a TypeError that says what to give', () => {
  assert.is(createFileLinker(undefined), null);
  assert.is(createFileLinker(''), null);
  assert.is(createFileLinker('  '), null);
  for (const bad of ['notepad', '/usr/bin/code %f', 'javascript:alert(%f)', 'JavaScript:x(%f)', 'data:text/html,%f', 'vscode://file/']) {
    const error = thrown(() => createFileLinker(bad));
    assert.instance(error, TypeError, bad);
    assert.match(error.message, /^ide must be an editor \(vscode, .*\) or a URL format with %f for the file and %l for the line, such as "vscode:\/\/file\/%f:%l", not /, bad);
  }
});

const NOT_AN_EDITOR = /^ide must be an editor \(vscode, .*\) or a URL format with %f for the file and %l for the line, such as "vscode:\/\/file\/%f:%l", not /;

test('a name of Object.prototype\'s (constructor, toString, __proto__), in any case, is no editor: the TypeError that says what to give', () => {
  for (const name of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', '__defineGetter__', ' Constructor ', '__PROTO__']) {
    const error = thrown(() => createFileLinker(name));
    assert.instance(error, TypeError, name);
    assert.match(error.message, NOT_AN_EDITOR, name);
    assert.ok(error.message.endsWith(`not ${JSON.stringify(name)}.`), name);
  }
});

test('an editor is one of EDITOR_LINK_FORMATS\' own: a format inherited from Object.prototype is none', () => {
  // What a polluted prototype would offer: a URL format that passes every other check.
  Object.defineProperty(Object.prototype, 'inheritededitor', { value: 'vscode://file/%f:%l', configurable: true, writable: true });
  try {
    const error = thrown(() => createFileLinker('inheritededitor'));
    assert.instance(error, TypeError);
    assert.match(error.message, NOT_AN_EDITOR);
  } finally {
    delete (Object.prototype as Record<string, unknown>)['inheritededitor'];
  }
});

test('createFileLinker refuses an ide that is no string by its type, not with a TypeError of its own code', () => {
  for (const ide of [42, {}, ['vscode'], true]) {
    assert.throws(() => createFileLinker(ide as unknown as string), (error: unknown) => error instanceof TypeError && /^ide must be an editor's name or a URL format \(a string\), not /.test(error.message), String(ide));
  }
  assert.is(createFileLinker(undefined), null);
  assert.is(createFileLinker(null), null);
});

test.run();
