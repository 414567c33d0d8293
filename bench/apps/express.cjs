'use strict';
// Throughput app: express 5, one JSON route. CJS so that every contender's instrumentation
// (OTel's register patches require) sees express the same way.
const express = require('express');
const { work } = require('./work.cjs');

const app = express();
let seq = 0;
app.get('/json', (_req, res) => {
  res.json({ seq: ++seq, value: work(seq) });
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
