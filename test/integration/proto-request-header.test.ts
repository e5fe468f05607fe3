// A request header named `__proto__` (in any case), over real sockets and through inject(): node:http
// reads a request's headers into a plain object by assignment, where that name sets nothing, so the
// kernel behind the server never sees it; inject(), meant to read a request as the server does, drops it too.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response, type Request } from '../../kernel/index.js';
import { SCHEMES, fetchFrom, routesOf, sendRaw, startTestServer, type TestServer } from './harness.js';

/** What the kernel saw of the headers a test sends: `__proto__` as an own header (or null), the one beside it, and the headers' prototype. */
const seen = (request: Request): Response =>
  Response.json({
    proto: Object.hasOwn(request.headers, '__proto__') ? request.headers['__proto__'] : null,
    other: request.headers['x-other'] ?? null,
    prototype: Object.getPrototypeOf(request.headers) === Object.prototype ? 'Object.prototype' : String(Object.getPrototypeOf(request.headers)),
  });

const EXPECTED = { proto: null, other: 'kept', prototype: 'Object.prototype' };

for (const scheme of SCHEMES) {
  const test = suite(`a request header named __proto__, over ${scheme} and through inject()`);
  let server: TestServer;

  test.before(async () => {
    server = await startTestServer({ kernel: { debug: false, routes: routesOf({ '/seen': seen }) } });
  });

  test.after(async () => {
    await server.close();
  });

  test('the server\'s kernel never sees it, and the one beside it is kept', async () => {
    const response = await fetchFrom(server, scheme, '/seen', { headers: { ['__proto__']: 'sent', 'x-other': 'kept' } });
    assert.is(response.status, 200);
    assert.equal(JSON.parse(response.body), EXPECTED);
    // Written on the wire as given, whatever a client does with such a name.
    for (const name of ['__proto__', '__PROTO__']) {
      const answer = await sendRaw(server, scheme, `GET /seen HTTP/1.1\r\nHost: localhost\r\n${name}: sent\r\nX-Other: kept\r\nConnection: close\r\n\r\n`);
      assert.match(answer, /^HTTP\/1\.1 200 /, name);
      assert.equal(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), EXPECTED, name);
    }
  });

  test('inject() drops it as the server does, in any case, and keeps the one beside it', async () => {
    for (const name of ['__proto__', '__PROTO__', '__Proto__']) {
      const headers = JSON.parse(`{"${name}":"sent","x-other":"kept"}`) as Record<string, string>;
      const injected = await server.app.inject(`${server.urls[scheme]}/seen`, { headers });
      assert.is(injected.status, 200, name);
      assert.equal(injected.json(), EXPECTED, name);
      // The caller's object is left as it was.
      assert.equal(Object.keys(headers), [name, 'x-other'], name);
    }
  });

  test.run();
}
