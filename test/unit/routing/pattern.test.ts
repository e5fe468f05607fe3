// cannotMatch: whether a requirement can never match a `/` (then the tree reads the parameter up
// to the next `/`; otherwise a regex matches the rest of the path). A wrong `true` would make
// routes miss paths their requirement accepts; a wrong `false` only costs speed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cannotMatch } from '../../../lib/routing/pattern.js';

const cases: Array<[source: string, expected: boolean]> = [
  ['\\d+', true],
  ['[a-z0-9-]+', true],
  ['[\\w-]+', true],
  ['[^/]+', true],
  ['[^\\/]+', true],
  ['[^a-z/]+', true],
  ['[^-/]+', true],
  ['[^.-0]', true],
  ['[]', true],
  ['en|fr|de', true],
  ['(?:v\\d+)?', true],
  ['.+', false],
  ['[^a-z]+', false],
  ['[^]', false],
  ['[.-0]', false],
  ['[\\--0]', false],
  ['[.-\\/]', false],
  ['[\\/]', false],
  ['a/b', false],
  ['a\\/b', false],
  ['\\x2f', false],
  ['\\u002f', false],
  ['[\\x2f]', false],
  ['[^\\x2f]', false],
  ['\\S+', false],
  ['\\W', false],
  ['[\\D]', false],
  ['\\p{L}+', false],
  ['[a-z', false],
];

test('cannotMatch: what it knows a requirement never matches a "/" in, and where it is unsure', () => {
  for (const [source, expected] of cases) assert.is(cannotMatch(source, '/'), expected, source);
});

test('cannotMatch never says "cannot" of a requirement the regex engine lets match a "/"', () => {
  const alphabet = ['a', 'Z', '0', '-', '.', '/', ' ', 'é'];
  const strings: string[] = [''];
  for (let length = 1; length <= 3; length++) {
    for (const prefix of strings.filter((s) => s.length === length - 1)) for (const char of alphabet) strings.push(prefix + char);
  }
  for (const [source] of cases) {
    if (!cannotMatch(source, '/')) continue;
    const regex = new RegExp(`^(?:${source})$`, 'u');
    const offender = strings.find((text) => text.includes('/') && regex.test(text));
    assert.is(offender, undefined, `${source} matches ${JSON.stringify(offender)}`);
  }
});

test('the same for another character: "." in a dot-delimited host pattern', () => {
  assert.ok(cannotMatch('[a-z0-9-]+', '.'));
  assert.not.ok(cannotMatch('[\\w.]+', '.'));
  assert.not.ok(cannotMatch('[^-]+', '.'));
  assert.ok(cannotMatch('[^.]+', '.'));
});

test.run();
