// Baseline: raw node:http answering GET /health, with the same headers the frameworks send.
import { createServer } from 'node:http';

const body = JSON.stringify({ status: 'ok' });
const headers = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) };

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/health') {
    res.writeHead(200, headers);
    res.end(body);
    return;
  }
  res.writeHead(404, { 'Content-Length': 0 });
  res.end();
});

server.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
