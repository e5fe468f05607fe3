import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderPlainPage } from '../../../lib/errors/plain-page.js';

test('titles the page "An Error Occurred: <status text>"', () => {
  assert.match(renderPlainPage(404), /<title>An Error Occurred: Not Found<\/title>/);
  assert.match(renderPlainPage(500), /<title>An Error Occurred: Internal Server Error<\/title>/);
});

test('says which status the server returned', () => {
  const document = renderPlainPage(404);
  assert.ok(document.includes('<h1>Oops! An Error Occurred</h1>'));
  assert.ok(document.includes('The server returned a "404 Not Found".'));
});

test('uses the given charset', () => {
  assert.ok(renderPlainPage(404, 'ISO-8859-1').includes('<meta charset="ISO-8859-1">'));
  assert.ok(renderPlainPage(404).includes('<meta charset="UTF-8">'));
});

test('shows nothing internal: no stack, file paths, classes or links', () => {
  const document = renderPlainPage(500);
  for (const leak of [process.cwd(), '.ts', '.js', 'node:', ' at ', 'Error:', 'Exception', 'profiler', '<script', '<a ']) {
    assert.not.ok(document.includes(leak), `page contains ${leak}`);
  }
});

test.run();
