// The package as a project gets it from the registry: packed by npm into its tarball, unpacked into a
// fresh project's node_modules with links to its declared `dependencies` alone (the clone's own, which
// npm ci installed: no network), and used from there. What only the clone has (its devDependencies, its
// sources beside dist/ whatever `files` says, its .gitignore, its working directory) is not there, so a
// runtime import of a dev-only package, a file left out of the tarball or a path into the package's own
// folder fails here rather than for the first user.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'undici';
import { exitOf, startServe, stopServes } from './serve-process.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
  exports: Record<string, unknown>;
  main?: string;
  types?: string;
  typesVersions?: Record<string, Record<string, string[]>>;
};

const test = suite('the package installed from its tarball');
test.after.each(stopServes);

/** The consumer's project (a realpath: stack frames name real paths, and macOS's tmpdir is a link). */
let project = '';
/** node_modules/http-kernel in it. */
let installed = '';

/**
 * npm as `npm test` runs it (npm_execpath), else the one on the PATH. Its cache, and the debug log it
 * writes there, are in the project: `npm pack` stores each tarball it makes in the cache, and every
 * run of the tests added the package's, about 1 MB, to the developer's ~/.npm.
 */
function npm(args: string[], cwd: string): string {
  const npmCli = process.env.npm_execpath;
  const [command, prefix] = npmCli !== undefined && /npm-cli\.js$/.test(npmCli) ? [process.execPath, [npmCli]] : ['npm', []];
  const env = { ...process.env, npm_config_cache: join(project, '.npm-cache'), npm_config_update_notifier: 'false' };
  return execFileSync(command, [...prefix, ...args], { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Links `name` from the clone's node_modules into the project's, as npm would have installed it there. */
function linkFromClone(name: string): void {
  const link = join(project, 'node_modules', name);
  mkdirSync(dirname(link), { recursive: true });
  // A junction on Windows needs no privilege; elsewhere the type is ignored.
  symlinkSync(join(root, 'node_modules', name), link, 'junction');
}

/** Every path under `dir`, with its size and modification time: what a run may not have changed. */
function snapshot(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).sort().map((path) => {
    const stats = statSync(join(dir, path));
    return `${path} ${stats.size} ${stats.mtimeMs}`;
  });
}

test.before(() => {
  project = realpathSync(mkdtempSync(join(tmpdir(), 'http-kernel-consumer-')));
  const modules = join(project, 'node_modules');
  mkdirSync(modules);
  // dist/ was built by `npm test` (or `npm run build`): --ignore-scripts packs it as it is, without building again.
  const [packed] = JSON.parse(npm(['pack', '--ignore-scripts', '--json', '--pack-destination', project], root)) as Array<{ filename: string }>;
  execFileSync('tar', ['-xzf', join(project, packed!.filename), '-C', modules]);
  renameSync(join(modules, 'package'), join(modules, 'http-kernel'));
  installed = join(modules, 'http-kernel');
  for (const name of Object.keys(manifest.dependencies)) linkFromClone(name);
  // The consumer's own devDependency, for its TypeScript check (the README asks TypeScript users for it).
  linkFromClone('@types/node');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
});

test.after(() => {
  if (project !== '') rmSync(project, { recursive: true, force: true });
});

test('every entry of the exports map loads with only the declared dependencies installed, from ESM and from CommonJS through import()', () => {
  const subpaths = Object.keys(manifest.exports).filter((subpath) => subpath !== './package.json');
  const specifiers = subpaths.map((subpath) => `http-kernel${subpath.slice(1)}`);
  writeFileSync(
    join(project, 'entries.mjs'),
    // One string per line: console.log colours a number argument when FORCE_COLOR is set, as under npm test.
    `for (const specifier of ${JSON.stringify(specifiers)}) console.log(specifier + ' ' + Object.keys(await import(specifier)).length);\n` +
      `console.log('version ' + (await import('http-kernel/package.json', { with: { type: 'json' } })).default.version);\n`,
  );
  writeFileSync(join(project, 'from-commonjs.cjs'), `import('http-kernel').then((kernel) => console.log(typeof kernel.HttpKernel));\n`);
  let output = '';
  try {
    output = execFileSync(process.execPath, ['entries.mjs'], { cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    assert.unreachable(`an entry does not load from the installed package: ${String((error as { stderr?: string }).stderr ?? error)}`);
  }
  const lines = output.trim().split('\n');
  assert.equal(lines.map((line) => line.split(' ')[0]), [...specifiers, 'version']);
  for (const line of lines.slice(0, -1)) assert.ok(Number(line.split(' ')[1]) > 0, `${line}: exports something`);
  assert.is(lines.at(-1), `version ${manifest.version}`);
  assert.is(execFileSync(process.execPath, ['from-commonjs.cjs'], { cwd: project, encoding: 'utf8' }).trim(), 'function');
});

test("npx http-kernel-serve keeps var/ in the project, out of its version control, writes nothing into node_modules, and its stack frames name the packed .ts sources on the lines they point at", async () => {
  const bin = join(installed, (JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin['http-kernel-serve']!);
  const before = snapshot(installed);
  const { child, urls, stderr } = await startServe(['--port', '0', '--https-port', '0'], project, bin);
  const response = await request(`${urls[0]}/robots.txt`, { headers: { accept: 'application/json' } });
  assert.is(response.statusCode, 404);
  const { trace } = (await response.body.json()) as { trace: Array<{ file: string; line: number }> };
  const exited = exitOf(child);
  child.kill('SIGTERM');
  assert.is(await exited, 0, `exit code after SIGTERM: ${stderr()}`);

  // The router's frame, mapped by the packed .js.map to the packed source, as the debug page and --ide links name it.
  assert.is(trace[0]!.file, join(installed, 'lib', 'routing', 'router-listener.ts'));
  const line = readFileSync(trace[0]!.file, 'utf8').split('\n')[trace[0]!.line - 1]!;
  assert.match(line, /throw new NotFoundHttpError/);
  assert.ok(statSync(join(project, 'var', 'tls', 'dev-cert.pem')).isFile(), 'the development certificate is in the project');
  assert.ok(statSync(join(project, 'var', 'profiler')).isDirectory(), 'the profiles are in the project');
  // The project has no .gitignore of the clone's: var/ carries its own, so `git add -A` leaves the key and the profiles out.
  assert.match(readFileSync(join(project, 'var', '.gitignore'), 'utf8'), /^\*$/m);
  assert.equal(snapshot(installed), before, 'nothing in node_modules/http-kernel was added or changed');
});

test('a TypeScript project type-checks against the packed declarations: strict, exactOptionalPropertyTypes, verbatimModuleSyntax, skipLibCheck off, with node16, nodenext and bundler resolution', () => {
  const subpaths = Object.keys(manifest.exports).filter((subpath) => subpath !== '.' && subpath !== './package.json');
  const consumer = `import { EventDispatcher, HttpKernel, KernelEvents, Request, Response, type KernelEventMap } from 'http-kernel';
import { createKernel } from 'http-kernel/app';
import { Route, RouteCollection } from 'http-kernel/routing';
import { createRequestListener, startServers } from 'http-kernel/server';
${subpaths.map((subpath, index) => `import * as entry${index} from 'http-kernel${subpath.slice(1)}';`).join('\n')}

export const entries = [${subpaths.map((_, index) => `entry${index}`).join(', ')}];
const routes = new RouteCollection();
routes.add('book', new Route('/books/:id', { defaults: { _controller: (_request: Request, params: { id: string }) => Response.json({ id: params.id }) } }));
const app = createKernel({ routes, debug: false });
app.dispatcher.addListener(KernelEvents.RESPONSE, (event) => event.response.setHeader('x-seen', '1'));
const onTerminate = (event: KernelEventMap['kernel.terminate']): number => event.response.status;
app.dispatcher.addListener(KernelEvents.TERMINATE, onTerminate);
export const status: number = (await app.inject('/books/1')).status;
export const running = await startServers(app.listener, { host: '127.0.0.1', port: 0, httpsPort: null });
export const own = createRequestListener(new HttpKernel(new EventDispatcher(), app.kernel.controllerResolver));
`;
  writeFileSync(join(project, 'consumer.ts'), consumer);
  const failures: string[] = [];
  for (const [resolution, module] of [['node16', 'node16'], ['nodenext', 'nodenext'], ['bundler', 'esnext']] as const) {
    const config = join(project, `tsconfig.${resolution}.json`);
    writeFileSync(config, JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module, moduleResolution: resolution, types: ['node'], noEmit: true,
        strict: true, exactOptionalPropertyTypes: true, verbatimModuleSyntax: true, skipLibCheck: false, noUncheckedIndexedAccess: true,
      },
      files: ['consumer.ts'],
    }));
    try {
      execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], { encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      failures.push(`${resolution}:\n${String((error as { stdout?: string }).stdout ?? error)}`);
    }
  }
  assert.equal(failures, [], failures.join('\n'));
});

test("main and types, for tools that do not read exports, name the root entry's files of exports", () => {
  const root = manifest.exports['.'] as { types: string; default: string };
  assert.equal({ main: manifest.main, types: manifest.types }, { main: root.default, types: root.types });
});

test('typesVersions, for tools that do not read exports, names each subpath of exports by its types, and nothing else', () => {
  const expected = Object.fromEntries(
    Object.entries(manifest.exports)
      .filter(([subpath]) => subpath !== '.' && subpath !== './package.json')
      .map(([subpath, target]) => [subpath.slice(2), [(target as { types: string }).types]]),
  );
  assert.equal(manifest.typesVersions, { '*': expected });
});

test('a TypeScript project whose resolution reads main, types and typesVersions, not exports (node10 of TypeScript 5, as old tools do), type-checks against the root entry and every subpath', () => {
  // TypeScript 7 removed node10 (moduleResolution "node"); bundler with exports turned off resolves a package as it did.
  const subpaths = Object.keys(manifest.exports).filter((subpath) => subpath !== '.' && subpath !== './package.json');
  writeFileSync(join(project, 'consumer-node10.ts'), `import { EventDispatcher, HttpKernel, KernelEvents, Request, Response } from 'http-kernel';
import { Route, RouteCollection } from 'http-kernel/routing';
import { createKernel } from 'http-kernel/app';
${subpaths.map((subpath, index) => `import * as entry${index} from 'http-kernel${subpath.slice(1)}';`).join('\n')}

export const entries = [${subpaths.map((_, index) => `entry${index}`).join(', ')}];
const routes = new RouteCollection();
routes.add('home', new Route('/', { defaults: { _controller: () => Response.json({ ok: true }) } }));
export const app = createKernel({ routes, debug: false });

const dispatcher = new EventDispatcher();
dispatcher.addListener(KernelEvents.RESPONSE, (event) => event.response.setHeader('x-seen', '1'));
export const kernel = new HttpKernel(dispatcher, { getController: (_request: Request) => () => Response.json({ ok: true }) });
`);
  const config = join(project, 'tsconfig.node10.json');
  writeFileSync(config, JSON.stringify({
    compilerOptions: {
      target: 'ES2022', module: 'esnext', moduleResolution: 'bundler', resolvePackageJsonExports: false, types: ['node'], noEmit: true,
      strict: true, exactOptionalPropertyTypes: true, skipLibCheck: false, noUncheckedIndexedAccess: true,
    },
    files: ['consumer-node10.ts'],
  }));
  let output = '';
  try {
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], { encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    output = String((error as { stdout?: string }).stdout ?? error);
  }
  assert.is(output, '', output);
});

test.run();
