// Option lists that an embedder keeps as constants (`as const`, `readonly` arrays) must be accepted
// where the kernel only reads them: type-checked under strict settings against the built package,
// imported by its name as a consumer imports it (as the README examples are).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { typeErrorsOf } from './consumer-types.js';

test('readonly lists are taken for a route\'s methods and schemes, and createKernel\'s subscribers and profiler collectors', () => {
  const output = typeErrorsOf(`
import { KernelEvents, type EventSubscriber, type Subscription } from 'http-kernel';
import { createKernel } from 'http-kernel/app';
import { type DataCollector } from 'http-kernel/profiler';
import { Route, RouteCollection } from 'http-kernel/routing';

const READ = ['GET', 'HEAD'] as const;
const SECURE: readonly string[] = ['https'];
class Noop implements EventSubscriber {
  getSubscribedEvents(): Record<string, Subscription> { return { [KernelEvents.REQUEST]: 'onRequest' }; }
  onRequest(): void {}
}
const subscribers: readonly EventSubscriber[] = [new Noop()];
const collectors: readonly DataCollector[] = [{ name: 'noop', lateCollect: () => null }];
const routes = new RouteCollection().add('book', new Route('/books/:id', { methods: READ, schemes: SECURE }));
createKernel({ routes, subscribers, profiler: { collectors } });
`, 'option-types');
  assert.is(output, '', `a consumer's readonly option lists do not compile:\n${output}`);
});

test("a log level's name capitalised ('Warning', 'Error', 'Warn') type-checks, as the runtime takes any case; another mix of cases is still a type error", () => {
  const output = typeErrorsOf(`
import { createKernel } from 'http-kernel/app';
import { Logger, createBus, toLevel, type LogLevelInput } from 'http-kernel/log';

const levels: LogLevelInput[] = ['Warning', 'Error', 'Emergency', 'Notice', 'Warn', 'Err', 'Crit', 'Emerg', 'warning', 'WARNING', 'warn', 'WARN'];
new Logger({ bus: createBus(), level: 'Info' }).log('Error', 'failed');
createKernel({ logLevel: 'Debug', stderrLogLevel: 'Warning' });
toLevel('Critical');
// @ts-expect-error: only all lower, all upper or capitalised
const odd: LogLevelInput = 'wARNING';
`, 'option-types');
  assert.is(output, '', `capitalised level names do not compile:\n${output}`);
});

test.run();
