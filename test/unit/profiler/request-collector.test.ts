import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request, Response } from '../../../kernel/index.js';
import { RequestCollector } from '../../../lib/profiler/collectors/index.js';
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

test.run();
