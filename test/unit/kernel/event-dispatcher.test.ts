import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Event, EventDispatcher } from '../../../kernel/index.js';
import { thrown } from '../helpers.js';

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

test('a priority that is no number (NaN, a string) is refused at registration, and leaves the order of the others intact', () => {
  const dispatcher = new EventDispatcher();
  const calls: string[] = [];
  dispatcher.addListener('e', () => void calls.push('1'), 1);
  assert.throws(() => dispatcher.addListener('e', () => void calls.push('nan'), Number.NaN), (error: Error) => error instanceof TypeError && /priority/.test(error.message) && /NaN/.test(error.message));
  assert.throws(() => dispatcher.addListener('e', () => {}, '10' as unknown as number), TypeError);
  dispatcher.addListener('e', () => void calls.push('2'), 2);
  dispatcher.addListener('e', () => void calls.push('3'), 3);
  dispatcher.dispatch(new Event(), 'e');
  assert.equal(calls, ['3', '2', '1']);
  assert.throws(() => dispatcher.addSubscriber({ getSubscribedEvents: () => ({ e: ['on', Number.NaN] as const }), on() {} } as never), TypeError);
});

test('infinite, fractional and negative-zero priorities sort as numbers', () => {
  const dispatcher = new EventDispatcher();
  const calls: string[] = [];
  dispatcher.addListener('e', () => void calls.push('-inf'), -Infinity);
  dispatcher.addListener('e', () => void calls.push('-0'), -0);
  dispatcher.addListener('e', () => void calls.push('0.5'), 0.5);
  dispatcher.addListener('e', () => void calls.push('inf-a'), Infinity);
  dispatcher.addListener('e', () => void calls.push('0'), 0);
  dispatcher.addListener('e', () => void calls.push('inf-b'), Infinity);
  dispatcher.dispatch(new Event(), 'e');
  assert.equal(calls, ['inf-a', 'inf-b', '0.5', '-0', '0', '-inf']);
});

test('a subscriber naming a missing method registers none of its listeners', () => {
  const dispatcher = new EventDispatcher();
  class Half {
    getSubscribedEvents() {
      return { a: 'present', b: 'absent' };
    }
    present() {}
  }
  assert.throws(() => dispatcher.addSubscriber(new Half()), /Half subscribes "absent" to "b", but has no such method/);
  assert.not.ok(dispatcher.hasListeners());
});

test('the listeners of a dispatch are fixed when it starts: added ones wait for the next, removed ones are still called', async () => {
  const dispatcher = new EventDispatcher();
  const calls: string[] = [];
  const later = () => void calls.push('later');
  const added = () => void calls.push('added');
  dispatcher.addListener('e', async () => {
    calls.push('first');
    dispatcher.removeListener('e', later);
    dispatcher.addListener('e', added, 100);
  }, 10);
  dispatcher.addListener('e', later);
  await dispatcher.dispatch(new Event(), 'e');
  assert.equal(calls, ['first', 'later']);
  assert.is(dispatcher.getListeners('e').length, 2);
  assert.is(dispatcher.getListeners('e')[0], added);
});

test('removing a listener that was never added does nothing', () => {
  const dispatcher = new EventDispatcher();
  const a = () => {};
  dispatcher.addListener('e', a);
  dispatcher.removeListener('e', () => {});
  dispatcher.removeListener('other', a);
  assert.equal(dispatcher.getListeners('e'), [a]);
  assert.equal(dispatcher.getEventNames(), ['e']);
});

test('a listener that is no function is refused when added, not at every dispatch', () => {
  const dispatcher = new EventDispatcher();
  for (const listener of ['onRequest', null, undefined, {}]) {
    let error: unknown;
    try {
      dispatcher.addListener('kernel.request', listener as never);
    } catch (caught) {
      error = caught;
    }
    assert.instance(error, TypeError, String(listener));
    assert.match((error as Error).message, /^A listener of "kernel\.request" is a function, not /);
  }
  assert.is(dispatcher.hasListeners('kernel.request'), false);
});

