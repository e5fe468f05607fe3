// Mutation testing: `npm run mutate -- <source.ts ...> [--tests <compiled test dir or file> ...]`.
// Stryker edits each named source one mutant at a time (a `<` made `<=`, a branch made
// `true`, a string emptied, ...), builds once, and runs the tests for each mutant; a
// mutant no test notices "survives" and points at behaviour nothing checks.
// Without --tests, the unit tests beside the first source run (test/unit/<its folder>).
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
/**
 * A path as given (from the project's directory, where npm runs the script), relative to the project; `outside` when it is not in it.
 * A source may end with Stryker's line range (`kernel/request.ts:120-180`), kept in `range`.
 */
function inProject(given) {
  const [, file, range = ''] = /^(.*?)((?::\d+(?::\d+)?-\d+(?::\d+)?)?)$/.exec(given);
  const path = relative(root, resolve(root, file));
  return { given, path, range, outside: path === '' || path === '..' || path.startsWith(`..${sep}`) || isAbsolute(path) };
}

const split = args.indexOf('--tests');
// Relative to the project, as Stryker's sandbox has them: a test named by its absolute path would
// otherwise run against the project's own build, where no mutant is, and let every one survive.
const sources = (split === -1 ? args : args.slice(0, split)).map(inProject);
// A test named by its source (test/unit/x.test.ts) runs compiled (dist/test/unit/x.test.js), as test/run.mjs
// runs a source folder's compiled twin: given to test/run.mjs as a folder, it ran no test, and Stryker stopped at its first run.
const tests = (split === -1 ? [] : args.slice(split + 1)).map(inProject).map((test) =>
  test.path.startsWith(`test${sep}`) && test.path.endsWith('.ts') ? { ...test, path: join('dist', test.path.replace(/\.ts$/, '.js')) } : test,
);
const concurrency = Number(process.env.MUTATE_CONCURRENCY ?? 1);
if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
  console.error(`MUTATE_CONCURRENCY must be a whole number of at least 1, got ${JSON.stringify(process.env.MUTATE_CONCURRENCY)}`);
  process.exit(2);
}

if (sources.length === 0 || (split !== -1 && tests.length === 0) || args.includes('--help')) {
  console.error('usage: npm run mutate -- <source.ts ...> [--tests <dist/test/... dir or .test.js file, or its test/... source> ...]');
  console.error('  e.g. npm run mutate -- kernel/event-dispatcher.ts --tests dist/test/unit/kernel');
  console.error('  A source may name lines: kernel/request.ts:120-180.');
  console.error('  MUTATE_CONCURRENCY=2 runs two mutants at a time (default 1).');
  process.exit(2);
}
for (const source of sources) {
  if (source.outside || !existsSync(join(root, source.path))) {
    console.error(`no such source${source.outside ? ' in the project' : ''}: ${source.given}`);
    process.exit(2);
  }
}
// The default tests: the unit folder mirroring the first source's (kernel/x.ts -> dist/test/unit/kernel).
const defaultTests = join('dist/test/unit', dirname(sources[0].path).replace(/^lib(?:\/|$)/, ''));
const targets = tests.length > 0 ? tests : [{ given: defaultTests, path: defaultTests, outside: false }];
for (const target of targets) {
  if (target.outside || !existsSync(join(root, target.path))) {
    console.error(`no such compiled tests${target.outside ? ' in the project' : ''}: ${target.given} (build first, or name them with --tests)`);
    process.exit(2);
  }
}
// Each target runs through test/run.mjs, a file as its folder with a pattern naming it alone: a uvu file run
// on its own exits 0 when a test throws something that is no Error (uvu's report of it fails, and the
// rest of the file is skipped unsaid), which run.mjs counts as failed from uvu's totals. Several targets
// run one after another, and any failure kills the mutant.
const command = targets
  .map(({ path }) => (path.endsWith('.js') ? `node test/run.mjs ${dirname(path)} '^${basename(path).replace(/[.]/g, '\\.')}$'` : `node test/run.mjs ${path}`))
  .join(' && ');

const dir = mkdtempSync(join(tmpdir(), 'http-kernel-mutate-'));
const config = join(dir, 'stryker.conf.json');
writeFileSync(config, JSON.stringify({
  mutate: sources.map(({ path, range }) => path + range),
  testRunner: 'command',
  commandRunner: { command },
  // Stryker builds before it links node_modules into its sandbox: the project's own tsc, by its full path.
  // Not a shell: Stryker splits the command on spaces, but keeps a space escaped with a backslash.
  buildCommand: `node ${join(root, 'node_modules/typescript/bin/tsc').replaceAll(' ', '\\ ')} -p tsconfig.json`,
  // Stryker's tsconfig rewriting does not know TypeScript 7; nothing needs it (tsc emits despite the
  // type errors of instrumented code, and the command runner needs no per-test coverage).
  tsconfigFile: 'tsconfig.stryker-none.json',
  checkers: [],
  concurrency,
  ignorePatterns: ['dist', 'var', 'bench', 'mutation', 'reports', '.stryker-tmp'],
  // Inside the project, so the sandbox's node_modules link resolves as the project's does.
  tempDirName: '.stryker-tmp',
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  timeoutMS: 20000,
  cleanTempDir: true,
}, null, 2));

const stryker = join(root, 'mutation/node_modules/.bin/stryker');
const child = spawn(stryker, ['run', config], { cwd: root, stdio: 'inherit' });
// Ctrl-C reaches Stryker too (one process group): wait for it to stop, then clean up. A SIGTERM sent to
// this process alone is passed on.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('close', (code) => {
  rmSync(dir, { recursive: true, force: true });
  process.exitCode = code ?? 1;
});
