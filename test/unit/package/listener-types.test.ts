// A listener of a kernel event is typed with the event's class, as a consumer writes it: an
// unannotated listener is no `any`, and one declared for another event's class is refused.
// Type-checked under strict settings against the built package, imported by its name.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { typeErrorsOf } from './consumer-types.js';

test('a listener of a kernel event gets its event class, and one of an event of its own any event', () => {
  const output = typeErrorsOf(`
import { Event, KernelEvents, Response, type KernelEvent, type RequestEvent } from 'http-kernel';
import { createKernel } from 'http-kernel/app';

class OrderPlaced extends Event { constructor(readonly id: number) { super(); } }
const app = createKernel();
app.dispatcher.addListener(KernelEvents.VIEW, (event) => event.setResponse(Response.json(event.controllerResult)));
app.dispatcher.addListener(KernelEvents.EXCEPTION, (event) => { const status: number = event.error instanceof Error ? 500 : 400; return status; });
app.dispatcher.addListener(KernelEvents.TERMINATE, (event) => event.response.status);
app.dispatcher.addListener(KernelEvents.EXCEPTION, (event: RequestEvent) => event.hasResponse(), -64);
app.dispatcher.addListener('kernel.response', (event: KernelEvent) => event.isMainRequest());
app.dispatcher.addListener('order.placed', (event: OrderPlaced) => event.id);
const name: string = KernelEvents.REQUEST;
app.dispatcher.addListener(name, (event: OrderPlaced) => event.id);
`, 'listener-types');
  assert.is(output, '', `listeners that are right do not compile:\n${output}`);
});

test("a listener declared for another event's class is a type error, and an unannotated one is no any", () => {
  const output = typeErrorsOf(`
import { KernelEvents, type ResponseEvent } from 'http-kernel';
import { createKernel } from 'http-kernel/app';

const app = createKernel();
app.dispatcher.addListener(KernelEvents.VIEW, (event: ResponseEvent) => event.response.status);
app.dispatcher.addListener(KernelEvents.REQUEST, (event) => { const n: number = event; return n; });
`, 'listener-types');
  const lines = output.split('\n').filter((line) => line.includes('error TS'));
  assert.is(lines.length, 2, `expected two type errors:\n${output}`);
  assert.match(lines[0]!, /consumer\.ts\(6,/);
  assert.match(lines[0]!, /ViewEvent/);
  assert.match(lines[1]!, /consumer\.ts\(7,/);
  assert.match(lines[1]!, /RequestEvent/);
});

test("the response of a kernel.request, kernel.view or kernel.exception event is set with setResponse(), which stops propagation: an assignment, which would let the listeners after it run, is a type error (a ResponseEvent's is not)", () => {
  const output = typeErrorsOf(`
import { KernelEvents, Response } from 'http-kernel';
import { createKernel } from 'http-kernel/app';

const app = createKernel();
app.dispatcher.addListener(KernelEvents.REQUEST, (event) => { event.response = new Response('early'); });
app.dispatcher.addListener(KernelEvents.VIEW, (event) => { event.response = Response.json(event.controllerResult); });
app.dispatcher.addListener(KernelEvents.EXCEPTION, (event) => { event.response = new Response('failed', 500); });
app.dispatcher.addListener(KernelEvents.RESPONSE, (event) => { event.response = new Response('replaced'); });
app.dispatcher.addListener(KernelEvents.REQUEST, (event) => event.setResponse(new Response('early')));
`, 'listener-types');
  const lines = output.split('\n').filter((line) => line.includes('error TS'));
  assert.is(lines.length, 3, `expected three type errors:\n${output}`);
  for (const [index, line] of lines.entries()) {
    assert.match(line, new RegExp(`consumer\\.ts\\(${index + 6},`));
    assert.match(line, /TS2540: Cannot assign to 'response' because it is a read-only property/);
  }
});

test.run();