test('dispatching events nobody listens to keeps nothing per event name', () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener('known', () => {});
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const heap = () => {
    gc();
    return process.memoryUsage().heapUsed;
  };
  for (let i = 0; i < 1000; i++) dispatcher.dispatch(new Event(), `warm.${i}`);
  const before = heap();
  for (let i = 0; i < 200_000; i++) dispatcher.dispatch(new Event(), `entity.${i}.created`);
  const grown = heap() - before;
  assert.ok(grown < 5_000_000, `heap grew by ${grown} bytes`);
  assert.equal(dispatcher.getListeners('entity.1.created'), []);
});

test('a subscription of another shape is refused with the subscriber, event and shapes named, not read as method names made of its characters', () => {
  class Mixed {
    getSubscribedEvents() {
      return { 'app.saved': [['onSaved', 10], 'onAudit'] } as never;
    }
    onSaved(): void {}
    onAudit(): void {}
  }
  const dispatcher = new EventDispatcher();
  assert.throws(() => dispatcher.addSubscriber(new Mixed()), (error: Error) => error instanceof TypeError && /^Mixed subscribes to "app.saved" with .*: a subscription is 'method', \['method', priority\] or a list of \['method', priority\?\]\.$/.test(error.message));
  assert.is(dispatcher.hasListeners(), false);
});

test('a subscriber whose getSubscribedEvents() gives no object of event names (null, a list), or that has none, is a TypeError naming it', () => {
  class Listed {
    getSubscribedEvents() {
      return [['app.saved', 'onSaved']] as never;
    }
    onSaved(): void {}
  }
  const dispatcher = new EventDispatcher();
  assert.is(thrown(() => dispatcher.addSubscriber(new Listed())).message, "Listed's getSubscribedEvents() gives an object of event names ({ 'app.saved': 'onSaved' }), not an object of type Array.");
  assert.is(thrown(() => dispatcher.addSubscriber({ getSubscribedEvents: () => null } as never)).message, "subscriber's getSubscribedEvents() gives an object of event names ({ 'app.saved': 'onSaved' }), not null.");
  const missing = thrown(() => dispatcher.addSubscriber({ onSaved() {} } as never));
  assert.instance(missing, TypeError);
  assert.is(missing.message, 'A subscriber is an object with a getSubscribedEvents() method, not an object of type Object without one.');
  assert.is(thrown(() => dispatcher.addSubscriber(null as never)).message, 'A subscriber is an object with a getSubscribedEvents() method, not null.');
  assert.is(dispatcher.hasListeners(), false);
});

test('a subscriber whose getSubscribedEvents() gives a Map is a TypeError, not a subscriber with no listener', () => {
  const dispatcher = new EventDispatcher();
  const subscriber = { getSubscribedEvents: () => new Map([['app.saved', 'onSaved']]) as never, onSaved() {} };
  assert.is(thrown(() => dispatcher.addSubscriber(subscriber)).message, "subscriber's getSubscribedEvents() gives an object of event names ({ 'app.saved': 'onSaved' }), not an object of type Map.");
});

