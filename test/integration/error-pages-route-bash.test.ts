// Error pages over real sockets: what an error asks for in its headers, and what a cache may reuse.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { HttpError, Response } from '../../kernel/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, fetchFrom, startTestServer, type TestServer } from './harness.js';

function routes(): RouteCollection {
  return new RouteCollection()
    .add('ok', new Route('/ok', { defaults: { _controller: () => Response.json({ ok: true }) } }))
    .add('bad-headers', new Route('/bad-headers', {
      defaults: {
        _controller: () => {
          // Headers an embedder may well build from request data: node:http refuses to write these.
          throw new HttpError(429, 'Slow down.', {
            headers: { 'retry-after': '7', 'x-injected': 'a\r\nset-cookie: evil=1', 'x-name with space': '1', 'x-euro': '5 €', 'content-length': '3', 'transfer-encoding': 'chunked' },
          });
        },
      },
    }));
}

for (const debug of [true, false]) {
  const it = suite<{ server: TestServer }>(`error pages, debug ${debug ? 'on' : 'off'}`);

  it.before(async (context) => {
    context.server = await startTestServer({ kernel: { routes: routes(), debug, env: 'test' } });
  });
  it.after(async (context) => {
    await context.server.close();
  });

  it('an error whose headers node:http would refuse still gets its own status and page, without those headers', async ({ server }) => {
    for (const scheme of SCHEMES) {
      for (const accept of ['text/html', 'application/json']) {
        const response = await fetchFrom(server, scheme, '/bad-headers', { headers: { accept } });
        assert.is(response.status, 429, `${scheme} ${accept}: ${response.body.slice(0, 200)}`);
        assert.is(response.headers['retry-after'], '7');
        assert.is(response.headers['set-cookie'], undefined);
        assert.is(response.headers['x-injected'], undefined);
        assert.is(response.headers['x-euro'], undefined);
        assert.is(response.headers['transfer-encoding'], undefined);
        assert.is(Number(response.headers['content-length']), Buffer.byteLength(response.body));
        if (accept === 'application/json') assert.is(JSON.parse(response.body).detail, 'Slow down.');
        else assert.ok(response.body.includes('429'));
      }
    }
  });

  it('an error page varies by Accept, so a cache never serves the JSON problem to a browser or the page to an API client', async ({ server }) => {
    for (const scheme of SCHEMES) {
      for (const accept of ['text/html', 'application/json']) {
        const response = await fetchFrom(server, scheme, '/missing', { headers: { accept } });
        assert.is(response.status, 404);
        assert.match(String(response.headers.vary), /(^|,\s*)accept(\s*,|$)/i, `${scheme} ${accept}`);
      }
      const plain = await fetchFrom(server, scheme, '/missing');
      assert.match(String(plain.headers.vary), /accept/i, 'also without an Accept header');
    }
  });

  it.run();
}
