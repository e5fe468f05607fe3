import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request, Response } from '../../../kernel/index.js';
import { MAX_ATTRIBUTES_JSON, RequestCollector, presentRequest } from '../../../lib/profiler/collectors/index.js';
import { MAX_COLLECTOR_JSON, type Profile, type RequestData } from '../../../lib/profiler/profile.js';
import { renderRequestPanel } from '../../../lib/profiler/ui/panels/request-panel.js';
import type { PanelContext } from '../../../lib/profiler/ui/panels/panel-context.js';
import type { CollectContext } from '../../../lib/profiler/data-collector.js';
import { Redactor } from '../../../lib/profiler/redactor.js';

/** The attributes the collector keeps of an error page's sub-request. */
function attributesOf(request: Request): Record<string, unknown> {
  const context: CollectContext = { request, response: new Response('page', 500), error: undefined, requestType: 'sub', startTime: 0, startNow: 0, endNow: 0 };
  return JSON.parse(new RequestCollector(new Redactor()).lateCollect(context).json).attributes;
}

test('an error page\'s `exception` attribute that cannot be read (a Proxy whose traps throw) is "[unreadable value]", and the request is still collected', () => {
  const boom = () => {
    throw new Error('trap');
  };
  const hostile = new Proxy(new Error('hostile'), { getPrototypeOf: boom, get: boom, has: boom, ownKeys: boom, getOwnPropertyDescriptor: boom });
  const request = Request.create('/error');
  request.attributes.set('exception', hostile);
  assert.is(attributesOf(request).exception, '[unreadable value]');
  // A readable error keeps its class and message.
  request.attributes.set('exception', new TypeError('bad'));
  assert.is(attributesOf(request).exception, 'TypeError: bad');
});

test("an error page's `exception` attribute is cut at 10,000 characters, as other attributes' strings are (a 10 MB message was stored whole)", () => {
  const request = Request.create('/error');
  request.attributes.set('exception', new Error(`api_key=s3cr3t ${'x'.repeat(10 * 1024 * 1024)}`));
  assert.is(attributesOf(request).exception, `Error: api_key=[redacted] ${'x'.repeat(10_000 - 'Error: api_key=s3cr3t '.length)}…`);
});

test("an error page's `exception` attribute whose cut at 10,000 characters splits a secret in quotes hides the secret whole", () => {
  const request = Request.create('/error');
  request.attributes.set('exception', new Error(`${'x'.repeat(9_960)} password="correct horse battery staple"`));
  assert.is(attributesOf(request).exception, `Error: ${'x'.repeat(9_960)} password=[redacted]`);
});

test('a JSON body that pretty-printed would pass 256 KiB (60 levels deep) is kept compact, and the request data is kept, not left out as too large', async () => {
  const body = `${'['.repeat(60)}${Array(31_000).fill('1').join(',')}${']'.repeat(60)}`;
  const request = Request.create('/deep', 'POST', { headers: { 'content-type': 'application/json', 'x-trace': 'abc' }, body });
  await request.json();
  const context: CollectContext = { request, response: new Response('ok'), error: undefined, requestType: 'main', startTime: 0, startNow: 0, endNow: 0 };
  const json = new RequestCollector(new Redactor()).lateCollect(context).json;
  assert.ok(json.length < MAX_COLLECTOR_JSON, `${json.length} characters`);
  const data = JSON.parse(json) as { body: string; requestHeaders: Record<string, string> };
  assert.is(data.requestHeaders['x-trace'], 'abc');
  assert.is(data.body, body);
  // A body that stays within it is pretty-printed as before.
  const small = Request.create('/deep', 'POST', { headers: { 'content-type': 'application/json' }, body: '{"a":[1]}' });
  await small.json();
  assert.is(JSON.parse(new RequestCollector(new Redactor()).lateCollect({ ...context, request: small }).json).body, '{\n  "a": [\n    1\n  ]\n}');
});

