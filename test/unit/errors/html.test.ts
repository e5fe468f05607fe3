import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { elideMiddle, escapeHtml, html, renderElided, SafeHtml, unsafeRaw } from '../../../lib/errors/html.js';

test('escapeHtml escapes & < > " and \'', () => {
  assert.is(escapeHtml(`a & b < c > d " e ' f`), 'a &amp; b &lt; c &gt; d &quot; e &#39; f');
});

test('escapeHtml shows control characters as their pictures, which a browser would not show at all (an escape sequence, a NUL), and keeps tab, LF and CR', () => {
  assert.is(escapeHtml('a\u001b[31mred\u0000\u0001\u007f'), 'a\u241b[31mred\u2400\u2401\u2421');
  assert.is(escapeHtml('line 1\r\n\tline 2'), 'line 1\r\n\tline 2');
  assert.is(html`<div class="message">${'x\u0008 < y'}</div>`.toString(), '<div class="message">x\u2408 &lt; y</div>');
});

test('escapeHtml returns text without special characters unchanged', () => {
  assert.is(escapeHtml('plain text 123'), 'plain text 123');
});

test('html escapes every interpolated string', () => {
  const message = '<script>alert("x")</script>';
  assert.is(html`<p>${message}</p>`.toString(), '<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</p>');
});

test('html escapes interpolations inside attribute values', () => {
  const url = `/x" onmouseover='alert(1)`;
  assert.is(html`<a href="${url}">x</a>`.toString(), '<a href="/x&quot; onmouseover=&#39;alert(1)">x</a>');
});

test('html keeps the literal parts of the template as markup', () => {
  assert.is(html`<b class="a">&nbsp;</b>`.toString(), '<b class="a">&nbsp;</b>');
});

test('html does not escape a nested html template twice', () => {
  const inner = html`<i>${'a&b'}</i>`;
  assert.is(html`<p>${inner}</p>`.toString(), '<p><i>a&amp;b</i></p>');
});

test('html renders arrays item by item, escaping strings and keeping SafeHtml', () => {
  const items = ['<a>', html`<br>`, ['&', html`<hr>`]];
  assert.is(html`${items}`.toString(), '&lt;a&gt;<br>&amp;<hr>');
});

test('html renders null, undefined and false as nothing, but 0 and true as text', () => {
  assert.is(html`[${null}${undefined}${false}]`.toString(), '[]');
  assert.is(html`[${0}|${true}|${10n}]`.toString(), '[0|true|10]');
});

test('unsafeRaw is the only way to pass markup through unescaped', () => {
  assert.is(html`${unsafeRaw('<em>x</em>')}`.toString(), '<em>x</em>');
  assert.instance(unsafeRaw('x'), SafeHtml);
});

test('SafeHtml cannot be constructed directly from a string', () => {
  assert.throws(() => new SafeHtml(Symbol('forged'), '<script>'), /html`/);
});

test('elideMiddle counts code points, not UTF-16 units: text of at most max characters is kept whole however many surrogate pairs it has', () => {
  assert.is(elideMiddle('😀'.repeat(6), 10), '😀'.repeat(6));
  assert.is(elideMiddle('😀'.repeat(10), 10), '😀'.repeat(10));
  assert.is(elideMiddle('😀'.repeat(11), 10), `${'😀'.repeat(6)}…${'😀'.repeat(3)}`);
});

test('elideMiddle gives the tail a third of what is left after the ellipsis, rounded down, and the head the rest', () => {
  assert.is(elideMiddle('abcdefghijklmnopqrstuvwxyz', 11), 'abcdefg…xyz');
  assert.is(elideMiddle('abcdefghijklmnopqrstuvwxyz', 13), 'abcdefgh…wxyz');
});

test('renderElided shows short text escaped as it is, and long text cut with the whole of it escaped in the title of its span', () => {
  assert.is(renderElided('<b>"short"</b>', 20).toString(), '&lt;b&gt;&quot;short&quot;&lt;/b&gt;');
  assert.is(renderElided('', 20).toString(), '');
  assert.is(
    renderElided('<script>alert("x")</script>', 10).toString(),
    '<span class="elided" title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;">&lt;scrip…pt&gt;</span>',
  );
});

test.run();
