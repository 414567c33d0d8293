// What the client hooks (src/clients/) add per reply: `node bench/client-hooks.mjs [--rounds N]`
// (needs `npm run build`).
//
// A client's shape without its protocol: a command tagged with its caller's labels as it is sent,
// then a socket read ('data' on an EventEmitter standing in for the socket) carrying `replies`
// replies, each handed to its command in order. Replies per read: 1 (pg and mysql2: one query at
// a time on a connection) and 16 (ioredis, node-redis: one connection, pipelined). Modes:
//   plain   no hooks: the read runs in whatever context the socket had;
//   owned   the hooks: the command tagged when sent (SampleOwner.current), the read run for the
//           head command's labels (ownReads → SampleOwner.run: the sampler's frame key, or the global
//           slot without AsyncContextFrame), and the samples switched to the next command's labels
//           after each reply (SampleOwner.switchTo).
// Each command belongs to one of 8 requests whose root spans run throughout, each awaiting its
// replies. The sampler runs in both modes. Thread CPU per reply, a fresh process per mode
// and shape, 5 × 200 000 replies after a warm-up; prints ns per reply, median (min–max) over rounds,
// and what `owned` adds.
import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, summary } from './lib/stats.mjs';
import { render, signed, spread } from './lib/table.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MODES = ['plain', 'owned'];
const SHAPES = [1, 16];
const REPLIES = 200_000;
const REPEATS = 5;
const REQUESTS = 8;

async function measure(mode, perRead) {
  const dist = (file) => import(pathToFileURL(path.join(root, 'dist/src', file)).href);
  const { otelApi, otelSdkTrace } = await dist('vendor.js');
  const { Profiler } = await dist('profiling/profiler.js');
  const { AsyncContextManager } = await dist('tracing/context-manager.js');
  const { LabelRegistry } = await dist('span-link/labels.js');
  const { SpanLinkProcessor } = await dist('span-link/processor.js');
  const { frameLinker } = await dist('span-link/frame-context.js');
  const { slotLinker } = await dist('span-link/slot-context.js');
  const { labelsOf, ownReads, tagCommand } = await dist('clients/requests.js');
  const { trace, context, ROOT_CONTEXT } = otelApi();

  const profiler = new Profiler({ types: ['cpu', 'wall'], samplingIntervalMicros: 10_000, flushIntervalMs: 15_000, traceIdLabel: false });
  profiler.start();
  const registry = new LabelRegistry();
  const linking = profiler.time.frameSlot ? frameLinker(registry, profiler.time.frameSlot) : slotLinker(registry, profiler.time.globalSlot);
  const manager = new AsyncContextManager();
  linking.linkContext(manager);
  context.setGlobalContextManager(manager.enable());
  const tracer = new (otelSdkTrace().TracerProvider)({ spanProcessors: [new SpanLinkProcessor(registry, 'root')] }).getTracer('client-hooks');
  const requests = Array.from({ length: REQUESTS }, (_, i) => trace.setSpan(ROOT_CONTEXT, tracer.startSpan(`GET /r/${i}`)));
  // Each request awaits its replies, as a request awaiting a query does: its continuation keeps
  // its context (and the sampler's holder of its labels) alive.
  const waiting = requests.map((request) => context.with(request, () => new Promise(() => undefined).then(() => undefined)));

  const { owner } = linking;
  const queue = [];
  const socket = new EventEmitter();
  let handled = 0;
  socket.on('data', (replies) => {
    for (let i = 0; i < replies; i++) {
      queue.shift();
      handled++;
      if (mode === 'owned') owner.switchTo(labelsOf(queue[0]));
    }
  });
  if (mode === 'owned') ownReads(socket, () => labelsOf(queue[0]), owner);

  let sent = 0;
  const send = () => {
    const command = { n: sent };
    context.with(requests[sent++ % REQUESTS], () => {
      if (mode === 'owned') tagCommand(command, owner);
      queue.push(command);
    });
  };
  // Reads come as a server's replies do: a few per turn of the event loop.
  const run = async () => {
    for (let i = 0; i < REPLIES; i += perRead * 4) {
      for (let read = 0; read < 4; read++) {
        for (let j = 0; j < perRead; j++) send();
        socket.emit('data', perRead);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await run();
  const nanos = [];
  for (let r = 0; r < REPEATS; r++) {
    const before = process.threadCpuUsage();
    const from = handled;
    await run();
    const spent = process.threadCpuUsage(before);
    nanos.push(((spent.user + spent.system) * 1000) / (handled - from));
  }
  profiler.cut(true);
  if (waiting.length !== REQUESTS) throw new Error('lost a waiting request');
  return nanos;
}

const modeArg = process.argv.indexOf('--mode');
if (modeArg > 0) {
  process.stdout.write(`${JSON.stringify(await measure(process.argv[modeArg + 1], Number(process.argv[process.argv.indexOf('--replies') + 1])))}\n`);
} else {
  const roundsArg = process.argv.indexOf('--rounds');
  const rounds = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 3;
  if (!Number.isInteger(rounds) || rounds < 1) {
    process.stderr.write('usage: node bench/client-hooks.mjs [--rounds N (default 3)]\n');
    process.exit(2);
  }
  const rows = [];
  for (const perRead of SHAPES) {
    const perMode = Object.fromEntries(MODES.map((m) => [m, []]));
    for (let round = 0; round < rounds; round++) {
      for (const mode of MODES) {
        const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--mode', mode, '--replies', String(perRead)], { encoding: 'utf8' });
        perMode[mode].push(median(JSON.parse(out)));
      }
    }
    const base = median(perMode.plain);
    for (const mode of MODES) {
      const stat = summary(perMode[mode]);
      rows.push([String(perRead), mode, spread(stat, 0), signed(stat.median - base, 0)]);
    }
  }
  process.stdout.write(
    `${render(`client hooks — Node ${process.version}, ns of thread CPU per reply (command sent, reply read); median (min–max) over ${rounds} round(s), a fresh process per shape and mode`, ['replies per read', 'mode', 'ns per reply', 'added to plain'], rows)}\n`,
  );
}