test('the session a listener put in `_session_data` is collected with its secret keys redacted, and is not listed again among the attributes', () => {
  const collect = (request: Request) => {
    const context: CollectContext = { request, response: new Response('ok'), error: undefined, requestType: 'main', startTime: 0, startNow: 0, endNow: 0 };
    return JSON.parse(new RequestCollector(new Redactor()).lateCollect(context).json) as { session: unknown; attributes: Record<string, unknown> };
  };
  const request = Request.create('/cart');
  assert.is(collect(request).session, null, 'no session used');
  request.attributes.set('_session_data', { user: 'ada', cart: [3, 5], csrf_token: 'abc123', nested: { password: 'hunter2', theme: 'dark' } });
  const data = collect(request);
  assert.equal(data.session, { user: 'ada', cart: [3, 5], csrf_token: '[redacted]', nested: { password: '[redacted]', theme: 'dark' } });
  assert.not.ok('_session_data' in data.attributes);
  assert.not.ok(JSON.stringify(data).includes('hunter2'));
  // Not an object (a session id, say): no session data to show.
  request.attributes.set('_session_data', 'f00d');
  assert.is(collect(request).session, null);
});

test('a query parameter, a cookie and a JSON body field named __proto__ are collected as any other key, and set no prototype', () => {
  const request = Request.create('/x?__proto__=1&a=2', 'POST', { headers: { cookie: '__proto__=c; a=2', 'content-type': 'application/json' }, body: '{"__proto__":{"polluted":true},"a":1}' });
  const context: CollectContext = { request, response: new Response('ok'), error: undefined, requestType: 'main', startTime: 0, startNow: 0, endNow: 0 };
  const collect = () => JSON.parse(new RequestCollector(new Redactor()).lateCollect(context).json) as { query: object; cookies: object; body: string | null };
  const before = collect();
  assert.ok(Object.hasOwn(before.query, '__proto__'), 'query');
  assert.equal(Object.entries(before.query), [['__proto__', '1'], ['a', '2']]);
  assert.ok(Object.hasOwn(before.cookies, '__proto__'), 'cookies');
  assert.equal(Object.entries(before.cookies), [['__proto__', 'c'], ['a', '2']]);
  assert.is(({} as Record<string, unknown>).polluted, undefined);
});

test('a request attribute named __proto__ is collected as an own key of the attributes, and sets no prototype', () => {
  const request = Request.create('/x');
  request.attributes.set('__proto__', { polluted: '<b>attr</b>', password: 'hunter2' });
  request.attributes.set('a', 1);
  const attributes = attributesOf(request);
  assert.ok(Object.hasOwn(attributes, '__proto__'), 'an own key');
  assert.is(Object.getPrototypeOf(attributes), Object.prototype);
  assert.equal(Object.entries(attributes), [['__proto__', { polluted: '<b>attr</b>', password: '[redacted]' }], ['a', 1]]);
  assert.is(({} as Record<string, unknown>).polluted, undefined);
});

test('a JSON body field named __proto__ is kept in the collected body', async () => {
  const request = Request.create('/x', 'POST', { headers: { 'content-type': 'application/json' }, body: '{"__proto__":{"polluted":true},"a":1}' });
  await request.json();
  const context: CollectContext = { request, response: new Response('ok'), error: undefined, requestType: 'main', startTime: 0, startNow: 0, endNow: 0 };
  const body = JSON.parse(JSON.parse(new RequestCollector(new Redactor()).lateCollect(context).json).body as string) as object;
  assert.ok(Object.hasOwn(body, '__proto__'), 'JSON body');
  assert.equal(Object.entries(body), [['__proto__', { polluted: true }], ['a', 1]]);
  assert.is(({} as Record<string, unknown>).polluted, undefined);
});


