import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request } from '../../../kernel/index.js';
import { preferredMediaType, prefersJson } from '../../../lib/errors/index.js';

const FORMATS = ['text/html', 'application/json'];
const wants = (accept: string) => prefersJson(new Request('/', { headers: { accept } }));

test('application/json with a version or another parameter is JSON: ranges match on type and subtype', () => {
  for (const accept of ['application/json;v=2', 'application/json; version="2.1"', 'application/json;v=2, text/html;q=0.9', 'application/problem+json; profile="x"']) {
    assert.ok(wants(accept), accept);
  }
  assert.is(preferredMediaType('application/json;v=2', FORMATS), 'application/json');
  assert.is(preferredMediaType('text/html;level=1', FORMATS), 'text/html');
});

test('a parameter does not lift a range\'s q=0 nor its rank', () => {
  assert.not.ok(wants('application/json;v=2;q=0, */*'));
  assert.not.ok(wants('text/html, application/json;v=2;q=0.5'));
  assert.not.ok(wants('text/html;level=1, application/json;v=2'));
  assert.ok(wants('text/html;level=1;q=0.5, application/json;v=2'));
});

test('an empty q (q= or q="") is q=1, as negotiator reads a range as the client sent it, not a range refused', () => {
  assert.is(preferredMediaType('application/json;q=', FORMATS), 'application/json');
  assert.ok(wants('application/json;q=, text/html;q=0.5'));
  assert.ok(wants('text/html;q=0.5, application/json;q=""'));
  assert.ok(wants('text/html;q=0.5, application/json;v=2;q='));
});

test('charset keeps its meaning: utf-8 is the more specific match, another charset matches no offer', () => {
  assert.ok(wants('application/json; charset=utf-8'));
  assert.ok(wants('application/json;charset=UTF-8, */*;q=0.1'));
  assert.not.ok(wants('text/html; charset=utf-8, application/json;q=0.9'));
  // The specific range wins over the plain one, whatever their order.
  assert.ok(wants('application/json;q=0.1, application/json;charset=utf-8;v=2, text/html;q=0.5'));
  assert.not.ok(wants('application/json; charset=iso-8859-1, text/html;q=0.5'));
});

test('*/* and no Accept are HTML; problem+json alone is JSON; a malformed header is HTML, never a throw', () => {
  assert.not.ok(wants('*/*'));
  assert.not.ok(wants(''));
  assert.ok(wants('application/problem+json'));
  assert.ok(wants('application/*'));
  for (const accept of ['junk', ',,,', ';;', 'application/json;q="0,5"', 'application/json;charset="utf-8,x"', '"', 'a/b/c, application/json;v=2']) {
    assert.not.throws(() => wants(accept), accept);
  }
  assert.ok(wants('a/b/c, application/json;v=2'));
});

test.run();
