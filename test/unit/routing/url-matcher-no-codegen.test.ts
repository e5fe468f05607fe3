// Where code generation from strings is disallowed, the matcher falls back to its generic
// parameter builder: the matcher's own tests must pass there too.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

for (const file of ['url-matcher.test.js', 'url-matcher-priority.test.js', 'symfony-fidelity.test.js', 'url-matcher-oracle.test.js']) {
  test(`${file} passes without code generation`, () => {
    const run = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', fileURLToPath(new URL(file, import.meta.url))], {
      encoding: 'utf8',
      // The differential property's runs here are fewer: the generic builder is all that changes.
      env: { FC_RUNS: file === 'url-matcher-oracle.test.js' ? '400' : undefined, ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
    });
    // Only the names of the failed tests: the child's own summary would be read as ours.
    const failed = run.stdout.split('\n').filter((line) => line.includes('FAIL')).join('\n');
    assert.is(run.status, 0, `${failed}\n${run.stderr}`);
    assert.match(run.stdout, /Passed:\s+[1-9]/);
  });
}

test.run();
