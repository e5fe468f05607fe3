// The HTML error pages run only their own style under their Content-Security-Policy, with a fresh nonce each.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HttpError, Request, RequestStack, Response } from '../../../kernel/index.js';
import { createErrorController, debugPagePolicy, flattenError, renderDebugPage } from '../../../lib/errors/index.js';
import { allowsInline, inlineCode, inlineElements, sourcesFor, startTags } from '../../csp-check.js';

const XSS = '<script>alert(1)</script><a href="javascript:alert(2)" onclick="alert(3)" style="x">';

/** The error controller's answer to a request that failed with `error`. */
function answerTo(error: Error, options: { debug?: boolean; accept?: string } = {}): Response {
  const request = new Request(`/echo?q=${encodeURIComponent(XSS)}`, { method: 'GET', headers: options.accept ? { accept: options.accept } : {} });
  request.attributes.set('exception', error);
  return createErrorController({ debug: options.debug ?? true, requestStack: new RequestStack() })(request) as Response;
}

function policyOf(response: Response): string {
  const policy = response.headers['content-security-policy'];
  assert.type(policy, 'string', 'one Content-Security-Policy header');
  return policy as string;
}

function nonceOf(policy: string): string {
  const nonce = /'nonce-([^']+)'/.exec(policy)?.[1];
  assert.ok(nonce !== undefined, policy);
  return nonce!;
}

for (const debug of [true, false]) {
  const kind = debug ? 'debug' : 'plain';

  test(`the ${kind} page's policy allows its <style> by nonce, and it holds no script, event handler, javascript: URL or style= attribute`, () => {
    const response = answerTo(new HttpError(500, XSS), { debug });
    const policy = policyOf(response);
    const body = String(response.body);
    const elements = inlineElements(body);
    assert.equal(elements.map((element) => element.tag), ['style']);
    assert.is(elements[0]!.attributes.get('nonce'), nonceOf(policy));
    assert.ok(allowsInline(policy, elements[0]!));
    assert.equal(inlineCode(body), []);
    assert.equal(sourcesFor(policy, 'default-src'), ["'none'"]);
    assert.equal(sourcesFor(policy, 'script-src-elem'), ["'none'"], 'no script of its own');
    assert.equal(sourcesFor(policy, 'style-src-elem'), [`'nonce-${nonceOf(policy)}'`]);
    assert.equal(sourcesFor(policy, 'base-uri'), ["'none'"]);
    assert.equal(sourcesFor(policy, 'form-action'), ["'none'"]);
  });

  test(`the ${kind} page declares an empty data: icon, which its policy allows, so a browser asks for no /favicon.ico (a 404 of its own); it loads nothing else`, () => {
    const response = answerTo(new HttpError(404, 'x'), { debug });
    const page = String(response.body);
    const loads = startTags(page).filter((tag) => ['link', 'img', 'iframe', 'object', 'embed', 'base', 'form', 'script'].includes(tag.name));
    assert.equal(loads.map((tag) => tag.source), ['<link rel="icon" href="data:,">']);
    assert.equal(sourcesFor(policyOf(response), 'img-src'), ['data:']);
  });

  test(`every ${kind} page gets a fresh nonce of 128 random bits`, () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const nonce = nonceOf(policyOf(answerTo(new HttpError(404, 'x'), { debug })));
      assert.match(nonce, /^[A-Za-z0-9+/]{22}==$/);
      nonces.add(nonce);
    }
    assert.is(nonces.size, 50);
  });

  test(`a policy the error asks for gives way to the ${kind} page's own`, () => {
    const response = answerTo(new HttpError(503, 'Down.', { headers: { 'Content-Security-Policy': "script-src 'unsafe-inline'", 'retry-after': '5' } }), { debug });
    assert.is(response.headers['retry-after'], '5');
    assert.match(policyOf(response), /^default-src 'none'; style-src 'nonce-/);
  });
}

test('the debug page may not be framed and lets the debug toolbar fetch its bar from this origin', () => {
  const policy = policyOf(answerTo(new HttpError(404, 'x')));
  assert.equal(sourcesFor(policy, 'frame-ancestors'), ["'none'"]);
  assert.equal(sourcesFor(policy, 'connect-src'), ["'self'"]);
  assert.is(debugPagePolicy('abc'), policy.replace(/'nonce-[^']+'/, "'nonce-abc'"));
});

test('the plain page leaves framing to the application: it is the public error page of its URLs', () => {
  assert.is(sourcesFor(policyOf(answerTo(new HttpError(404, 'x'), { debug: false })), 'frame-ancestors'), undefined);
});

test('the debug page with logs and a cause chain puts the nonce on its only inline element', () => {
  const errors = flattenError(new Error(XSS, { cause: new TypeError(XSS) }));
  const logs = [{ time: 0, level: 3, levelName: 'ERROR' as const, channel: XSS, message: XSS, context: { [XSS]: XSS } }];
  const page = renderDebugPage({ errors, logs, request: { method: XSS, uri: XSS }, status: 500, profilerUrl: `javascript:${XSS}`, nonce: 'n0nce' });
  assert.equal(inlineElements(page).map((element) => [element.tag, element.attributes.get('nonce')]), [['style', 'n0nce']]);
  assert.equal(inlineCode(page), []);
});

test.run();