test("a request's attributes past 1 MiB of JSON are counted, not kept, and the panel says so: twelve of 250 KB made the whole request data, headers, route and response, a note of its size", () => {
  const request = Request.create('/upload', 'GET', { headers: { 'x-trace': 'abc' } });
  for (let i = 0; i < 12; i++) request.attributes.set(`batch${i}`, Array(25).fill('x'.repeat(10_000)));
  // The panel's summary is kept however many attributes came before it.
  request.attributes.set('_route', 'upload');
  request.attributes.set('_route_params', { id: '7' });
  request.attributes.set('_controller', function upload() {});
  const context: CollectContext = { request, response: new Response('ok', 201), error: undefined, requestType: 'main', startTime: 0, startNow: 0, endNow: 0 };
  const json = new RequestCollector(new Redactor()).lateCollect(context).json;
  assert.ok(json.length < MAX_COLLECTOR_JSON, `${json.length} characters`);
  const data = JSON.parse(json);
  assert.is(data.requestHeaders['x-trace'], 'abc');
  // 25 strings of 10,000 characters are 250,075 of JSON: the fifth passes 1 MiB, and the seven after it are counted.
  assert.equal(Object.keys(data.attributes), ['batch0', 'batch1', 'batch2', 'batch3', 'batch4', '_route', '_route_params', '_controller']);
  assert.is(data.attributesOmitted, 7);
  assert.is(MAX_ATTRIBUTES_JSON, 1024 * 1024);
  const profile = { token: 'abc123', parent: null, children: [], ip: '127.0.0.1', method: 'GET', url: 'http://localhost/upload', time: 0, status: 201, collectors: { request: data } } as unknown as Profile;
  assert.match(String(renderRequestPanel({ profile } as PanelContext)), "7 more attributes are not shown: a profile keeps 1 MiB of a request's attributes.");
});

/** The request data the collector stores for `request` (parsed), with a body cap of `bodyCap` bytes. */
function collect(request: Request, bodyCap?: number): RequestData {
  const context: CollectContext = { request, response: new Response('ok'), error: undefined, requestType: 'main', startTime: 0, startNow: 0, endNow: 0 };
  return JSON.parse(new RequestCollector(new Redactor(), bodyCap).lateCollect(context).json) as RequestData;
}

test('a body past the cap is kept up to it and marked truncated; one of exactly the cap is kept whole; an empty one is no body', async () => {
  const body = async (text: string) => {
    const request = Request.create('/upload', 'POST', { headers: { 'content-type': 'text/plain' }, body: text });
    await request.text();
    const { body, bodyTruncated } = collect(request, 8);
    return { body, bodyTruncated };
  };
  assert.equal(await body('123456789'), { body: '12345678', bodyTruncated: true });
  assert.equal(await body('12345678'), { body: '12345678', bodyTruncated: false });
  assert.equal(await body(''), { body: null, bodyTruncated: false });
});

test('a request without a query string or cookies has an empty query and no cookies', () => {
  const data = collect(Request.create('/plain'));
  assert.equal([data.query, data.cookies], [{}, {}]);
});

test('presentRequest of request data that is missing or odd gives the summary\'s fields and empty ones, not a failure', () => {
  const profile = { token: 'abc123', parent: 'def456', children: [], ip: '10.0.0.1', method: 'PUT', url: 'http://localhost/x', time: 0, status: 599, collectors: {} } as unknown as Profile;
  const empty = {
    method: 'PUT',
    url: 'http://localhost/x',
    path: '',
    requestHeaders: {},
    query: {},
    cookies: {},
    body: null,
    bodyTruncated: false,
    route: null,
    routeParams: {},
    controller: null,
    clientIp: '10.0.0.1',
    requestType: 'sub',
    statusCode: 599,
    statusText: 'Unknown Status',
    contentType: null,
    session: null,
    attributes: {},
    responseHeaders: {},
  };
  assert.equal(presentRequest(null, profile), empty);
  assert.equal(presentRequest(['request'], profile), empty);
  // Odd fields are left out (those of the summary) or made empty.
  const odd = presentRequest({ attributes: { _route: 7, _route_params: ['a'], _controller: {} }, responseHeaders: { 'content-type': ['text/html'] } }, profile);
  assert.equal([odd.route, odd.routeParams, odd.controller, odd.contentType], [null, {}, null, null]);
  assert.equal(presentRequest({ attributes: [1], responseHeaders: null }, profile), { ...empty, attributes: {}, responseHeaders: {} });
  // A main request's, with a status node knows.
  const main = presentRequest({ responseHeaders: { 'content-type': 'text/html' } }, { ...profile, parent: null, status: 404 });
  assert.equal([main.requestType, main.statusText, main.contentType], ['main', 'Not Found', 'text/html']);
});

