/**
 * The uploads' warm-up (uploads.ts): what uploads need is loaded in the app's first turns, a few
 * milliseconds at a time, without holding a process that is done — and undici's parts one module
 * per step, in an order that leaves nothing for the first upload to load.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { it } from 'node:test';
import { loadUndici, loadUndiciInSteps, UNDICI_LOAD_ORDER } from '../../src/export/transport/undici-parts.js';
import { nextTurn, runNow, runSlicedUnref } from '../../src/util/slices.js';

const require = createRequire(import.meta.url);

/** Holds the thread for `ms`. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

it('a warm-up runs every step, a slice per turn, with the app’s callbacks in between', async () => {
  const events: string[] = [];
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  function* steps(): Generator<void> {
    for (let i = 1; i <= 3; i++) {
      busy(3);
      events.push(`step ${i}`);
      setImmediate(() => events.push(`app after step ${i}`));
      yield;
    }
    finished();
  }
  runSlicedUnref(steps(), 2);
  await done;
  assert.deepEqual(events, ['step 1', 'app after step 1', 'step 2', 'app after step 2', 'step 3', 'app after step 3']);
});

it('a warm-up step that throws ends the warm-up without reaching the app', async () => {
  const ran: number[] = [];
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', onUncaught);
  function* steps(): Generator<void> {
    ran.push(1);
    yield;
    throw new Error('not installed');
  }
  try {
    runSlicedUnref(steps(), 0);
    // The warm-up's turns come first in the queue of immediates: three of ours cover its two and one more.
    for (let i = 0; i < 3; i++) await nextTurn();
  } finally {
    process.off('uncaughtException', onUncaught);
  }
  assert.deepEqual(ran, [1]);
  assert.deepEqual(uncaught, []);
});

it('a warm-up does not keep a process that is done alive', () => {
  const slices = new URL('../../src/util/slices.js', import.meta.url).href;
  const script = `import { runSlicedUnref } from ${JSON.stringify(slices)};
    function* endless() { for (;;) yield; }
    runSlicedUnref(endless(), 1);`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(child.error, undefined);
  assert.equal(child.status, 0, child.stderr);
});

it('undici’s parts load one module a step, every listed path there, leaving nothing for the last step', () => {
  for (const id of UNDICI_LOAD_ORDER) assert.doesNotThrow(() => require.resolve(id), id);
  const cached = () => Object.keys(require.cache).length;
  let steps = 0;
  let beforeLast = 0;
  const parts = runNow(
    (function* counted() {
      const inner = loadUndiciInSteps();
      for (;;) {
        beforeLast = cached();
        const step = inner.next();
        if (step.done) return step.value;
        steps += 1;
        yield;
      }
    })(),
  );
  assert.equal(steps, UNDICI_LOAD_ORDER.length);
  assert.equal(cached(), beforeLast, 'the listed modules are all that loadUndici loads');
  assert.equal(typeof parts.Agent, 'function');
  assert.equal(loadUndici(), parts);
});
