'use strict';
// The big-app shape: BIG_APP_FUNCTIONS generated functions (default 4000) called in chains
// BIG_APP_DEPTH deep (default 8), each request starting at a different one, so a profile window
// holds thousands of distinct stacks — what a large app's window looks like, where a hello route's
// holds a few dozen. BIG_APP_EVAL=1 compiles the functions with `new Function`, as Ajv, template
// engines and other code generators compile theirs; otherwise they are an ordinary module.
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

const COUNT = Number(process.env.BIG_APP_FUNCTIONS ?? 4000);
const DEPTH = Number(process.env.BIG_APP_DEPTH ?? 8);
const EVAL = process.env.BIG_APP_EVAL === '1';
/** Math.sqrt calls at the end of each chain: the request's own work. */
const WORK = Number(process.env.BIG_APP_WORK ?? 20000);

const CHAINS = Math.floor(COUNT / DEPTH);
/** Chain c is the functions at order[c·DEPTH … c·DEPTH + DEPTH − 1], shuffled so that a chain's functions lie apart in the source. */
const order = Array.from({ length: CHAINS * DEPTH }, (_, i) => i);
for (let i = order.length - 1, r = 12345; i > 0; i--) {
  r = (r * 1103515245 + 12345) % 2147483648;
  const j = r % (i + 1);
  [order[i], order[j]] = [order[j], order[i]];
}
const nextOf = new Map(order.map((fn, k) => [fn, k % DEPTH === DEPTH - 1 ? undefined : order[k + 1]]));

/** A function calls the next one of its chain; the last of a chain does the request's work. */
function body(i) {
  const next = nextOf.get(i);
  return next === undefined ? `let x = 0; for (let k = 0; k < ${WORK}; k++) x += Math.sqrt(k + n); return x;` : `return fns[${next}](n + 1) + ${i};`;
}

const fns = new Array(COUNT);
if (EVAL) {
  for (let i = 0; i < COUNT; i++) fns[i] = new Function('fns', `return function f${i}(n) { ${body(i)} }`)(fns);
} else {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'big-app-')), 'functions.cjs');
  const source = [];
  for (let i = 0; i < COUNT; i++) source.push(`function f${i}(n) { ${body(i)} }`);
  source.push(`module.exports = (fns) => { ${Array.from({ length: COUNT }, (_, i) => `fns[${i}] = f${i};`).join(' ')} };`);
  fs.writeFileSync(file, `let fns;\n${source.join('\n')}\nconst install = module.exports; module.exports = (all) => { fns = all; install(all); };\n`);
  require(file)(fns);
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
}

let seq = 0;
const server = http.createServer((_req, res) => {
  seq++;
  // A different chain per request: the chains in a stride prime to their count.
  const start = order[((seq * 104729) % CHAINS) * DEPTH];
  const body = JSON.stringify({ seq, value: fns[start](seq) });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