test("a subscriber declared as in Symfony (getSubscribedEvents() static) is refused saying so, and its class given for an instance says to pass one", () => {
  class StaticSubscriber {
    static getSubscribedEvents() {
      return { 'app.saved': 'onSaved' };
    }
    onSaved(): void {}
  }
  class Subscriber {
    getSubscribedEvents() {
      return { 'app.saved': 'onSaved' };
    }
    onSaved(): void {}
  }
  const dispatcher = new EventDispatcher();
  assert.is(
    thrown(() => dispatcher.addSubscriber(new StaticSubscriber() as never)).message,
    'A subscriber is an object with a getSubscribedEvents() method, not an object of type StaticSubscriber whose getSubscribedEvents() is static, as in Symfony: here it is an instance method (drop `static`).',
  );
  // Its instance would be refused for its static getSubscribedEvents(): both changes are named at once.
  assert.is(
    thrown(() => dispatcher.addSubscriber(StaticSubscriber as never)).message,
    'StaticSubscriber subscribes "onSaved" to "app.saved", but has no such method: its instances have, so pass one (new StaticSubscriber()) rather than the class, with getSubscribedEvents() an instance method (drop `static`).',
  );
  class BothSubscriber {
    getSubscribedEvents() {
      return { 'app.saved': 'onSaved' };
    }
    static getSubscribedEvents() {
      return { 'app.saved': 'onSaved' };
    }
    onSaved(): void {}
  }
  assert.is(thrown(() => dispatcher.addSubscriber(BothSubscriber as never)).message, 'BothSubscriber subscribes "onSaved" to "app.saved", but has no such method: its instances have, so pass one (new BothSubscriber()) rather than the class.');
  assert.is(thrown(() => dispatcher.addSubscriber(Subscriber as never)).message, 'A subscriber is an object with a getSubscribedEvents() method, not the class Subscriber: pass an instance (new Subscriber()).');
  assert.is(dispatcher.hasListeners(), false);
});

test('after a first async listener, a later async one is awaited too before the next runs and before the dispatch settles', async () => {
  const dispatcher = new EventDispatcher();
  const calls: string[] = [];
  const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
  dispatcher.addListener('e', async () => {
    await pause();
    calls.push('first async');
  }, 20);
  dispatcher.addListener('e', async () => {
    await pause();
    calls.push('second async');
  }, 10);
  dispatcher.addListener('e', () => void calls.push('sync'));
  await dispatcher.dispatch(new Event(), 'e');
  assert.equal(calls, ['first async', 'second async', 'sync']);
});

test('removeSubscriber removes only that subscriber\'s listeners: plain listeners and another instance of its class stay', () => {
  const calls: string[] = [];
  class Audit {
    constructor(readonly label: string) {}
    getSubscribedEvents() {
      return { e: 'onE' };
    }
    onE() {
      calls.push(this.label);
    }
  }
  const dispatcher = new EventDispatcher();
  const removed = new Audit('removed');
  dispatcher.addListener('e', () => void calls.push('plain'), 5);
  dispatcher.addSubscriber(removed);
  dispatcher.addSubscriber(new Audit('kept'));
  dispatcher.removeSubscriber(removed);
  dispatcher.dispatch(new Event(), 'e');
  assert.equal(calls, ['plain', 'kept']);
  assert.equal(dispatcher.getEventNames(), ['e']);
});

test('hasListeners(name) answers for that event only; removing its last listener drops it from getEventNames() and getListeners()', () => {
  const dispatcher = new EventDispatcher();
  const listener = () => {};
  dispatcher.addListener('a', listener);
  dispatcher.addListener('b', () => {});
  assert.is(dispatcher.hasListeners('a'), true);
  assert.is(dispatcher.hasListeners('c'), false);
  dispatcher.removeListener('a', listener);
  assert.is(dispatcher.hasListeners('a'), false);
  assert.is(dispatcher.hasListeners(), true);
  assert.equal(dispatcher.getEventNames(), ['b']);
  assert.equal(Object.keys(dispatcher.getListeners()), ['b']);
});

test('an event named "__proto__" is listed by getListeners() as a key like any other, and registered, dispatched and removed as one', () => {
  const dispatcher = new EventDispatcher();
  const calls: string[] = [];
  const listener = () => void calls.push('proto');
  dispatcher.addListener('__proto__', listener);
  dispatcher.addListener('e', () => {});
  const all = dispatcher.getListeners();
  // An assignment would have set the object's prototype rather than added the key.
  assert.equal(Object.keys(all), ['__proto__', 'e']);
  assert.equal(Object.getOwnPropertyDescriptor(all, '__proto__')?.value, [listener]);
  assert.is(Object.getPrototypeOf(all), Object.prototype);
  assert.is(dispatcher.hasListeners('__proto__'), true);
  dispatcher.dispatch(new Event(), '__proto__');
  assert.equal(calls, ['proto']);
  dispatcher.removeListener('__proto__', listener);
  assert.is(dispatcher.hasListeners('__proto__'), false);
  assert.equal(Object.keys(dispatcher.getListeners()), ['e']);
});

