import { Readable, Writable, pipeline } from 'node:stream';
import { ReadableStream } from 'node:stream/web';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ControllerResolver, EventDispatcher, HttpKernel, KernelEvents, Request, RequestStack, RequestType, Response, type ResponseEvent } from '../../../kernel/index.js';

const test = suite('request context of stream bodies and kernel.terminate');

function kernelWith(controller: (request: Request) => unknown, stack = new RequestStack()) {
  const dispatcher = new EventDispatcher();
  const request = (path: string): Request => {
    const made = Request.create(path);
    made.attributes.set('_controller', controller);
    return made;
  };
  return { dispatcher, stack, kernel: new HttpKernel(dispatcher, new ControllerResolver(), stack), request };
}

/** Reads a body the way the server does, after handle() returned: piped into a writable slow enough that reads resume on its 'drain'. */
function drain(body: Readable): Promise<string[]> {
  const chunks: string[] = [];
  const sink = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(String(chunk));
      setImmediate(callback);
    },
  });
  return new Promise((resolve, reject) => pipeline(body, sink, (error) => (error ? reject(error) : resolve(chunks))));
}

/** The current request's `_label` attribute or path, or '-' when there is none. */
function current(stack: RequestStack): string {
  const request = stack.getCurrentRequest();
  return request === undefined ? '-' : String(request.attributes.get('_label') ?? request.path);
}

test('an async generator body read after handle() returned sees its request current at every chunk; text, bytes, and streams without tracking are left as they are', async () => {
  const stack = new RequestStack();
  const { kernel, request } = kernelWith(() => {
    async function* chunks() {
      for (let i = 0; i < 4; i++) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        yield `${i}:${current(stack)} `;
      }
    }
    return new Response(Readable.from(chunks()));
  }, stack);
  const response = await kernel.handle(request('/feed'));
  assert.is(current(stack), '-');
  assert.equal(await drain(response.body as Readable), ['0:/feed ', '1:/feed ', '2:/feed ', '3:/feed ']);

  const text = kernelWith(() => new Response('text'));
  assert.is((await text.kernel.handle(text.request('/'))).body, 'text');
  const bytes = new Uint8Array([1, 2]);
  const binary = kernelWith(() => new Response(bytes));
  assert.is((await binary.kernel.handle(binary.request('/'))).body, bytes);
  const stream = Readable.from(['x']);
  const read = stream._read;
  const untracked = kernelWith(() => new Response(stream), new RequestStack({ asyncContext: false }));
  await untracked.kernel.handle(untracked.request('/'));
  assert.is(stream._read, read);
  assert.equal(await drain(stream), ['x']);
});

test('a Readable with its own read() and a web ReadableStream (Readable.fromWeb) see their request current', async () => {
  const stack = new RequestStack();
  let n = 0;
  const { kernel, request } = kernelWith((req) => {
    if (req.path === '/node') {
      return new Response(
        new Readable({
          read() {
            this.push(n < 3 ? `${n++}:${current(stack)} ` : null);
          },
        }),
      );
    }
    let m = 0;
    // Pulled only when read: the start() of a web stream runs in the controller, where the request is current anyway.
    const web = new ReadableStream<string>({
      pull(controller) {
        if (m < 3) controller.enqueue(`${m++}:${current(stack)} `);
        else controller.close();
      },
    });
    return new Response(Readable.fromWeb(web));
  }, stack);
  const node = await kernel.handle(request('/node'));
  const web = await kernel.handle(request('/web'));
  assert.equal(await drain(node.body as Readable), ['0:/node ', '1:/node ', '2:/node ']);
  assert.equal((await drain(web.body as Readable)).join(''), '0:/web 1:/web 2:/web ');
});

test('an async kernel.response listener on the way: the body still reads in its request', async () => {
  const stack = new RequestStack();
  const { dispatcher, kernel, request } = kernelWith(async () => new Response(Readable.from((function* () {
    yield current(stack);
  })())), stack);
  dispatcher.addListener(KernelEvents.RESPONSE, async (event: ResponseEvent) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    event.response.setHeader('x-late', '1');
  });
  const response = await kernel.handle(request('/late'));
  assert.equal(await drain(response.body as Readable), ['/late']);
});

test('a generator\'s finally, run when its stream is destroyed before the end (the client left), sees its request', async () => {
  const stack = new RequestStack();
  const seen: string[] = [];
  const { kernel, request } = kernelWith(() => {
    async function* endless() {
      try {
        for (;;) yield 'tick';
      } finally {
        seen.push(current(stack));
      }
    }
    return new Response(Readable.from(endless()));
  }, stack);
  const response = await kernel.handle(request('/endless'));
  const body = response.body as Readable;
  await new Promise<void>((resolve) => body.once('readable', () => resolve()));
  body.destroy();
  await new Promise((resolve) => body.once('close', resolve));
  assert.equal(seen, ['/endless']);
});

