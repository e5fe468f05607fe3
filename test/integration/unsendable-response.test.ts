// A Response that node:http refuses to write (a header with CR/LF or a character beyond Latin-1, a
// header name that is no token, an interim status, a body of another type), over real sockets: the
// client gets the kernel's error page for a ResponseNotSendableError, with its status and X-Debug-Token,
// the failure is logged once, and the profile records the 500 that went out, not the refused answer.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Response, type Controller, type ExceptionEvent, type Request } from '../../kernel/index.js';
import { LogLevel, type LogEntry, type LogRecord } from '../../lib/log/index.js';
import type { RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, fetchFrom, header, rawStatus, readResponses, savedProfile, sendRaw, routesOf, startTestServer, type TestServer } from './harness.js';

const controllers: Record<string, Controller> = {
  // The classic: a query value reflected into Location, with a Set-Cookie line smuggled in (set as a
  // header: Response.redirect() refuses a control character at the call).
  '/go': (request: Request) => new Response('', 302, { location: `/next?to=${request.query.get('to') ?? ''}` }),
  '/euro': () => new Response('priced', 200, { 'x-price': '5 €' }),
  '/download': () => new Response('x', 200, { 'content-disposition': 'attachment; filename="r\u00e9sum\u00e9 \u2603.pdf"' }),
  '/bad-name': () => new Response('named', 200, { 'bad name': 'x' }),
  '/interim': () => new Response('', 103),
  '/number-body': () => Object.assign(new Response(''), { body: 42 }),
  // An error of handle() itself, which escapes it when no kernel.exception listener answers.
  '/throw': () => {
    throw new Error('the order service is down');
  },
  // A function thrown: a value the error listener keeps as it does an object.
  '/throw-function': () => {
    throw function orderServiceDown() {};
  },
};

const routes = (): RouteCollection => routesOf(controllers);

