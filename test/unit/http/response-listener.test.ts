import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ControllerResolver, EventDispatcher, HttpError, HttpKernel, KernelEvents, Request, RequestType, Response, type FinishRequestEvent, type ResponseEvent } from '../../../kernel/index.js';
import { ErrorListener } from '../../../lib/errors/index.js';
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

test('a cookie a kernel.response listener sets after prepare() (a session cookie at -1000) gets Secure over https too, on a page and on an error page', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addSubscriber(new ResponseListener());
  dispatcher.addSubscriber(new ErrorListener(() => new Response('the error page', 404)));
  dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => {
    if (event.isMainRequest()) event.response.setCookie('session', 'abc', { sameSite: 'strict' });
  }, -1000);
  const kernel = new HttpKernel(dispatcher, new ControllerResolver());
  const page = Request.create('https://shop.example/');
  page.attributes.set('_controller', () => new Response('home').setCookie('theme', 'dark'));
  assert.equal((await kernel.handle(page)).headers['set-cookie'], ['theme=dark; Path=/; HttpOnly; SameSite=Lax; Secure', 'session=abc; Path=/; HttpOnly; SameSite=Strict; Secure']);
  const missing = Request.create('https://shop.example/nope');
  missing.attributes.set('_controller', () => {
    throw new HttpError(404, 'No such page.');
  });
  assert.is((await kernel.handle(missing)).getHeader('set-cookie'), 'session=abc; Path=/; HttpOnly; SameSite=Strict; Secure');
  const plain = Request.create('http://shop.example/');
  plain.attributes.set('_controller', () => new Response('home'));
  assert.is((await kernel.handle(plain)).getHeader('set-cookie'), 'session=abc; Path=/; HttpOnly; SameSite=Strict');
});

test('a cookie a kernel.finish_request listener sets on the response it kept (the answer goes out after it) gets Secure over https too, on a page and on an error page, and a HEAD\'s answer is still its head alone', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addSubscriber(new ResponseListener());
  const kept = new WeakMap<Request, Response>();
  dispatcher.addSubscriber(new ErrorListener(() => new Response('the error page', 404)));
  dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => void kept.set(event.request, event.response), -2000);
  dispatcher.addListener(KernelEvents.FINISH_REQUEST, (event: FinishRequestEvent) => {
    if (event.isMainRequest()) kept.get(event.request)?.setCookie('seen', '1');
  });
  const kernel = new HttpKernel(dispatcher, new ControllerResolver());
  const page = Request.create('https://shop.example/');
  page.attributes.set('_controller', () => new Response('home'));
  assert.is((await kernel.handle(page)).getHeader('set-cookie'), 'seen=1; Path=/; HttpOnly; SameSite=Lax; Secure');
  const missing = Request.create('https://shop.example/nope');
  missing.attributes.set('_controller', () => {
    throw new HttpError(404, 'No such page.');
  });
  assert.is((await kernel.handle(missing)).getHeader('set-cookie'), 'seen=1; Path=/; HttpOnly; SameSite=Lax; Secure', 'on an error page too');
  const plain = Request.create('http://shop.example/');
  plain.attributes.set('_controller', () => new Response('home'));
  assert.is((await kernel.handle(plain)).getHeader('set-cookie'), 'seen=1; Path=/; HttpOnly; SameSite=Lax');
  const head = Request.create('https://shop.example/', 'HEAD');
  head.attributes.set('_controller', () => new Response('home'));
  const answer = await kernel.handle(head);
  assert.is(answer.body, null);
  assert.is(answer.getHeader('content-length'), '4');
  assert.is(answer.getHeader('set-cookie'), 'seen=1; Path=/; HttpOnly; SameSite=Lax; Secure');
});

test.run();
