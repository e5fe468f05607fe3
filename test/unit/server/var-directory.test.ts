import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { thrown } from '../helpers.js';
import { VAR_GITIGNORE, defaultUnderVar, makeVarDirectory, varUnderRoot } from '../../../lib/server/var-directory.js';

/** Runs `body` in a fresh directory, removed afterwards. */
function inTempDir(body: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'hk-var-directory-'));
  try {
    body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("var/ made for bin/serve's files gets a .gitignore that leaves all of it out of a project's version control, and is the owner's alone", () =>
  inTempDir((dir) => {
    assert.is(makeVarDirectory(['var/tls', 'var/profiler'], dir), true);
    assert.is(readFileSync(join(dir, 'var', '.gitignore'), 'utf8'), VAR_GITIGNORE);
    assert.ok(VAR_GITIGNORE.split('\n').includes('*'), 'ignores everything in var/, the .gitignore too');
    if (process.platform !== 'win32') assert.is(statSync(join(dir, 'var')).mode & 0o777, 0o700);
  }));

test('a profiler directory given under var/, relative or absolute, makes it too', () =>
  inTempDir((dir) => {
    assert.is(makeVarDirectory([join(dir, 'var', 'profiles')], dir), true);
    assert.ok(existsSync(join(dir, 'var', '.gitignore')));
  }));

test('a profiler directory that is var/ itself (--profiler-dir var) makes it with its .gitignore too, which the storage leaves alone', () =>
  inTempDir((dir) => {
    assert.is(makeVarDirectory(['var'], dir), true);
    assert.is(readFileSync(join(dir, 'var', '.gitignore'), 'utf8'), VAR_GITIGNORE);
  }));

test("a var/ that exists is the project's own: no .gitignore is added to it", () =>
  inTempDir((dir) => {
    mkdirSync(join(dir, 'var'));
    assert.is(makeVarDirectory(['var/tls'], dir), false);
    assert.not.ok(existsSync(join(dir, 'var', '.gitignore')));
  }));

test('nothing under var/ to keep (a profiler directory elsewhere, --https-port off, --tls-cert): no var/ is made', () =>
  inTempDir((dir) => {
    assert.is(makeVarDirectory(['profiles', '../var/tls', join(dir, 'var-other')], dir), false);
    assert.is(makeVarDirectory([], dir), false);
    assert.not.ok(existsSync(join(dir, 'var')));
  }));

test('a var/ that cannot be made is false, for the certificate cache and the storage to report', () =>
  inTempDir((dir) => {
    assert.is(makeVarDirectory(['var/tls'], join(dir, 'missing', 'parent')), false);
  }));

test("from a filesystem root, var/'s defaults would be the system's /var: refused, saying where to start it or what to give", () => {
  const problem = varUnderRoot(['var/tls', 'var/profiler'], '/');
  assert.ok(problem !== null);
  assert.match(problem!, '/var/tls and /var/profiler');
  assert.match(problem!, 'WorkingDirectory=');
  assert.match(problem!, '--profiler-dir');
});

test('from a root, absolute directories and none under var/ are the operator\'s choice; from a project, var/ is fine', () => {
  assert.is(varUnderRoot(['/var/lib/app/profiles'], '/'), null);
  assert.is(varUnderRoot([], '/'), null);
  assert.is(varUnderRoot(['profiles'], '/'), null);
  inTempDir((dir) => assert.is(varUnderRoot(['var/tls', 'var/profiler'], dir), null));
});

test("an embedder's default under var/ gets var/ made with its .gitignore; from a filesystem root, whose var/ is the system's, it throws, naming the option to give instead", () => {
  inTempDir((dir) => {
    assert.is(defaultUnderVar('var/profiler', 'profiler: { dir }', dir), 'var/profiler');
    assert.is(readFileSync(join(dir, 'var', '.gitignore'), 'utf8'), VAR_GITIGNORE);
  });
  const error = thrown(() => defaultUnderVar('var/profiler', 'profiler: { dir }', '/'));
  assert.match(error.message, "The default var/profiler would be /var/profiler, among the system's");
  assert.match(error.message, 'WorkingDirectory=');
  assert.match(error.message, 'or give profiler: { dir } elsewhere.');
});

test("from a root, var/ itself, however written, is the system's /var too: refused", () => {
  for (const path of ['var', 'var/', './var', '../var', 'var/tls/..']) assert.ok(varUnderRoot([path], '/') !== null, path);
});

test.run();
