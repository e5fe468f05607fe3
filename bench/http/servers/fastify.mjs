// Fastify 5 with the logger off, answering GET /health.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/health', async () => ({ status: 'ok' }));

const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on ${address}`);
