import http from 'node:http';
import { crunchNumbers } from './math.ts';

const server = http.createServer((req, res) => {
  const result = crunchNumbers(400_000);
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ path: req.url, result }));
});

server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : address}\n`);
});
