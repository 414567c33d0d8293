/**
 * WriteGuard (src/export/local/write-guard.ts): a full disk is said once per outage — writes that
 * run through while writing is paused do not end it — and room again is said when a write runs
 * through after the pause; any other error stops the recording, said once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WriteGuard } from '../../src/export/local/write-guard.js';
import { Logger } from '../../src/log.js';

const full = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
const denied = () => Object.assign(new Error('EACCES: permission denied, open'), { code: 'EACCES' });

/** A guard whose log lines are kept, and a clock the test moves (performance.now, which the guard reads). */
function guarded(t: { mock: { method: (object: object, name: string, fn: () => number) => unknown } }) {
  const lines: string[] = [];
  const log = new Logger('info', undefined, (line) => lines.push(line));
  let now = 1_000;
  t.mock.method(performance, 'now', () => now);
  const guard = new WriteGuard('/run', log);
  const step = (outcome: 'ok' | 'full' | 'denied') =>
    guard.run(() => {
      if (outcome === 'full') throw full();
      if (outcome === 'denied') throw denied();
    });
  return { guard, lines, step, advance: (ms: number) => (now += ms) };
}

const warnings = (lines: string[]) => lines.filter((line) => line.includes('warning'));

test('a disk that stays full is said once, though small writes run through while writing is paused', (t) => {
  const { guard, lines, step, advance } = guarded(t);
  assert.equal(step('full'), false);
  assert.equal(guard.paused(), true);
  for (const outcome of ['ok', 'full', 'ok', 'full'] as const) {
    advance(1_000);
    step(outcome);
  }
  assert.equal(warnings(lines).length, 1, lines.join(''));
  assert.match(warnings(lines)[0]!, /is full \(ENOSPC\).*tried again every 30 s/);
  assert.ok(!lines.some((line) => line.includes('room on the disk again')), 'no recovery said during the pause');
});

test('room again is said by the first write that runs through after the pause, and a later outage is said again', (t) => {
  const { guard, lines, step, advance } = guarded(t);
  step('full');
  advance(30_000);
  assert.equal(guard.paused(), false, 'the pause is over');
  assert.equal(step('ok'), true);
  assert.equal(lines.filter((line) => line.includes('room on the disk again')).length, 1);
  step('full');
  assert.equal(warnings(lines).length, 2, 'a second outage, after a recovery, is said');
});

test('a write that fails again after the pause pauses again without a second warning', (t) => {
  const { guard, lines, step, advance } = guarded(t);
  step('full');
  advance(30_000);
  assert.equal(step('full'), false);
  assert.equal(guard.paused(), true);
  assert.equal(warnings(lines).length, 1);
});

test('another error stops the recording, said once; nothing runs after it', (t) => {
  const { guard, lines, step } = guarded(t);
  assert.equal(step('denied'), false);
  assert.equal(guard.broken, true);
  let ran = false;
  assert.equal(
    guard.run(() => {
      ran = true;
    }),
    false,
  );
  assert.equal(ran, false);
  assert.equal(warnings(lines).length, 1);
  assert.match(warnings(lines)[0]!, /recording stopped, the app is not affected/);
});
