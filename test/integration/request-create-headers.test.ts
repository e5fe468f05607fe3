// Request.create() folds header lines as node:http folds a client's: the same raw lines sent on a real
// socket and given to Request.create() (a list for several lines of one field, names in any case) make
// the same `request.headers`: lists joined with `, `, Cookie with `; `, Set-Cookie always a list, the
// first line kept of a field node cannot join (Content-Type, Authorization, User-Agent...).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Request, Response } from '../../kernel/index.js';
import { SCHEMES, routesOf, sendRaw, startTestServer, type TestServer } from './harness.js';

/**
 * Every field node:http names in its table of known fields (lib/_http_incoming.js matchKnownFields), and two it does not,
 * but for those whose repetition the server refuses or acts on: Host (several are a 400), Content-Length and Transfer-Encoding
 * (node's parser refuses a repeated or conflicting framing), Expect (a 417 or 100 Continue), Upgrade and Connection (the connection's fate).
 */
const FIELDS = [
  'Age', 'From', 'ETag', 'Date', 'Vary', 'Server', 'Cookie', 'Origin', 'Accept', 'Referer', 'Expires', 'Location', 'If-Match',
  'User-Agent', 'Set-Cookie', 'Retry-After', 'Content-Type', 'Max-Forwards', 'Authorization', 'Last-Modified', 'Cache-Control',
  'If-None-Match', 'Accept-Encoding', 'Accept-Language', 'X-Forwarded-For', 'Content-Encoding', 'X-Forwarded-Host',
  'If-Modified-Since', 'X-Forwarded-Proto', 'Proxy-Authorization', 'If-Unmodified-Since', 'X-Custom', 'DNT',
];

for (const scheme of SCHEMES) {
  const test = suite(`Request.create()'s headers are the server's for the same lines, over ${scheme}`);
  let server: TestServer;

  test.before(async () => {
    server = await startTestServer({ kernel: { debug: false, routes: routesOf({ '/seen': (request: Request) => Response.json(request.headers) }) } });
  });

  test.after(async () => {
    await server.close();
  });

  test('one line of each field, and three (the first named in Title-Case, the two others in lower case, given as a list)', async () => {
    for (const count of [1, 3]) {
      const values = (field: string): string[] => Array.from({ length: count }, (_, i) => `${field.toLowerCase()}=${i + 1}`);
      let lines = 'Host: localhost\r\nConnection: close\r\n';
      const given: Record<string, string | string[]> = { host: 'localhost', connection: 'close' };
      for (const field of FIELDS) {
        const [first, ...rest] = values(field);
        lines += `${field}: ${first}\r\n${rest.map((value) => `${field.toLowerCase()}: ${value}\r\n`).join('')}`;
        given[field] = first!;
        if (rest.length > 0) given[field.toLowerCase()] = rest;
      }
      const answer = await sendRaw(server, scheme, `GET /seen HTTP/1.1\r\n${lines}\r\n`);
      assert.match(answer, /^HTTP\/1\.1 200 /, `${count}: ${answer.slice(0, 200)}`);
      const fromServer = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
      const created = Request.create('/seen', 'GET', { headers: given }).headers;
      assert.equal({ ...created }, fromServer, `${count} line(s) of each`);
    }
  });

  test('spaces and tabs around a value are not the value\'s, as node\'s parser drops them; those within it are kept', async () => {
    const lines: Array<[string, string]> = [['X-A', '  b c  \t'], ['X-B', '\t'], ['Cookie', ' a=1 '], ['cookie', 'b=2\t'], ['Content-Type', '\ttext/plain '], ['X-C', ' '], ['x-c', ' d']];
    const answer = await sendRaw(server, scheme, `GET /seen HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${lines.map(([field, value]) => `${field}: ${value}\r\n`).join('')}\r\n`);
    assert.match(answer, /^HTTP\/1\.1 200 /, answer.slice(0, 200));
    const fromServer = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    const given: Record<string, string[]> = { host: ['localhost'], connection: ['close'] };
    for (const [field, value] of lines) (given[field] ??= []).push(value);
    assert.equal({ ...Request.create('/seen', 'GET', { headers: given }).headers }, fromServer);
  });

  test.run();
}
