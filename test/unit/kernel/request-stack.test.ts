import { setImmediate as tick } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Request, RequestStack } from '../../../kernel/index.js';

const test = suite('RequestStack');

/** What the stack answers now, by path ('-' for none). */
function seen(stack: RequestStack): { current: string; main: string; parent: string; all: string[] } {
  const path = (request: Request | undefined) => request?.path ?? '-';
  return { current: path(stack.getCurrentRequest()), main: path(stack.getMainRequest()), parent: path(stack.getParentRequest()), all: stack.all().map((request) => request.path) };
}

test('run() puts the request on top of the current stack: main request first, the parent below the current one, and the caller\'s stack back after it', () => {
  const stack = new RequestStack();
  const [main, sub, inner] = [Request.create('/main'), Request.create('/sub'), Request.create('/inner')];
  const outside = { current: '-', main: '-', parent: '-', all: [] };
  assert.equal(seen(stack), outside);
  const result = stack.run(main, () => {
    const atMain = seen(stack);
    const atInner = stack.run(sub, () => [seen(stack), stack.run(inner, () => seen(stack))] as const);
    return { atMain, atSub: atInner[0], atInner: atInner[1], back: seen(stack) };
  });
  assert.equal(result.atMain, { current: '/main', main: '/main', parent: '-', all: ['/main'] });
  assert.equal(result.atSub, { current: '/sub', main: '/main', parent: '/main', all: ['/main', '/sub'] });
  assert.equal(result.atInner, { current: '/inner', main: '/main', parent: '/sub', all: ['/main', '/sub', '/inner'] });
  assert.equal(result.back, result.atMain);
  assert.equal(seen(stack), outside);
});

test('concurrent sub-requests of one request each see their own stack across awaits', async () => {
  const stack = new RequestStack();
  const main = Request.create('/main');
  const views = await stack.run(main, () =>
    Promise.all(['/a', '/b'].map((path) => stack.run(Request.create(path), async () => {
      await tick();
      return seen(stack);
    }))),
  );
  assert.equal(views, [
    { current: '/a', main: '/main', parent: '/main', all: ['/main', '/a'] },
    { current: '/b', main: '/main', parent: '/main', all: ['/main', '/b'] },
  ]);
});

test('bind() makes a function run with the stack current when it was bound, with its own this, arguments and result; outside any request it gives the function itself', async () => {
  const stack = new RequestStack();
  const main = Request.create('/main');
  const sub = Request.create('/sub');
  function read(this: { label: string }, suffix: string) {
    return `${this.label}${suffix} ${seen(stack).all.join(',')}`;
  }
  const bound = stack.run(main, () => stack.run(sub, () => stack.bind(read)));
  await tick();
  assert.is(bound.call({ label: 'x' }, '!'), 'x! /main,/sub');
  assert.equal(seen(stack).all, [], 'only for the call');
  assert.is(stack.bind(read), read);
  const untracked = new RequestStack({ asyncContext: false });
  assert.is(untracked.run(main, () => untracked.bind(read)), read);
});

test('exit() runs a function outside any request and gives its result; the request is current again after it', () => {
  const stack = new RequestStack();
  const main = Request.create('/main');
  const [inside, after] = stack.run(main, () => [stack.exit(() => seen(stack)), seen(stack)] as const);
  assert.equal(inside, { current: '-', main: '-', parent: '-', all: [] });
  assert.is(after.current, '/main');
  assert.is(stack.exit(() => 42), 42);
  const untracked = new RequestStack({ asyncContext: false });
  assert.is(untracked.exit(() => 'called'), 'called');
});

test('without async context tracking, run() only calls its function: the getters answer undefined and all() nothing', () => {
  const stack = new RequestStack({ asyncContext: false });
  assert.is(stack.tracksAsyncContext, false);
  assert.is(new RequestStack({}).tracksAsyncContext, true);
  assert.is(new RequestStack({ asyncContext: true }).tracksAsyncContext, true);
  const result = stack.run(Request.create('/main'), () => stack.run(Request.create('/sub'), () => seen(stack)));
  assert.equal(result, { current: '-', main: '-', parent: '-', all: [] });
  stack.close();
  assert.is(stack.run(Request.create('/after'), () => 'still called'), 'still called');
});

test('close() stops tracking: a request in flight is no longer current; a later run() tracks again', async () => {
  const stack = new RequestStack();
  const before = stack.run(Request.create('/main'), async () => {
    await tick();
    const open = seen(stack).current;
    stack.close();
    return [open, seen(stack).current];
  });
  assert.equal(await before, ['/main', '-']);
  stack.close();
  assert.is(stack.run(Request.create('/again'), () => seen(stack).current), '/again');
});

test.run();
