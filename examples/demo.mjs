// `npm run demo`: runs the example shop through pyro-run in local mode under a short generated
// load, stops it, and builds the report — what pyro-run shows with no backend at all.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(fileURLToPath(import.meta.url), '../..');
const cli = path.join(root, 'dist/bin/pyro-run.js');
const out = path.resolve(process.env.DEMO_OUT ?? 'pyro-run-data');
const seconds = Number(process.env.DEMO_SECONDS ?? 8);

const app = spawn(process.execPath, [cli, '--out', out, '--flush-interval', '2000', path.join(root, 'examples/express/server.mjs')], {
  env: { ...process.env, PORT: '0' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const port = await new Promise((resolve, reject) => {
  let text = '';
  app.stdout.setEncoding('utf8').on('data', (chunk) => {
    text += chunk;
    const match = text.match(/listening (\d+)/);
    if (match) resolve(match[1]);
  });
  app.once('exit', (code) => reject(new Error(`the example app exited (${code}) before listening`)));
});

const base = `http://127.0.0.1:${port}`;
const requests = [
  () => fetch(`${base}/search?q=${['red mug', 'blue lamp', 'black chair'][Math.floor(Math.random() * 3)]}`),
  () =>
    fetch(`${base}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        items: [
          { id: 3, quantity: 2 },
          { id: 42, quantity: 1 },
        ],
      }),
    }),
  () => fetch(`${base}/products/${Math.floor(Math.random() * 2000)}`),
];
console.log(`pyro-run demo: ${seconds} s of load on the example shop (${base})…`);
const until = Date.now() + seconds * 1000;
let sent = 0;
await Promise.all(
  Array.from({ length: 6 }, async () => {
    while (Date.now() < until) {
      const response = await requests[sent++ % requests.length]();
      await response.arrayBuffer();
    }
  }),
);
console.log(`pyro-run demo: ${sent} requests sent; stopping the app`);
const exited = new Promise((resolve) => app.once('exit', resolve));
app.kill('SIGTERM');
await exited;

// The app printed the endpoint summary as it ended: the report adds only the page.
const report = spawnSync(process.execPath, [cli, 'report', out, '--no-summary'], { stdio: 'inherit' });
process.exitCode = report.status ?? 1;
