'use strict';
// Throughput app: plain node:http, the same JSON work as the express app.
const http = require('node:http');
const { work } = require('./work.cjs');

let seq = 0;
const server = http.createServer((_req, res) => {
  const body = JSON.stringify({ seq: ++seq, value: work(seq) });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
