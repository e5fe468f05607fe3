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

test.run();