test('a sub-request\'s stream body sent as its parent\'s answer reads with the sub-request current, the main request below it', async () => {
  const stack = new RequestStack();
  const fragment = () => new Response(Readable.from((function* () {
    yield `${current(stack)} in ${stack.getMainRequest()?.path ?? '-'} (${stack.all().length})`;
  })()));
  const { kernel, request } = kernelWith(async (main) => kernel.handle(main.duplicate({ attributes: { _controller: fragment, _label: 'fragment' } }), RequestType.SUB), stack);
  const response = await kernel.handle(request('/page'));
  assert.equal(await drain(response.body as Readable), ['fragment in /page (2)']);
});

test('50 concurrent stream bodies, read interleaved, each see only their own request', async () => {
  const stack = new RequestStack();
  const { kernel, request } = kernelWith(() => {
    async function* chunks() {
      for (let i = 0; i < 5; i++) {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
        yield `${current(stack)};`;
      }
    }
    return new Response(Readable.from(chunks()));
  }, stack);
  const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => kernel.handle(request(`/r${i}`))));
  const bodies = await Promise.all(responses.map(async (response) => (await drain(response.body as Readable)).join('')));
  bodies.forEach((body, i) => assert.is(body, `/r${i};`.repeat(5)));
});

test('kernel.terminate listeners run with their request current, alone on the stack (also when called in its context); without tracking they see none', async () => {
  for (const asyncContext of [true, false]) {
    const stack = new RequestStack({ asyncContext });
    const { dispatcher, kernel, request } = kernelWith(() => new Response('ok'), stack);
    const seen: string[] = [];
    dispatcher.addListener(KernelEvents.TERMINATE, () => void seen.push(`${current(stack)} ${stack.all().length}`));
    dispatcher.addListener(KernelEvents.TERMINATE, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      seen.push(`after await ${current(stack)}`);
    }, -10);
    const main = request('/done');
    const response = await kernel.handle(main);
    await kernel.terminate(main, response);
    assert.equal(seen, asyncContext ? ['/done 1', 'after await /done'] : ['- 0', 'after await -'], String(asyncContext));
    assert.is(current(stack), '-');
    // An embedder that terminates from inside the request's own context: no second push.
    seen.length = 0;
    await stack.run(main, () => kernel.terminate(main, response));
    assert.equal(seen, asyncContext ? ['/done 1', 'after await /done'] : ['- 0', 'after await -'], String(asyncContext));
  }
});

test('kernel.terminate called from another client\'s request, or from a sub-request of its own, runs with its request alone on the stack', async () => {
  const stack = new RequestStack();
  const { dispatcher, kernel, request } = kernelWith(() => new Response('ok'), stack);
  const seen: string[] = [];
  dispatcher.addListener(KernelEvents.TERMINATE, () => void seen.push(`${current(stack)} main=${stack.getMainRequest()?.path ?? '-'} parent=${stack.getParentRequest()?.path ?? '-'} (${stack.all().length})`));
  const main = request('/listen');
  const response = await kernel.handle(main);
  // A stream body ended by another client's request (a hub that request B ends) reports its end in B's context.
  await stack.run(request('/other-client'), () => kernel.terminate(main, response));
  // A sub-request's stream body reports its end in the sub-request's context, the main request below it.
  const sub = main.duplicate({ attributes: { _label: 'fragment' } });
  await stack.run(main, () => stack.run(sub, () => kernel.terminate(main, response)));
  assert.equal(seen, ['/listen main=/listen parent=- (1)', '/listen main=/listen parent=- (1)']);
});

test('RequestStack.bind keeps the stack of the moment it is called; outside any request it gives the function back', () => {
  const stack = new RequestStack();
  const fn = function (this: { name: string }, suffix: string) {
    return `${this.name}${suffix} ${current(stack)}`;
  };
  assert.is(stack.bind(fn), fn);
  const bound = stack.run(Request.create('/bound'), () => stack.bind(fn));
  assert.is(bound.call({ name: 'x' }, '!'), 'x! /bound');
  assert.is(current(stack), '-');
});

test('RequestStack.exit runs a function outside any request, and what it starts stays outside', async () => {
  const stack = new RequestStack();
  const seen = await stack.run(Request.create('/inside'), () =>
    stack.exit(() => {
      const now = `${current(stack)} ${stack.all().length}`;
      return new Promise<string[]>((resolve) => setTimeout(() => resolve([now, current(stack)]), 1));
    }),
  );
  assert.equal(seen, ['- 0', '-']);
  assert.is(new RequestStack({ asyncContext: false }).exit(() => 'called'), 'called');
});

test.run();
