// Hono 4 on @hono/node-server, answering GET /health.
import { Hono } from 'hono';
import { serve } from '@hono/node-server';

const app = new Hono();
app.get('/health', (c) => c.json({ status: 'ok' }));

serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  console.log(`listening on http://127.0.0.1:${info.port}`);
});
