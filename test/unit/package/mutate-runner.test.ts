// mutation/run.mjs, behind `npm run mutate`: the Stryker configuration it writes, run in a copy of the
// project whose Stryker is a stand-in (Stryker itself is installed on first use, never by npm ci).
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

const test = suite('mutation runner');

/**
 * A stand-in for Stryker: it runs the configuration's buildCommand as Stryker does, through execa's
 * execaCommand (split on spaces, a space escaped with a backslash kept: execa's parseCommandString),
 * without a shell, and prints what the build printed, then the sources it would mutate and the test command. CommonJS, as a file without a package.json is.
 */
const FAKE_STRYKER = `#!/usr/bin/env node
const { spawnSync } = require('node:child_process');
const { readFileSync } = require('node:fs');
const config = JSON.parse(readFileSync(process.argv[3], 'utf8'));
const words = [];
for (const token of config.buildCommand.trim().split(/ +/g)) {
  const previous = words.at(-1);
  if (previous !== undefined && previous.endsWith('\\\\')) words[words.length - 1] = previous.slice(0, -1) + ' ' + token;
  else words.push(token);
}
const build = spawnSync(words[0] === 'node' ? process.execPath : words[0], words.slice(1), { encoding: 'utf8' });
process.stdout.write(build.stdout + build.stderr);
process.stdout.write(\`mutate: \${config.mutate.join(' ')}\\ntests: \${config.commandRunner.command}\\nconcurrency: \${config.concurrency}\\n\`);
process.exitCode = build.status ?? 1;
`;

/** Runs mutation/run.mjs with `args` in a copy of the project made under `parent`; its exit code and output. */
function mutateIn(parent: string, args: string[], env: NodeJS.ProcessEnv = process.env): { status: number | null; output: string } {
  const project = join(parent, 'project');
  const files: Record<string, string> = {
    'kernel/thing.ts': 'export const thing = 1;\n',
    'dist/test/unit/kernel/thing.test.js': '',
    'test/unit/kernel/thing.test.ts': '',
    // The project's tsc, which the build command names: it says it ran, and with what.
    'node_modules/typescript/bin/tsc': "process.stdout.write(`tsc ran: ${process.argv.slice(2).join(' ')}\\n`);\n",
    'mutation/node_modules/.bin/stryker': FAKE_STRYKER,
  };
  for (const [name, body] of Object.entries(files)) {
    mkdirSync(dirname(join(project, name)), { recursive: true });
    writeFileSync(join(project, name), body);
  }
  chmodSync(join(project, 'mutation/node_modules/.bin/stryker'), 0o755);
  copyFileSync(join(root, 'mutation', 'run.mjs'), join(project, 'mutation', 'run.mjs'));
  const run = spawnSync(process.execPath, [join(project, 'mutation', 'run.mjs'), ...args], { cwd: project, encoding: 'utf8', timeout: 30_000, env });
  return { status: run.status, output: run.stdout + run.stderr };
}

test("Stryker's build command runs the project's tsc from a project whose path has a space in it", () => {
  const parent = mkdtempSync(join(tmpdir(), 'http-kernel mutate-'));
  try {
    const { status, output } = mutateIn(parent, ['kernel/thing.ts', '--tests', 'dist/test/unit/kernel/thing.test.js']);
    assert.is(output.split('\n')[0], 'tsc ran: -p tsconfig.json', output);
    assert.is(status, 0);
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test("a source or tests named by an absolute path inside the project are taken as the project's; the tests then run in Stryker's sandbox, not the project's own build", () => {
  const parent = mkdtempSync(join(tmpdir(), 'http-kernel-mutate-'));
  try {
    const project = join(parent, 'project');
    const { status, output } = mutateIn(parent, [join(project, 'kernel/thing.ts'), '--tests', join(project, 'dist/test/unit/kernel/thing.test.js')]);
    assert.is(status, 0, output);
    assert.ok(output.includes(`\nmutate: kernel/thing.ts\ntests: node test/run.mjs dist/test/unit/kernel '^thing\\.test\\.js$'\n`), output);
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test("a test named by its source (test/....test.ts) runs compiled, as test/run.mjs takes a source folder for its compiled twin", () => {
  const parent = mkdtempSync(join(tmpdir(), 'http-kernel-mutate-'));
  try {
    const { status, output } = mutateIn(parent, ['kernel/thing.ts', '--tests', 'test/unit/kernel/thing.test.ts']);
    assert.is(status, 0, output);
    assert.ok(output.includes(`\ntests: node test/run.mjs dist/test/unit/kernel '^thing\\.test\\.js$'\n`), output);
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test('a source or tests outside the project are refused, saying so', () => {
  const parent = mkdtempSync(join(tmpdir(), 'http-kernel-mutate-'));
  try {
    writeFileSync(join(parent, 'outside.ts'), '');
    assert.equal(mutateIn(parent, ['../outside.ts']), { status: 2, output: 'no such source in the project: ../outside.ts\n' });
    assert.equal(mutateIn(parent, ['kernel/thing.ts', '--tests', '../outside.ts']), { status: 2, output: 'no such compiled tests in the project: ../outside.ts (build first, or name them with --tests)\n' });
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test('MUTATE_CONCURRENCY is a whole number of at least 1, passed to Stryker; anything else is refused before Stryker starts', () => {
  const parent = mkdtempSync(join(tmpdir(), 'http-kernel-mutate-'));
  try {
    const args = ['kernel/thing.ts', '--tests', 'dist/test/unit/kernel/thing.test.js'];
    const two = mutateIn(parent, args, { ...process.env, MUTATE_CONCURRENCY: '2' });
    assert.is(two.status, 0, two.output);
    assert.ok(two.output.includes('\nconcurrency: 2\n'), two.output);
    for (const bad of ['abc', '0', '1.5', '']) {
      assert.equal(mutateIn(parent, args, { ...process.env, MUTATE_CONCURRENCY: bad }), {
        status: 2,
        output: `MUTATE_CONCURRENCY must be a whole number of at least 1, got ${JSON.stringify(bad)}\n`,
      }, bad);
    }
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test("a source may end with Stryker's line range, passed on as given; the file is what must exist", () => {
  const parent = mkdtempSync(join(tmpdir(), 'http-kernel-mutate-'));
  try {
    const tests = ['--tests', 'dist/test/unit/kernel/thing.test.js'];
    const ranged = mutateIn(parent, ['kernel/thing.ts:1-1', './kernel/thing.ts:1:0-1:5', ...tests]);
    assert.is(ranged.status, 0, ranged.output);
    assert.ok(ranged.output.includes('\nmutate: kernel/thing.ts:1-1 kernel/thing.ts:1:0-1:5\n'), ranged.output);
    assert.equal(mutateIn(parent, ['kernel/other.ts:1-2', ...tests]), { status: 2, output: 'no such source: kernel/other.ts:1-2\n' });
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test.run();
