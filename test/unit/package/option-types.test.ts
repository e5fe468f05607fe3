// Option lists that an embedder keeps as constants (`as const`, `readonly` arrays) must be accepted
// where the kernel only reads them: type-checked under strict settings against the built package,
// imported by its name as a consumer imports it (as the README examples are).
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

/** What tsc says of `code` as a consumer's module ('' when it compiles). */
function typeErrorsOf(code: string): string {
  // Inside the package (under var/, ignored by git), so that `http-kernel` resolves to itself.
  const dir = join(root, 'var', 'option-types');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    writeFileSync(join(dir, 'consumer.ts'), `${code}\nexport {};\n`);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2023'], types: ['node'], noEmit: true },
      files: ['consumer.ts'],
    }));
    try {
      execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8', stdio: 'pipe' });
      return '';
    } catch (error) {
      return String((error as { stdout?: string }).stdout ?? error);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

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
`);
  assert.is(output, '', `a consumer's readonly option lists do not compile:\n${output}`);
});

test.run();