for (const scheme of SCHEMES) {
  const test = suite(`a response node:http refuses to send, over ${scheme}`);
  let debug: TestServer;
  let plain: TestServer;
  let brokenPage: TestServer;
  let unanswered: TestServer;
  const records: LogRecord[] = [];
  const onLog = ({ record }: LogEntry): void => void records.push(record);
  const entries: LogEntry[] = [];
  const onEntry = (entry: LogEntry): void => void entries.push(entry);

  test.before(async () => {
    debug = await startTestServer({ kernel: { debug: true, routes: routes() } });
    plain = await startTestServer({ kernel: { debug: false, routes: routes() } });
    // An error page of the application's that cannot be sent either.
    brokenPage = await startTestServer({ kernel: { debug: true, routes: routes(), errorController: () => new Response('oops', 500, { 'x-broken': 'a\nb' }) } });
    debug.app.bus.on('log', onLog);
    // After the error listener has logged the error (priority 0), none answers it (its page comes at -128).
    const silencer = { getSubscribedEvents: () => ({ [KernelEvents.EXCEPTION]: ['silence', -64] as const }), silence: (event: ExceptionEvent) => event.stopPropagation() };
    unanswered = await startTestServer({ kernel: { debug: true, routes: routes(), subscribers: [silencer] } });
    unanswered.app.bus.on('log', onEntry);
  });
  /** Asks the server whose errors no listener answers for `path`: a 500, and one ERROR or CRITICAL record, attributed to its request. */
  const loggedOnce = async (path: string): Promise<{ body: string; severe: LogEntry }> => {
    entries.length = 0;
    const response = await fetchFrom(unanswered, scheme, path);
    assert.is(response.status, 500);
    const severe = entries.filter(({ record }) => record.level === LogLevel.CRITICAL || record.level === LogLevel.ERROR);
    assert.is(severe.length, 1, JSON.stringify(severe.map(({ record }) => record.message)));
    assert.ok(severe[0]!.request !== undefined, 'attributed to the request');
    return { body: response.body, severe: severe[0]! };
  };

  test.after(async () => {
    debug.app.bus.off('log', onLog);
    unanswered.app.bus.off('log', onEntry);
    await unanswered.close();
    await debug.close();
    await plain.close();
    await brokenPage.close();
  });

  test('a CR/LF reflected into Location: the debug error page names the error and the header, and nothing is split', async () => {
    records.length = 0;
    const response = await fetchFrom(debug, scheme, '/go?to=%0d%0aSet-Cookie:%20session=evil');
    assert.is(response.status, 500);
    assert.match(header(response.headers['content-type']), /^text\/html/);
    assert.is(response.headers['set-cookie'], undefined);
    assert.is(response.headers.location, undefined);
    assert.ok(response.body.includes('ResponseNotSendableError'), 'the class is on the page');
    assert.ok(response.body.includes('The response cannot be sent: Invalid character in header content [&quot;location&quot;].'), 'the message names the header');
    assert.match(decodeURIComponent(header(response.headers['x-debug-exception'])), /^The response cannot be sent: Invalid character in header content \["location"\]\.$/);
    // Logged once, by the kernel's error listener, not also as the adapter's unhandled error.
    const critical = records.filter((record) => record.level === LogLevel.CRITICAL);
    assert.is(critical.length, 1, JSON.stringify(critical.map((record) => record.message)));
    assert.match(critical[0]!.message, /^Uncaught error: ResponseNotSendableError: /);
  });

  test('a refusal no kernel.exception listener answers is a bare 500, logged once on its request: the error listener\'s record, not also as unhandled', async () => {
    const { body, severe } = await loggedOnce('/go?to=%0d%0a');
    assert.is(body, 'Internal Server Error\n');
    assert.match(severe.record.message, /^Uncaught error: ResponseNotSendableError: /);
  });

  test('an error of handle() no kernel.exception listener answers escapes it and is logged once on its request: the error listener\'s record, not also as unhandled', async () => {
    const { severe } = await loggedOnce('/throw');
    assert.match(severe.record.message, /^Uncaught error: Error: "the order service is down" at /);
  });

  test('a function thrown by handle() that no kernel.exception listener answers is logged once on its request too', async () => {
    const { severe } = await loggedOnce('/throw-function');
    assert.match(severe.record.message, /^Uncaught error: /);
  });

  test('the profile records the 500 that went out, its exception chain and its error sub-request', async () => {
    const response = await fetchFrom(debug, scheme, '/go?to=%0d%0a');
    const token = header(response.headers['x-debug-token']);
    assert.match(token, /^[0-9a-f]{6}$/);
    const sub = header(response.headers['x-previous-debug-token']);
    assert.match(sub, /^[0-9a-f]{6}$/);
    const profile = await savedProfile(debug, token);
    assert.is(profile.status, 500, 'not the 302 that could not be sent');
    const chain = profile.collectors.exception.exceptions.map((error: { class: string }) => error.class);
    assert.equal(chain.slice(0, 2), ['ResponseNotSendableError', 'TypeError']);
    assert.ok(profile.children.includes(sub), 'the error page is a child of the request');
    const child = await savedProfile(debug, sub);
    assert.is(child.parent, token);
  });

  test('each kind of refusal is an error page with a 500, HTML or problem+json', async () => {
    const cases: Array<[string, RegExp]> = [
      ['/euro', /Invalid character in header content \["x-price"\]/],
      ['/bad-name', /Header name must be a valid HTTP token \["bad name"\]/],
      ['/interim', /A response sent to the client has a final status \(200 or more\), not 103\./],
      ['/number-body', /A response body is a string, bytes, a readable stream or null, not number 42\./],
    ];
    for (const [path, message] of cases) {
      const json = await fetchFrom(debug, scheme, path, { headers: { accept: 'application/json' } });
      assert.is(json.status, 500, path);
      assert.is(header(json.headers['content-type']), 'application/problem+json', path);
      const problem = JSON.parse(json.body);
      assert.is(problem.status, 500, path);
      assert.match(problem.detail, message, path);
    }
  });

  test('a header value with a character beyond Latin-1 is named, with the character and what to do, not as an invalid character alone', async () => {
    const cases: Array<[string, string]> = [
      ['/euro', 'The response cannot be sent: Invalid character in header content ["x-price"]. Header values are Latin-1 text, and x-price holds "€" (U+20AC), beyond it: percent-encode such text (encodeURIComponent) or keep it in the body.'],
      ['/download', 'The response cannot be sent: Invalid character in header content ["content-disposition"]. Header values are Latin-1 text, and content-disposition holds "☃" (U+2603), beyond it: give the file name as filename*=UTF-8\'\' and the name percent-encoded (RFC 6266), after an ASCII filename="..." for old clients.'],
      ['/go?to=%0d%0a', 'The response cannot be sent: Invalid character in header content ["location"].'],
    ];
    for (const [path, message] of cases) {
      const response = await fetchFrom(debug, scheme, path, { headers: { accept: 'application/json' } });
      assert.is(response.status, 500, path);
      assert.is(JSON.parse(response.body).detail, message, path);
      assert.is(decodeURIComponent(header(response.headers['x-debug-exception'])), message, path);
    }
    const injected = await debug.app.inject('/download', { method: 'GET', headers: { accept: 'application/json' } });
    assert.match(JSON.parse(String(injected.body)).detail, /content-disposition holds "☃" \(U\+2603\)/, 'inject() says so too');
  });

  test('on the wire: one head, the status line of a 500, no header of the refused answer', async () => {
    const answer = await sendRaw(debug, scheme, 'GET /go?to=/x%0d%0aSet-Cookie:a=b HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 500 Internal Server Error\r\n/, JSON.stringify(answer.slice(0, 80)));
    const { responses, rest } = readResponses(answer, ['GET']);
    assert.is(responses.length, 1);
    assert.ok(responses[0]!.complete, 'the page is whole');
    assert.is(rest, '', 'nothing follows the page');
    assert.is(responses[0]!.headers['set-cookie'], undefined);
    assert.is(responses[0]!.headers.location, undefined);
  });

  test('without debug: the plain 500 page, nothing internal', async () => {
    const response = await fetchFrom(plain, scheme, '/euro');
    assert.is(response.status, 500);
    assert.ok(response.body.includes('The server returned a "500 Internal Server Error".'));
    assert.not.ok(response.body.includes('x-price'));
    assert.not.ok(response.body.includes('ResponseNotSendableError'));
    assert.is(response.headers['x-debug-exception'], undefined);
  });

  test('an error page that cannot be sent either: the bare 500, and the connection stays usable', async () => {
    const answer = await sendRaw(brokenPage, scheme, 'GET /euro HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    assert.is(rawStatus(answer), 500);
    assert.ok(answer.endsWith('\r\n\r\nInternal Server Error\n'), JSON.stringify(answer.slice(-60)));
    const after = await fetchFrom(brokenPage, scheme, '/go?to=/fine');
    assert.is(after.status, 302);
  });

  test.run();
}
