/**
 * The system clock moves under a running app — NTP steps it, a VM resumes from a pause, a
 * container's host corrects it — while its monotonic clock does not. libfaketime (Debian's
 * libfaketime, preloaded into the app's processes with the monotonic clock left alone) steps the
 * app's realtime clock forward and back during the load: every hot-function sample must still
 * carry the span of the request that ran it, and no profile window may run backwards.
 */
import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { assertAttributed, assertLinked, linkedEnv, serverSpans } from '../support/linking.js';
import { serveThenTerminate } from '../support/load.js';
import { startReceiver } from '../support/receiver.js';
import { LIBFAKETIME, skipUnless } from '../support/installed.js';

const SERVICE = 'clock-step';
/** Stretches of REQUESTS / STEPS.length requests each. */
const REQUESTS = 180;
const IN_FLIGHT = 8;
/** Offsets of the realtime clock from the true time, in seconds, one per stretch of the load. */
const STEPS = ['+0', '+0.3', '+0.05', '+1.5', '-0.7', '+0.4'];

test('samples keep their request’s span when the system clock steps during the load', { skip: skipUnless('libfaketime'), timeout: 120_000 }, async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pyro-run-clock-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const offsetFile = path.join(dir, 'offset');
  // libfaketime reads the file at every clock reading: replaced whole, never seen half-written.
  const stepTo = (offset: string) => {
    writeFileSync(`${offsetFile}.next`, `${offset}\n`);
    renameSync(`${offsetFile}.next`, offsetFile);
  };
  stepTo(STEPS[0]!);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = runCli([fixture('apps/server.cjs')], {
    env: {
      OTEL_SERVICE_NAME: SERVICE,
      ...linkedEnv(receiver),
      LD_PRELOAD: LIBFAKETIME,
      FAKETIME_TIMESTAMP_FILE: offsetFile,
      FAKETIME_NO_CACHE: '1',
      DONT_FAKE_MONOTONIC: '1',
    },
  });
  // A failed step must not leave the app running: kill is a no-op once it has exited.
  t.after(() => app.process.kill('SIGKILL'));
  const perStep = REQUESTS / STEPS.length;
  // Each stretch of the load starts with the clock stepped to its offset (paths are asked for in order).
  await serveThenTerminate(
    app,
    (i) => {
      if (i % perStep === 0) stepTo(STEPS[i / perStep]!);
      return `/work/${i}`;
    },
    REQUESTS,
    IN_FLIGHT,
  );
  assertLinked(receiver, SERVICE);
  assert.equal(serverSpans(receiver).length, REQUESTS);
  assertAttributed(t, receiver);
  // Windows tile time, each starting where the last ended, but across a step over 0.1 s.
  const steps = STEPS.slice(1).filter((offset, i) => Math.abs(Number(offset) - Number(STEPS[i])) > 0.1).length;
  const windows = receiver.ingests.filter((ingest) => ingest.metricName === 'wall');
  const breaks = windows.slice(1).filter((window, i) => window.from !== windows[i]!.until).length;
  assert.ok(breaks <= steps, `${breaks} breaks in ${windows.length} windows, ${steps} steps`);
});
