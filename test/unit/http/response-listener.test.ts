import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ControllerResolver, EventDispatcher, HttpKernel, Request, RequestType, Response } from '../../../kernel/index.js';
import { ResponseListener } from '../../../lib/http/index.js';

test("prepares the main request's response only, as Symfony's: a sub-request's comes back to its caller as its controller made it", async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addSubscriber(new ResponseListener());
  const kernel = new HttpKernel(dispatcher, new ControllerResolver());
  let inner: Response | undefined;
  const request = Request.create('/shelf');
  request.attributes.set('_controller', async (main: Request) => {
    const sub = main.duplicate({ attributes: { _controller: () => new Response('<li>Dune</li>', 204, { 'content-type': 'text/html' }) } });
    inner = await kernel.handle(sub, RequestType.SUB);
    return new Response(`<ul>${String(inner.body)}</ul>`, 200, { 'content-type': 'text/html' });
  });
  const response = await kernel.handle(request);
  assert.equal(inner?.headers, { 'content-type': 'text/html' });
  assert.is(inner?.body, '<li>Dune</li>');
  assert.is(response.body, '<ul><li>Dune</li></ul>');
  assert.equal(response.headers, { 'content-type': 'text/html; charset=UTF-8', 'content-length': '22' });
});

test.run();
