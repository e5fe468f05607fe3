import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BadRequestHttpError, Request, RequestStack, Response } from '../../../kernel/index.js';
import { createErrorController } from '../../../lib/errors/index.js';

/** The error controller's answer to a request that failed with `error`, in debug mode. */
function answerTo(error: Error): Response {
  const request = new Request('/echo', { method: 'POST' });
  request.attributes.set('exception', error);
  return createErrorController({ debug: true, requestStack: new RequestStack() })(request) as Response;
}

test('X-Debug-Exception carries the message, percent-encoded', () => {
  const response = answerTo(new BadRequestHttpError('No "x" here.'));
  assert.is(decodeURIComponent(String(response.headers['x-debug-exception'])), 'No "x" here.');
});

test('a message quoting half an emoji (as JSON.parse does) is a 400 with U+FFFD in X-Debug-Exception, never a URIError', () => {
  let parseMessage = '';
  try {
    JSON.parse('😀');
  } catch (error) {
    parseMessage = (error as Error).message;
  }
  assert.ok(parseMessage.includes("'\ud83d'"), 'V8 quotes the lone high surrogate');
  const response = answerTo(new BadRequestHttpError(`Malformed JSON body: ${parseMessage}.`));
  assert.is(response.status, 400);
  assert.is(decodeURIComponent(String(response.headers['x-debug-exception'])), `Malformed JSON body: ${parseMessage.replace('\ud83d', '\ufffd')}.`);
});

test('a long message cut inside a surrogate pair ends in U+FFFD in X-Debug-Exception', () => {
  const response = answerTo(new BadRequestHttpError(`${'x'.repeat(1999)}😀 and more`));
  assert.is(decodeURIComponent(String(response.headers['x-debug-exception'])), `${'x'.repeat(1999)}\ufffd`);
});

test.run();
