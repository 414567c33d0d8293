/**
 * Thinning a recording's older windows (src/profiling/profile-merge.ts): two gzipped pprof windows
 * become one, read back with the tests' own pprof decoder. Nothing of the time measured is lost;
 * only the labels named go, so samples of one stack and endpoint become one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { mergeGzippedProfiles } from '../../src/profiling/profile-merge.js';
import { sampleViewsOf } from '../support/pprof-helpers.js';
import { decodePprof } from '../support/pprof-wire.js';
import { buildPprof, type SampleSpec } from '../support/recording.js';

const MS = 1_000_000;
const users = (n: number) => ({ spanId: n.toString(16).padStart(16, '0'), spanName: 'GET /users/:id', traceId: n.toString(16).padStart(32, '0') });
const orders = (n: number) => ({ spanId: n.toString(16).padStart(16, '0'), spanName: 'POST /orders', traceId: n.toString(16).padStart(32, '0') });

const older: SampleSpec[] = [
  { stack: ['main', 'handle', 'fib'], value: 30 * MS, span: users(1) },
  { stack: ['main', 'handle', 'fib'], value: 20 * MS, span: users(2) },
  { stack: ['main', '(garbage collector)'], value: 10 * MS },
];
// Built separately: its string table, functions and locations are numbered differently.
const newer: SampleSpec[] = [
  { stack: ['main', 'post', 'hash'], value: 7 * MS, span: orders(4) },
  { stack: ['main', 'handle', 'fib'], value: 5 * MS, span: users(3) },
];
const gz = (samples: SampleSpec[], startMs: number) =>
  gzipSync(buildPprof('cpu', samples, { fib: { file: 'fib.js', line: 3 } }, BigInt(startMs) * BigInt(MS), 1000n * BigInt(MS)).encode());

/** stack + labels → [count, cpu ns], for comparing sample sets regardless of order. */
function bySample(body: Uint8Array): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  for (const view of sampleViewsOf(decodePprof(body).profile)) {
    const key = `${[...view.stack].reverse().join(';')} ${JSON.stringify(view.labels)}`; // root first
    const [count, cpu] = out.get(key) ?? [0, 0];
    out.set(key, [count + (view.values.samples ?? 0), cpu + (view.values.cpu ?? 0)]);
  }
  return out;
}

test('two windows merged without span labels: samples of one stack and endpoint summed, every nanosecond kept, the window spans both', () => {
  const merged = mergeGzippedProfiles([gz(older, 1000), gz(newer, 2000)], new Set(['span_id', 'trace_id']));
  const { profile } = decodePprof(merged);
  assert.deepEqual(
    bySample(merged),
    new Map([
      ['main;handle;fib {"span_name":"GET /users/:id"}', [3, 55 * MS]],
      ['main;(garbage collector) {}', [1, 10 * MS]],
      ['main;post;hash {"span_name":"POST /orders"}', [1, 7 * MS]],
    ]),
  );
  assert.equal(profile.sample.length, 3);
  assert.equal(profile.function.length, 6, 'functions shared by value');
  assert.equal(profile.location.length, 6);
  assert.equal(Number(profile.timeNanos), 1000 * MS);
  assert.equal(Number(profile.durationNanos), 2000 * MS);
  assert.equal(Number(profile.period), 10 * MS);
  const text = (i: number | bigint) => profile.stringTable.strings[Number(i)];
  assert.deepEqual(
    profile.sampleType.map((t) => `${text(t.type)}/${text(t.unit)}`),
    ['samples/count', 'cpu/nanoseconds'],
  );
  const fib = profile.function.find((fn) => text(fn.name) === 'fib');
  assert.equal(fib && text(fib.filename), 'fib.js');
});

test('merged with no label dropped, every sample keeps its span', () => {
  const merged = mergeGzippedProfiles([gz(older, 1000), gz(newer, 2000)], new Set());
  const samples = sampleViewsOf(decodePprof(merged).profile);
  assert.equal(samples.length, 5);
  assert.deepEqual(
    samples
      .map((s) => s.labels.span_id)
      .filter(Boolean)
      .sort(),
    [1, 2, 3, 4].map((n) => n.toString(16).padStart(16, '0')),
  );
});
