import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { jsonNumber, jsonString, jsonStringOrNull, jsonValue } from '../../../lib/profiler/json.js';

const test = suite('profiler JSON helpers');

test('strings come out exactly as JSON.stringify writes them', () => {
  const samples = ['', 'plain', 'quote " inside', 'back\\slash', 'line\nbreak', 'tab\t', '\u0000\u001f', 'é ü 日本', 'emoji 😀', 'lone \ud800 surrogate', '\udfff', '</script>', '\u2028\u2029'];
  for (const sample of samples) assert.is(jsonString(sample), JSON.stringify(sample), sample);
});

test('null and numbers as JSON has them; anything that is not a string is serialised, not coerced', () => {
  assert.is(jsonStringOrNull(null), 'null');
  assert.is(jsonStringOrNull(undefined), 'null');
  assert.is(jsonNumber(1.5), '1.5');
  assert.is(jsonNumber(-0), '0');
  assert.is(jsonNumber(Infinity), 'null');
  assert.is(jsonNumber(Number.NaN), 'null');
  assert.is(jsonString({ a: 1 } as unknown as string), '{"a":1}');
  assert.is(jsonValue(undefined), 'null');
  assert.is(jsonValue({ a: [1, 'x'], b: undefined }), '{"a":[1,"x"]}');
});

test.run();
