'use strict';
// The per-request work of the throughput apps: a fixed amount of arithmetic (about 20k square
// roots), so a request costs some CPU of its own and the instrumentation is not all there is.
const ROUNDS = 20_000;

function work(seed) {
  let x = seed;
  for (let i = 0; i < ROUNDS; i++) x += Math.sqrt(x + i);
  return x;
}

module.exports = { work };
