/**
 * Heap profiles from trees shaped like V8's sampling heap profiler's (the raw tree
 * @datadog/pprof's bindings return): what pprof a memory window becomes, decoded.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { AllocationProfileNode } from '@datadog/pprof/out/src/v8-types.js';
import { encodeInSteps } from '../../src/profiling/pprof-encode.js';
import { inUsePart } from '../../src/profiling/heap-source.js';
import { runNow } from '../../src/util/slices.js';
import { sampleViewsOf } from '../support/pprof-helpers.js';
import { metricNameOf, profileTypeIdsOf } from '../support/pyroscope-metric.js';
import { Profile } from 'pprof-format';

const FROM_MS = 1_700_000_000_000;
const INTERVAL = 524_288;

let line = 1;
function node(name: string, allocations: AllocationProfileNode['allocations'], children: AllocationProfileNode[] = []): AllocationProfileNode {
  return { name, scriptName: 'file:///app/index.js', scriptId: 3, lineNumber: line++, columnNumber: 5, allocations, children };
}

const tree = node(
  '(root)',
  [],
  [
    node(
      'main',
      [],
      [
        node('keep', [
          { sizeBytes: 32, count: 1000 },
          { sizeBytes: 64, count: 10 },
        ]),
        node('churn', [{ sizeBytes: 16, count: 50 }]),
      ],
    ),
  ],
);

function decoded(externalBytes: number, workers: { thread: string; tree: AllocationProfileNode }[] = []) {
  const threads = [
    { thread: 'main', snapshot: { tree, externalBytes } },
    ...workers.map(({ thread, tree: workerTree }) => ({ thread, snapshot: { tree: workerTree, externalBytes: 0 } })),
  ];
  const profile = runNow(inUsePart(threads, INTERVAL).build(FROM_MS, undefined)).get('heap');
  assert.ok(profile);
  return Profile.decode(runNow(encodeInSteps(profile)));
}

it('one sample per allocation size of a node, valued [objects, bytes] as V8 scaled them, leaf first under the root', () => {
  const profile = decoded(0);
  const samples = sampleViewsOf(profile);
  assert.deepEqual(
    samples.map((s) => ({ stack: s.stack, values: s.values })).sort((a, b) => a.values.inuse_space! - b.values.inuse_space!),
    [
      { stack: ['churn', 'main'], values: { inuse_objects: 50, inuse_space: 800 } },
      { stack: ['keep', 'main'], values: { inuse_objects: 10, inuse_space: 640 } },
      { stack: ['keep', 'main'], values: { inuse_objects: 1000, inuse_space: 32_000 } },
    ].sort((a, b) => a.values.inuse_space - b.values.inuse_space),
  );
  assert.equal(metricNameOf(profile), 'memory', 'Pyroscope files it as memory');
  assert.deepEqual(profileTypeIdsOf(profile, 'memory'), ['memory:inuse_objects:count:inuse_space:bytes', 'memory:inuse_space:bytes:inuse_space:bytes']);
  assert.equal(Number(profile.period), INTERVAL);
  assert.equal(BigInt(profile.timeNanos), BigInt(FROM_MS) * 1_000_000n);
});

it('memory outside the V8 heap (Buffers) is one (external) frame, as @datadog/pprof shows it', () => {
  const external = sampleViewsOf(decoded(4096)).filter((s) => s.stack[0] === '(external)');
  assert.deepEqual(
    external.map((s) => s.values),
    [{ inuse_objects: 1, inuse_space: 4096 }],
  );
  assert.equal(sampleViewsOf(decoded(0)).filter((s) => s.stack[0] === '(external)').length, 0);
});

it('every thread’s heap in one profile, each sample labelled with its thread_name', () => {
  const worker = node('(root)', [], [{ ...node('resize', [{ sizeBytes: 1024, count: 3 }]), scriptId: 3, lineNumber: 1 }]);
  const samples = sampleViewsOf(decoded(0, [{ thread: 'resizer', tree: worker }]));
  assert.deepEqual(samples.map((s) => `${s.labels.thread_name}: ${s.stack.join(' < ')} ${s.values.inuse_space}`).sort(), [
    'main: churn < main 800',
    'main: keep < main 32000',
    'main: keep < main 640',
    'resizer: resize 3072',
  ]);
});
