// Koa 3 answering GET /health; Koa has no router of its own, so one middleware matches the path.
import Koa from 'koa';

const app = new Koa();
app.use((ctx) => {
  if (ctx.method === 'GET' && ctx.path === '/health') ctx.body = { status: 'ok' };
});

const server = app.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
