// The README's TypeScript examples are what embedders copy first: each one must type-check under
// strict settings against the built package, imported by its name as a consumer imports it. An
// example starts with its imports; one that starts with `// continues` is checked after the last
// example before it that stands alone (whose `app` it uses). Anything else is skipped.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

/** The README's ```ts examples as they are checked, with the line each starts on. */
function examplesOf(readme: string): { line: number; code: string }[] {
  const examples: { line: number; code: string }[] = [];
  const fence = /^```ts\n([\s\S]*?)^```$/gm;
  let standalone: string | null = null;
  for (let found = fence.exec(readme); found !== null; found = fence.exec(readme)) {
    let code = found[1]!;
    if (code.startsWith('import ')) standalone = code;
    else if (code.startsWith('// continues') && standalone !== null) code = `${standalone}\n${code}`;
    else continue;
    examples.push({ line: readme.slice(0, found.index).split('\n').length + 1, code });
  }
  return examples;
}

test('every TypeScript example of the README type-checks under strict settings', () => {
  const examples = examplesOf(readFileSync(join(root, 'README.md'), 'utf8'));
  assert.ok(examples.length >= 8, `only ${examples.length} examples found`);
  // Inside the package (under var/, ignored by git), so that `http-kernel` resolves to itself.
  const dir = join(root, 'var', 'readme-examples');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    const files = examples.map(({ line, code }) => {
      const file = `line-${line}.ts`;
      writeFileSync(join(dir, file), `${code}\nexport {};\n`);
      return file;
    });
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2023'], types: ['node'], noEmit: true, skipLibCheck: false },
      files,
    }));
    let output = '';
    try {
      execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    // tsc names each file by the README line its example starts on.
    assert.is(output, '', `README examples that do not compile:\n${output}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