test('attributes are kept while their JSON is under 1 MiB: once it reaches that exactly, the next is counted, not kept', () => {
  // An attribute's JSON is `"name":"value"` (plain letters need no escaping), and a comma between two; a string is cut at 10,000 characters.
  const request = Request.create('/x');
  let left = MAX_ATTRIBUTES_JSON;
  let i = 0;
  const name = () => `a${String(i++).padStart(3, '0')}`;
  while (left > 10_000 + 20) {
    request.attributes.set(name(), 'x'.repeat(9_000));
    left -= 6 + 3 + 9_000 + 1;
  }
  request.attributes.set(name(), 'y'.repeat(left - 6 - 3));
  request.attributes.set('next', 'past the budget');
  const data = collect(request);
  assert.is(JSON.stringify(data.attributes).length - 2, MAX_ATTRIBUTES_JSON, 'the attributes kept are 1 MiB of JSON');
  assert.is(Object.keys(data.attributes).length, i);
  assert.is(data.attributesOmitted, 1);
});

test('a body cut at the cap in the middle of a UTF-8 character leaves that character out, not a U+FFFD it never had', async () => {
  const cut = async (text: string, cap: number) => {
    const request = Request.create('/upload', 'POST', { headers: { 'content-type': 'text/plain' }, body: text });
    await request.text();
    const { body, bodyTruncated } = collect(request, cap);
    return { body, bodyTruncated };
  };
  // é is two bytes, 😀 four: the cap falls after the first byte of each.
  assert.equal(await cut('ééé', 5), { body: 'éé', bodyTruncated: true });
  assert.equal(await cut('a😀b', 2), { body: 'a', bodyTruncated: true });
  assert.equal(await cut('a😀b', 4), { body: 'a', bodyTruncated: true });
  assert.equal(await cut('a😀b', 5), { body: 'a😀', bodyTruncated: true });
  // No UTF-8 (continuation bytes without a lead byte within the three a character may have): cut at the cap, as it was.
  for (const bytes of [Buffer.alloc(6, 0x80), Buffer.from([0x61, 0xc3, 0x80, 0x80, 0x80, 0x80, 0x80])]) {
    const binary = Request.create('/upload', 'POST', { headers: { 'content-type': 'application/octet-stream' }, body: bytes });
    await binary.bytes();
    assert.is(collect(binary, 5).body, bytes.subarray(0, 5).toString('utf8'));
  }
});

test('a body cut at the cap after a whole UTF-8 character followed by stray continuation bytes is cut at the cap: the character before them ended inside it', async () => {
  const cutOf = async (bytes: Buffer, cap: number) => {
    const request = Request.create('/upload', 'POST', { headers: { 'content-type': 'application/octet-stream' }, body: bytes });
    await request.bytes();
    return collect(request, cap);
  };
  // é (c3 a9), € (e2 82 ac), 😀 (f0 9f 98 80), each whole before the cap, then continuation bytes no lead byte starts.
  const cases: Array<[number[], number]> = [
    [[0x61, 0xc3, 0x80, 0x80, 0x80, 0x80], 4],
    [[0xc3, 0xa9, 0x80, 0x80], 3],
    [[0xe2, 0x82, 0xac, 0x80, 0x80], 3],
    [[0xf0, 0x9f, 0x98, 0x80, 0x80, 0x80], 4],
    [[0xf0, 0x9f, 0x98, 0x80, 0x80, 0x80, 0x80], 5],
  ];
  for (const [bytes, cap] of cases) {
    const body = Buffer.from(bytes);
    const { body: kept, bodyTruncated } = await cutOf(body, cap);
    assert.is(kept, body.subarray(0, cap).toString('utf8'), `${body.toString('hex')} cut at ${cap}`);
    assert.ok(bodyTruncated);
  }
  // A character the cap does split is still left out whole, at each offset of a 4-byte one.
  for (let at = 1; at <= 3; at++) assert.is((await cutOf(Buffer.from('ab😀c'), 2 + at)).body, 'ab');
  assert.is((await cutOf(Buffer.from('ab😀c'), 6)).body, 'ab😀');
});

test.run();
