// A receiver that accepts and discards: stands in for Pyroscope (/ingest) and the OTLP collector
// (/v1/traces) so every contender pays the same network cost and nothing leaves loopback.
// It prints one line per request (`req <epoch ms> <method> <path> <bytes>`), which the runner reads
// to count bytes per contender and to know when profile uploads arrived (the flush moments).
import http from 'node:http';

const server = http.createServer((req, res) => {
  let bytes = 0;
  req.on('data', (chunk) => {
    bytes += chunk.length;
  });
  req.on('end', () => {
    const path = (req.url ?? '/').split('?')[0];
    process.stdout.write(`req ${Date.now()} ${req.method} ${path} ${bytes}\n`);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});

// The runner ends the sink with SIGTERM; close quickly without waiting for keep-alive sockets.
process.on('SIGTERM', () => process.exit(0));
