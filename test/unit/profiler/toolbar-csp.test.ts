import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { allowToolbarInPolicy } from '../../../lib/profiler/toolbar-csp.js';
import { TOOLBAR_CSP_HASHES } from '../../../lib/profiler/ui/index.js';

const SCRIPT = TOOLBAR_CSP_HASHES.script.join(' ');
const STYLE = TOOLBAR_CSP_HASHES.style.join(' ');

test('the directive that governs inline scripts and styles gets the toolbar\'s hashes', () => {
  assert.is(allowToolbarInPolicy("script-src 'self'; style-src 'self'"), `script-src 'self' ${SCRIPT}; style-src 'self' ${STYLE}`);
  assert.is(allowToolbarInPolicy("script-src 'self' 'nonce-abc'; style-src-elem 'self'; style-src 'self'"), `script-src 'self' 'nonce-abc' ${SCRIPT}; style-src-elem 'self' ${STYLE}; style-src 'self'`);
});

test('a default-src alone gives new script-src and style-src directives its sources and the hashes, and allows nothing else more', () => {
  // helmet's default policy, in short.
  assert.is(
    allowToolbarInPolicy("default-src 'self'; img-src 'self' data:; object-src 'none'"),
    `default-src 'self'; img-src 'self' data:; object-src 'none'; script-src 'self' ${SCRIPT}; style-src 'self' ${STYLE}`,
  );
  assert.is(allowToolbarInPolicy("default-src 'none'"), `default-src 'none'; script-src ${SCRIPT}; style-src ${STYLE}`);
});

test('a directive allowing inline elements already is left alone: a hash would turn its \'unsafe-inline\' off', () => {
  const helmet = "default-src 'self'; script-src 'self'; style-src 'self' https: 'unsafe-inline'";
  assert.is(allowToolbarInPolicy(helmet), `default-src 'self'; script-src 'self' ${SCRIPT}; style-src 'self' https: 'unsafe-inline'`);
  const open = "script-src 'unsafe-inline'; style-src 'unsafe-inline'";
  assert.is(allowToolbarInPolicy(open), open);
  // With a nonce, 'unsafe-inline' is already ignored by browsers: the hashes are needed.
  assert.is(allowToolbarInPolicy("script-src 'unsafe-inline' 'nonce-x'"), `script-src 'unsafe-inline' 'nonce-x' ${SCRIPT}`);
});

test('a policy that governs neither scripts nor styles, or holds the hashes already, is returned as it is', () => {
  for (const policy of ["img-src 'self'", "frame-ancestors 'none'", '', `script-src ${SCRIPT}; style-src ${STYLE}`]) {
    assert.is(allowToolbarInPolicy(policy), policy);
  }
});

test('a header of several policies (comma-separated, each enforced) gets the hashes in each; no source moves from one policy to another', () => {
  assert.is(allowToolbarInPolicy("script-src 'self', img-src 'none'"), `script-src 'self' ${SCRIPT}, img-src 'none'`);
  assert.is(allowToolbarInPolicy("script-src 'self', style-src 'none'"), `script-src 'self' ${SCRIPT}, style-src ${STYLE}`);
  assert.is(allowToolbarInPolicy("default-src 'self', script-src 'nonce-abc'"), `default-src 'self'; script-src 'self' ${SCRIPT}; style-src 'self' ${STYLE}, script-src 'nonce-abc' ${SCRIPT}`);
  const untouched = "img-src 'self', frame-ancestors 'none'";
  assert.is(allowToolbarInPolicy(untouched), untouched);
});

test.run();
