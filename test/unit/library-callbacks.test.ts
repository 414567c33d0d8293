/**
 * Callbacks of ours that run inside a library's call path (diagnostics channel subscribers) never
 * throw into it: Node would re-throw a subscriber's error as an uncaught exception and end the app.
 */
import assert from 'node:assert/strict';
import { channel } from 'node:diagnostics_channel';
import { test } from 'node:test';
import { subscribeSafely } from '../../src/tracing/library-callbacks.js';
import { Logger } from '../../src/log.js';

test("a subscriber of ours that throws: the publisher goes on, one warning, and it stands down; the channel's other subscribers still hear", async () => {
  const name = 'pyro-run-test:library-callbacks';
  const lines: string[] = [];
  const log = new Logger(
    'warn',
    (text) => text,
    (line) => lines.push(line),
  );
  let ours = 0;
  const theirs: unknown[] = [];
  subscribeSafely(name, log, 'labelling the test library', () => {
    ours++;
    throw new Error('a bug of ours');
  });
  const other = (message: unknown) => theirs.push(message);
  channel(name).subscribe(other);
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', onUncaught);
  try {
    channel(name).publish(1);
    channel(name).publish(2);
    // Node re-throws a subscriber's error on the next tick: give it that tick.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('uncaughtException', onUncaught);
    channel(name).unsubscribe(other);
  }
  assert.deepEqual(uncaught, []);
  assert.equal(ours, 1, 'stood down after its first error');
  assert.deepEqual(theirs, [1, 2]);
  assert.deepEqual(lines, ["pyro-run: warning: labelling the test library stopped after an error of pyro-run's (a bug of ours); the app is not affected\n"]);
});
