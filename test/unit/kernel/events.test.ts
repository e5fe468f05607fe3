import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ControllerArgumentsEvent,
  ControllerEvent,
  Event,
  ExceptionEvent,
  FinishRequestEvent,
  KernelEvent,
  Request,
  RequestEvent,
  RequestType,
  Response,
  ResponseEvent,
  TerminateEvent,
  ViewEvent,
  type KernelLike,
} from '../../../kernel/index.js';

const test = suite('kernel events');

const kernel: KernelLike = { handle: async () => new Response('') };
const request = Request.create('/events');
const controller = () => new Response('');

// The kernel's own events store their fields in their own constructors; KernelEvent stores them
// for every other subclass. Each way must give the same fields.
test('every kernel event carries the kernel, the request and the request type, and is not stopped', () => {
  const events: KernelEvent[] = [
    new KernelEvent(kernel, request, RequestType.SUB),
    new RequestEvent(kernel, request, RequestType.SUB),
    new ControllerEvent(kernel, controller, request, RequestType.SUB),
    new ControllerArgumentsEvent(kernel, controller, [request], request, RequestType.SUB),
    new ViewEvent(kernel, request, RequestType.SUB, 'result'),
    new ExceptionEvent(kernel, request, RequestType.SUB, new Error('x')),
    new ResponseEvent(kernel, request, RequestType.SUB, new Response('')),
    new FinishRequestEvent(kernel, request, RequestType.SUB),
  ];
  for (const event of events) {
    const name = event.constructor.name;
    assert.is(event.kernel, kernel, name);
    assert.is(event.request, request, name);
    assert.is(event.requestType, RequestType.SUB, name);
    assert.is(event.isMainRequest(), false, name);
    assert.is(event.isPropagationStopped(), false, name);
    event.stopPropagation();
    assert.is(event.isPropagationStopped(), true, name);
  }
  const terminate = new TerminateEvent(kernel, request, new Response(''));
  assert.is(terminate.request, request);
  assert.is(terminate.isMainRequest(), true);
});

test("an application's own subclasses of KernelEvent and of the kernel's events get the fields too", () => {
  class UserLoggedIn extends KernelEvent {
    constructor(
      request: Request,
      readonly user: string,
    ) {
      super(kernel, request, RequestType.MAIN);
    }
  }
  class TimedRequestEvent extends RequestEvent {
    readonly startedAt = 42;
  }
  const own = new UserLoggedIn(request, 'ada');
  assert.is(own.kernel, kernel);
  assert.is(own.request, request);
  assert.is(own.requestType, RequestType.MAIN);
  assert.is(own.user, 'ada');
  assert.is(own.isPropagationStopped(), false);

  const timed = new TimedRequestEvent(kernel, request, RequestType.SUB);
  assert.is(timed.request, request);
  assert.is(timed.requestType, RequestType.SUB);
  assert.is(timed.response, null);
  assert.is(timed.startedAt, 42);
  timed.setResponse(new Response('stop'));
  assert.is(timed.isPropagationStopped(), true);
});

test('a plain Event is not stopped until stopPropagation()', () => {
  const event = new Event();
  assert.is(event.isPropagationStopped(), false);
  event.stopPropagation();
  assert.is(event.isPropagationStopped(), true);
});

test.run();