test('a priority that is no number is named as given in the error, with the listener (Class::method for a subscriber)', () => {
  const dispatcher = new EventDispatcher();
  assert.is(thrown(() => dispatcher.addListener('e', function onE() {}, '10' as never)).message, 'The priority of listener "onE" for "e" must be a number, got "10".');
  assert.is(thrown(() => dispatcher.addListener('e', () => {}, Symbol('high') as never)).message, 'The priority of listener "closure" for "e" must be a number, got Symbol(high).');
  class Audit {
    getSubscribedEvents() {
      return { e: ['onE', Number.NaN] as const };
    }
    onE() {}
  }
  assert.is(thrown(() => dispatcher.addSubscriber(new Audit())).message, 'The priority of listener "Audit::onE" for "e" must be a number, got NaN.');
  assert.is(dispatcher.hasListeners(), false);
});

test('a subscription that is no string nor list, or a list of pairs with the priority first, is refused by its shape, not looked up as a method', () => {
  const dispatcher = new EventDispatcher();
  const shapes = "a subscription is 'method', ['method', priority] or a list of ['method', priority?].";
  const subscribing = (subscription: unknown) => ({ getSubscribedEvents: () => ({ e: subscription }) as never, onE() {} });
  assert.is(thrown(() => dispatcher.addSubscriber(subscribing(5))).message, `subscriber subscribes to "e" with number 5: ${shapes}`);
  assert.is(thrown(() => dispatcher.addSubscriber(subscribing({ method: 'onE' }))).message, `subscriber subscribes to "e" with an object of type Object: ${shapes}`);
  assert.is(thrown(() => dispatcher.addSubscriber(subscribing([[10, 'onE']]))).message, `subscriber subscribes to "e" with an object of type Array: ${shapes}`);
  assert.is(dispatcher.hasListeners(), false);
});

test('what is no subscriber is named without "without one" unless it is an object; a null-prototype object subscribes; an anonymous class is "subscriber"', () => {
  const dispatcher = new EventDispatcher();
  assert.is(thrown(() => dispatcher.addSubscriber('onSaved' as never)).message, 'A subscriber is an object with a getSubscribedEvents() method, not the string "onSaved".');
  assert.is(thrown(() => dispatcher.addSubscriber(function onSaved() {} as never)).message, 'A subscriber is an object with a getSubscribedEvents() method, not a function (onSaved).');
  const bare = Object.assign(Object.create(null) as object, { getSubscribedEvents: () => ({ e: 'onE' }), onE() {} });
  dispatcher.addSubscriber(bare);
  assert.equal(dispatcher.getListenerEntries('e').map((entry) => entry.name), ['subscriber::onE']);
  const anonymous = [class {
    static getSubscribedEvents() {
      return { e: 'onE' };
    }
  }][0]!;
  assert.is(thrown(() => dispatcher.addSubscriber(anonymous as never)).message, 'subscriber subscribes "onE" to "e", but has no such method.');
});

test('a class given whose instances lack the method too is told only that it has no such method', () => {
  class Static {
    static getSubscribedEvents() {
      return { e: 'onMissing' };
    }
  }
  const dispatcher = new EventDispatcher();
  assert.is(thrown(() => dispatcher.addSubscriber(Static as never)).message, 'Static subscribes "onMissing" to "e", but has no such method.');
  assert.is(thrown(() => dispatcher.addSubscriber({ getSubscribedEvents: () => ({ e: 'onMissing' }) })).message, 'subscriber subscribes "onMissing" to "e", but has no such method.');
});

test.run();
