import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Event, EventDispatcher } from '../../../kernel/index.js';

const test = suite('EventDispatcher');

test('higher priority runs first, equal priority in registration order', () => {
  const dispatcher = new EventDispatcher();
  const calls: string[] = [];
  dispatcher.addListener('e', () => void calls.push('low'), -10);
  dispatcher.addListener('e', () => void calls.push('first-zero'));
  dispatcher.addListener('e', () => void calls.push('high'), 100);
  dispatcher.addListener('e', () => void calls.push('second-zero'), 0);
  dispatcher.dispatch(new Event(), 'e');
  assert.equal(calls, ['high', 'first-zero', 'second-zero', 'low']);
});

test('getListeners returns the listeners in call order', () => {
  const dispatcher = new EventDispatcher();
  const a = () => {};
  const b = () => {};
  const c = () => {};
  dispatcher.addListener('e', a, 1);
  dispatcher.addListener('e', b, 5);
  dispatcher.addListener('e', c, 1);
  assert.equal(dispatcher.getListeners('e'), [b, a, c]);
  assert.is(dispatcher.getListenerPriority('e', b), 5);
  assert.is(dispatcher.getListenerPriority('e', () => {}), null);
});

test('stopPropagation ends the dispatch', () => {
  const dispatcher = new EventDispatcher();
  const calls: string[] = [];
  dispatcher.addListener('e', (event: Event) => {
    calls.push('stopper');
    event.stopPropagation();
  }, 10);
  dispatcher.addListener('e', () => void calls.push('never'));
  const event = dispatcher.dispatch(new Event(), 'e') as Event;
  assert.equal(calls, ['stopper']);
  assert.ok(event.isPropagationStopped());
});

test('a dispatch with only sync listeners returns the event, not a promise', () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener('e', () => {});
  const event = new Event();
  assert.is(dispatcher.dispatch(event, 'e'), event);
  assert.is(dispatcher.dispatch(event, 'nothing'), event);
});

test('an async listener is awaited before the next one runs', async () => {
  const dispatcher = new EventDispatcher();
  const calls: string[] = [];
  dispatcher.addListener('e', async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    calls.push('async');
  }, 10);
  dispatcher.addListener('e', () => void calls.push('sync'));
  const result = dispatcher.dispatch(new Event(), 'e');
  assert.instance(result, Promise);
  assert.equal(calls, []);
  await result;
  assert.equal(calls, ['async', 'sync']);
});

test('an async listener that stops propagation stops the rest', async () => {
  const dispatcher = new EventDispatcher();
  const calls: string[] = [];
  dispatcher.addListener('e', async () => {}, 20);
  dispatcher.addListener('e', async (event: Event) => event.stopPropagation(), 10);
  dispatcher.addListener('e', () => void calls.push('never'));
  await dispatcher.dispatch(new Event(), 'e');
  assert.equal(calls, []);
});

test('removeListener removes it and resets the order cache', () => {
  const dispatcher = new EventDispatcher();
  const calls: string[] = [];
  const a = () => void calls.push('a');
  dispatcher.addListener('e', a);
  dispatcher.dispatch(new Event(), 'e');
  dispatcher.removeListener('e', a);
  dispatcher.dispatch(new Event(), 'e');
  assert.equal(calls, ['a']);
  assert.not.ok(dispatcher.hasListeners('e'));
});

test('subscribers declare methods with priorities and can be removed', () => {
  const calls: string[] = [];
  class Sub {
    getSubscribedEvents() {
      return { one: 'onOne', two: [['low', -5], ['high', 5]] as const };
    }
    onOne() {
      calls.push('one');
    }
    low() {
      calls.push('low');
    }
    high() {
      calls.push('high');
    }
  }
  const dispatcher = new EventDispatcher();
  const sub = new Sub();
  dispatcher.addSubscriber(sub);
  dispatcher.dispatch(new Event(), 'one');
  dispatcher.dispatch(new Event(), 'two');
  assert.equal(calls, ['one', 'high', 'low']);
  assert.equal(dispatcher.getListenerEntries('two').map((e) => e.name), ['Sub::high', 'Sub::low']);
  dispatcher.removeSubscriber(sub);
  assert.not.ok(dispatcher.hasListeners());
});

test('a subscriber naming a missing method is refused at registration', () => {
  const dispatcher = new EventDispatcher();
  assert.throws(() => dispatcher.addSubscriber({ getSubscribedEvents: () => ({ e: 'nope' }) }), /no such method/);
});

test('a listener error propagates out of dispatch', () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener('e', () => {
    throw new Error('boom');
  });
  assert.throws(() => dispatcher.dispatch(new Event(), 'e'), /boom/);
});

test.run();
