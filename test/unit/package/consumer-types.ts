// Type-checks a consumer's module under strict settings against the built package, imported by its
// name as a consumer imports it: what the type tests of this folder assert on.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

/** What tsc says of `code` as a consumer's module ('' when it compiles); `name` is its scratch folder under var/. */
export function typeErrorsOf(code: string, name: string): string {
  // Inside the package (under var/, ignored by git), so that `http-kernel` resolves to itself.
  const dir = join(root, 'var', name);
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
