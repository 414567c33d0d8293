/**
 * buildTimeProfiles on trees shaped like the native sampler's (@datadog/pprof's TimeProfile:
 * hit counts per node, one context per sample with its CPU time): the CPU and wall pprofs it
 * makes must encode, decode the way the server decodes, be named `process_cpu` and `wall` by
 * Pyroscope's rules, and hold every sample's time under the right stack and span.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TimeProfile, TimeProfileNode, TimeProfileNodeContext } from '@datadog/pprof/out/src/v8-types.js';
import type { SourceMapper } from '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
import type { Profile as EsmProfile } from 'pprof-format';
import type { ProfileType } from '../../src/config/index.js';
import { SpanLabels, sampleContextOf, spanOfSample } from '../../src/span-link/labels.js';
import { runNow, runSliced } from '../../src/util/slices.js';
import { buildTimeProfiles, type Profile, type TimeBuild, TimeFold, threadsPart } from '../../src/profiling/time-profile.js';
import { WORK_BETWEEN_SAMPLES } from '../../src/profiling/time-fold.js';
import { functionNamesOf, labelsOf } from '../support/pprof-helpers.js';
import { decodePprof } from '../support/pprof-wire.js';
import { turnsDuring } from '../support/turns.js';
import { sampleAt, SPAN_A, SPAN_B, treeNode } from '../support/raw-window.js';
import { metricNameOf, profileTypeIdsOf, sampleTypeNames, stringAt } from '../support/pyroscope-metric.js';

const MS = 1_000_000; // nanoseconds
const INTERVAL_US = 10_000;
const FROM_MS = 1_700_000_000_000;
/** A 15 s window: startTime/endTime are microseconds on the sampler's clock. */
const START_US = 5_000_000;
const END_US = START_US + 15_000_000;

const spanA = new SpanLabels(SPAN_A.spanId, SPAN_A.traceId, { name: SPAN_A.name });
const spanB = new SpanLabels(SPAN_B.spanId, SPAN_B.traceId, { name: SPAN_B.name });

const at = sampleAt;
const node = treeNode;

/** A window as the sampler returns it; 1 500 hits make the mean interval exactly 10 ms. */
function window(children: TimeProfileNode[], extra: Partial<TimeProfile> = {}): TimeProfile {
  return { startTime: START_US, endTime: END_US, hasCpuTime: true, totalHitCount: 1500, topDownRoot: node('(root)', 0, [], children), ...extra };
}

const spanOf = (context: TimeProfileNodeContext) => (context.context instanceof SpanLabels ? context.context : undefined);
const build = (over: Partial<TimeBuild> = {}): TimeBuild => ({ intervalMicros: INTERVAL_US, types: ['cpu', 'wall'], spanOf, traceIdLabel: false, ...over });

/** The tree every test starts from, with what each stack must become in each profile. */
function sampleTree(): TimeProfile {
  return window(
    [
      node(
        'main',
        3,
        [at(undefined, 20), at(undefined, 5), at({}, 0)],
        [
          // Two samples in span A (CPU 7 + 3 ms), one in no span (5 ms): one pprof sample per span.
          node(
            'handler',
            3,
            [at(spanA, 7), at(spanA, 3), at(undefined, 5)],
            [
              // Waiting on I/O inside span A: wall time, no CPU time.
              node('db.query', 1, [at(spanA, 0)]),
            ],
          ),
          // More contexts than hits: the extra one adds CPU time only.
          node('worker', 1, [at(spanB, 1), at(spanB, 2)]),
        ],
      ),
      node('(program)', 40),
      // Idle, with a context left set or without one: the thread waits for work, for no one: dropped.
      node('(idle)', 2, [at(spanB, 0), at(undefined, 0)]),
      node('(garbage collector)', 2, [at(undefined, 4), at(undefined, 4)]),
    ],
    { nonJSThreadsCpuTime: 9 * MS },
  );
}

interface View {
  stack: string;
  labels: Record<string, string>;
  values: number[];
}

function roundTrip(profile: Profile): EsmProfile {
  return decodePprof(profile.encode()).profile;
}

const sorted = (list: View[]) => list.sort((a, b) => (a.stack + JSON.stringify(a.labels)).localeCompare(b.stack + JSON.stringify(b.labels)));

/** The samples as stack, span labels and values; each must carry the main thread's thread_name, which is left out. */
function views(profile: EsmProfile): View[] {
  return sorted(
    profile.sample.map((s) => {
      const { thread_name: thread, ...labels } = labelsOf(profile, s);
      assert.equal(thread, 'main');
      return { stack: functionNamesOf(profile, s).join(' < '), labels, values: s.value.map(Number) };
    }),
  );
}

const A = { span_id: spanA.spanId, span_name: 'GET /users/:id' };
const B = { span_id: spanB.spanId, span_name: 'job' };
const EXPECTED: Record<'cpu' | 'wall', View[]> = {
  cpu: sorted([
    { stack: 'Garbage Collection < Node.js', labels: {}, values: [2, 8 * MS] },
    { stack: 'Non JS threads activity < Node.js', labels: {}, values: [0, 9 * MS] },
    { stack: 'db.query < handler < main', labels: A, values: [1, 0] },
    { stack: 'handler < main', labels: {}, values: [1, 5 * MS] },
    { stack: 'handler < main', labels: A, values: [2, 10 * MS] },
    { stack: 'main', labels: {}, values: [3, 25 * MS] },
    { stack: 'worker < main', labels: B, values: [1, 3 * MS] },
  ]).filter((v) => v.values[1]! > 0),
  wall: sorted([
    { stack: 'Garbage Collection < Node.js', labels: {}, values: [2, 20 * MS] },
    { stack: 'db.query < handler < main', labels: A, values: [1, 10 * MS] },
    { stack: 'handler < main', labels: {}, values: [1, 10 * MS] },
    { stack: 'handler < main', labels: A, values: [2, 20 * MS] },
    { stack: 'main', labels: {}, values: [3, 30 * MS] },
    { stack: 'worker < main', labels: B, values: [1, 10 * MS] },
  ]),
};

describe('buildTimeProfiles', () => {
  const built = () => runNow(buildTimeProfiles([sampleTree()], FROM_MS, build()));

  const naming: { which: 'cpu' | 'wall'; metric: string; typeIds: string[] }[] = [
    { which: 'cpu', metric: 'process_cpu', typeIds: ['process_cpu:samples:count:cpu:nanoseconds', 'process_cpu:cpu:nanoseconds:cpu:nanoseconds'] },
    { which: 'wall', metric: 'wall', typeIds: ['wall:samples:count:wall:nanoseconds', 'wall:wall:nanoseconds:wall:nanoseconds'] },
  ];
  for (const v of naming) {
    describe(`the ${v.which} profile`, () => {
      const decoded = () => {
        const profile = built().get(v.which);
        assert.ok(profile, `${v.which} profile produced`);
        return roundTrip(profile);
      };

      it('has the sample types and period type Pyroscope names it by, and is named as Grafana expects', () => {
        const profile = decoded();
        assert.deepEqual(sampleTypeNames(profile), [
          { type: 'samples', unit: 'count' },
          { type: v.which, unit: 'nanoseconds' },
        ]);
        assert.ok(profile.periodType);
        assert.deepEqual(
          { type: stringAt(profile, profile.periodType.type), unit: stringAt(profile, profile.periodType.unit) },
          { type: v.which, unit: 'nanoseconds' },
        );
        assert.equal(Number(profile.period), INTERVAL_US * 1000);
        assert.equal(metricNameOf(profile), v.metric);
        assert.deepEqual(profileTypeIdsOf(profile, v.metric), v.typeIds);
      });

      it('holds each stack’s time once per span, V8’s pseudo-frames dropped or grouped under Node.js', () => {
        assert.deepEqual(views(decoded()), EXPECTED[v.which]);
      });

      it('keeps the window: starts at its first millisecond and lasts as long as the sampler ran', () => {
        const profile = decoded();
        assert.equal(BigInt(profile.timeNanos), BigInt(FROM_MS) * 1_000_000n);
        assert.equal(Number(profile.durationNanos), (END_US - START_US) * 1000);
      });
    });
  }

  it('a window gathered in several trees holds each stack once per span, its samples summed over the trees, for as long as they lasted together', () => {
    const tree = sampleTree();
    const once = runNow(buildTimeProfiles([tree], FROM_MS, build()));
    const thrice = runNow(buildTimeProfiles([tree, tree, tree], FROM_MS, build()));
    for (const type of ['cpu', 'wall'] as const) {
      const profile = roundTrip(thrice.get(type)!);
      const tripled = views(roundTrip(once.get(type)!)).map((view) => ({ ...view, values: view.values.map((value) => value * 3) }));
      assert.deepEqual(views(profile), tripled, type);
      assert.equal(Number(profile.durationNanos), 3 * (END_US - START_US) * 1000);
      assert.equal(Number(profile.period), INTERVAL_US * 1000, 'the same mean interval in every tree');
    }
  });

  it('a window of thousands of distinct stacks and spans over several trees holds each (stack, span) once, with its own sums', () => {
    // 300 request chains 6 deep, each function its own; each tree samples every chain's leaf in
    // a span of its own and in no span: 1 800 stacks, 900 spans, their tables grown many times.
    const CHAINS = 300;
    const spans = Array.from(
      { length: CHAINS * 3 },
      (_, i) => new SpanLabels(i.toString(16).padStart(16, '0'), '4bf92f3577b34da6a3ce929d0e0e4736', { name: `GET /r/${i}` }),
    );
    const server = node('server', 0);
    const functions = Array.from({ length: CHAINS }, (_, c) => Array.from({ length: 6 }, (_, depth) => node(`c${c}d${depth}`, 0)));
    const tree = (round: number) => {
      const chain = (c: number, depth: number): TimeProfileNode => {
        const fn = functions[c]![depth]!;
        const leaf = depth === 5;
        return {
          ...fn,
          hitCount: leaf ? 2 : 0,
          contexts: leaf ? [at(spans[round * CHAINS + c], c + 1), at(undefined, 1)] : [],
          children: leaf ? [] : [chain(c, depth + 1)],
        };
      };
      return window([{ ...server, children: Array.from({ length: CHAINS }, (_, c) => chain(c, 0)) }], { totalHitCount: 2 * CHAINS });
    };
    const cpu = roundTrip(runNow(buildTimeProfiles([tree(0), tree(1), tree(2)], FROM_MS, build())).get('cpu')!);
    const got = new Map(views(cpu).map((v) => [`${v.stack} ${v.labels.span_id ?? '-'}`, v.values]));
    assert.equal(got.size, CHAINS * 3 + CHAINS, 'one sample per chain and span, one per chain for no span');
    for (let c = 0; c < CHAINS; c++) {
      const stack = [5, 4, 3, 2, 1, 0]
        .map((depth) => `c${c}d${depth}`)
        .concat('server')
        .join(' < ');
      for (let round = 0; round < 3; round++) assert.deepEqual(got.get(`${stack} ${spans[round * CHAINS + c]!.spanId}`), [1, (c + 1) * MS]);
      assert.deepEqual(got.get(`${stack} -`), [3, 3 * MS], 'no span: summed over the three trees');
    }
  });

  it('the mean interval of a gathered window is its trees’ time over all their hits', () => {
    const busy = window([node('f', 1500, [at(undefined, 1)])]);
    // A tree of the same 15 s in which V8 sampled a third as often (a loaded machine).
    const slow = { ...window([node('g', 500, [at(undefined, 1)])]), totalHitCount: 500 };
    const wall = roundTrip(runNow(buildTimeProfiles([busy, slow], FROM_MS, build())).get('wall')!);
    assert.equal(Number(wall.period), 15 * MS, '30 s over 2 000 hits');
    assert.deepEqual(
      views(wall).map((v) => [v.stack, v.values]),
      [
        ['f', [1500, 1500 * 15 * MS]],
        ['g', [500, 500 * 15 * MS]],
      ],
    );
  });

  it('every CPU sample carries CPU time; idle and I/O-wait samples are not CPU work', () => {
    const cpu = built().get('cpu');
    assert.ok(cpu);
    for (const sample of roundTrip(cpu).sample) assert.ok(Number(sample.value[1]) > 0);
  });

  it('reads span names when the window is built (an HTTP span learns its route after it started)', () => {
    const span = { name: 'GET' };
    const labels = new SpanLabels('1111111111111111', '22222222222222222222222222222222', span);
    const tree = window([node('route', 1, [at(labels, 1)])]);
    span.name = 'GET /orders/:id';
    const wall = runNow(buildTimeProfiles([tree], FROM_MS, build({ traceIdLabel: true }))).get('wall');
    assert.ok(wall);
    assert.deepEqual(
      views(roundTrip(wall)).map((v) => v.labels),
      [{ span_id: '1111111111111111', span_name: 'GET /orders/:id', trace_id: '22222222222222222222222222222222' }],
    );
  });

  it('a sample the span rule rejects (say, after the span ended) stays in the profile, unlabelled', () => {
    const tree = window([node('late', 2, [at(spanA, 1), at(spanA, 1)])]);
    const wall = runNow(buildTimeProfiles([tree], FROM_MS, build({ spanOf: () => undefined }))).get('wall');
    assert.ok(wall);
    assert.deepEqual(views(roundTrip(wall)), [{ stack: 'late', labels: {}, values: [2, 20 * MS] }]);
  });

  it('judges a sample by when it was taken on the monotonic clock: a step of the system clock before the stop moves no sample past its span’s end', () => {
    const labels = new SpanLabels('1111111111111111', '22222222222222222222222222222222', { name: 'GET /' });
    // What the sampler recorded: the span's sample context, samples having been taken in its life.
    let samplesTaken = 0;
    const context = sampleContextOf(labels, { samplesTaken: () => samplesTaken });
    samplesTaken++;
    labels.ended('GET /', 10_000_000);
    const fold = new TimeFold(spanOfSample(INTERVAL_US));
    /** A tree stopped when the epoch led the monotonic clock by `offset`, its samples taken at monotonic `takenAt` (µs). */
    const stoppedAt = (offset: number, name: string, takenAt: number[]) =>
      fold.add(
        window([
          node(
            name,
            takenAt.length,
            takenAt.map((t) => ({ context, timestamp: BigInt(offset + t), cpuTime: MS })),
          ),
        ]),
        offset,
      );
    const epoch = 1_700_000_000_000_000;
    stoppedAt(epoch, 'steady', [9_000_000, 9_999_000]);
    // The system clock stepped 1.5 s forward, then 0.7 s back, after the span ended.
    stoppedAt(epoch + 1_500_000, 'stepped-forward', [9_500_000, 10_009_000]);
    stoppedAt(epoch - 700_000, 'stepped-back', [9_990_000, 10_011_000, 10_500_000]);
    const wall = runNow(threadsPart([{ name: 'main', fold }], build()).build(FROM_MS, undefined)).get('wall');
    assert.ok(wall);
    const label = { span_id: '1111111111111111', span_name: 'GET /' };
    assert.deepEqual(
      views(roundTrip(wall)),
      sorted([
        { stack: 'steady', labels: label, values: [2, 20 * MS] },
        { stack: 'stepped-forward', labels: label, values: [2, 20 * MS] },
        { stack: 'stepped-back', labels: label, values: [1, 10 * MS] },
        { stack: 'stepped-back', labels: {}, values: [2, 20 * MS] },
      ]),
    );
  });

  it('weighs a sample by the mean interval the sampler achieved, within [asked, 2 × asked]', () => {
    const weight = (hits: number) => {
      const wall = runNow(buildTimeProfiles([window([node('f', hits)], { totalHitCount: hits })], FROM_MS, build())).get('wall');
      assert.ok(wall);
      return Number(roundTrip(wall).period);
    };
    assert.equal(weight(1200), 12_500_000, '15 s over 1 200 hits: 12.5 ms each');
    assert.equal(weight(3000), INTERVAL_US * 1000, 'never below the interval asked');
    assert.equal(weight(2), 2 * INTERVAL_US * 1000, 'never above twice the interval asked');
  });

  it('maps frames through the app’s source maps', () => {
    const mapper = {
      mappingInfo: (loc: { file: string; line: number; column: number; name?: string }) =>
        loc.file === '/app/index.js' ? { file: '/app/src/index.ts', line: loc.line * 2, column: 1, name: loc.name } : loc,
    };
    const compiled = node('compiled', 1, [at(undefined, 1)]);
    const tree = window([compiled]);
    const line = compiled.lineNumber!;
    const wall = runNow(buildTimeProfiles([tree], FROM_MS, build(), mapper as unknown as SourceMapper)).get('wall');
    assert.ok(wall);
    const profile = roundTrip(wall);
    const location = profile.location[0];
    const fn = profile.function.find((f) => f.id === location?.line[0]?.functionId);
    assert.ok(location && fn);
    assert.equal(stringAt(profile, fn.filename), '/app/src/index.ts');
    assert.equal(Number(location.line[0]?.line), line * 2);
    assert.equal(Number(fn.startLine), line * 2, "start_line: the function's first line, in the source");
  });

  it('gives each function its start line, and two functions of one name in one file stay two', () => {
    const first = node('handle', 1, [at(undefined, 1)]);
    const second = node('handle', 1, [at(undefined, 1)]);
    const wall = runNow(buildTimeProfiles([window([first, second])], FROM_MS, build())).get('wall');
    assert.ok(wall);
    const profile = roundTrip(wall);
    const functions = profile.function.map((fn) => [stringAt(profile, fn.name), Number(fn.startLine)]);
    assert.deepEqual(
      functions.sort((a, b) => Number(a[1]) - Number(b[1])),
      [
        ['handle', first.lineNumber],
        ['handle', second.lineNumber],
      ],
    );
  });

  const wanted: { wanted: ProfileType[]; withCpu: boolean; keys: ProfileType[] }[] = [
    { wanted: ['cpu', 'wall'], withCpu: true, keys: ['cpu', 'wall'] },
    { wanted: ['cpu'], withCpu: true, keys: ['cpu'] },
    { wanted: ['wall'], withCpu: true, keys: ['wall'] },
    { wanted: ['cpu', 'wall'], withCpu: false, keys: ['wall'] },
    { wanted: ['cpu'], withCpu: false, keys: [] },
  ];
  for (const w of wanted) {
    it(`wanted ${JSON.stringify(w.wanted)} from a sampler ${w.withCpu ? 'with' : 'without'} CPU time → ${JSON.stringify(w.keys)}`, () => {
      const out = runNow(buildTimeProfiles([{ ...sampleTree(), hasCpuTime: w.withCpu }], FROM_MS, build({ types: w.wanted })));
      assert.deepEqual([...out.keys()].sort(), w.keys);
    });
  }

  it('a wall profile from a sampler without CPU time has the same samples', () => {
    const out = runNow(buildTimeProfiles([{ ...sampleTree(), hasCpuTime: false }], FROM_MS, build({ types: ['wall'] }))).get('wall');
    assert.ok(out);
    assert.deepEqual(views(roundTrip(out)), EXPECTED.wall);
  });

  it('an empty window yields valid, empty profiles', () => {
    const out = runNow(buildTimeProfiles([window([], { totalHitCount: 0 })], FROM_MS, build()));
    assert.equal(out.size, 2);
    for (const [which, profile] of out) {
      const decoded = roundTrip(profile);
      assert.equal(decoded.sample.length, 0, which);
      assert.equal(metricNameOf(decoded), which === 'cpu' ? 'process_cpu' : 'wall');
    }
  });

  it('built in slices, with turns of the event loop in between, it makes the same profiles', async () => {
    const wide = () => window(Array.from({ length: 2000 }, (_, i) => node(`f${i}`, 1, [at(i % 2 ? spanA : undefined, 1)])));
    const { result: sliced, turns } = await turnsDuring(() => runSliced(buildTimeProfiles([wide()], FROM_MS, build()), 0));
    const whole = runNow(buildTimeProfiles([wide()], FROM_MS, build()));
    assert.ok(turns >= 2000 / 64 - 1, `the event loop turned ${turns} times during the build`);
    for (const type of ['cpu', 'wall'] as const) assert.deepEqual(views(roundTrip(sliced.get(type)!)), views(roundTrip(whole.get(type)!)), type);
  });
});

/** A sample at `atUs` (epoch µs, as the sampler stamps them) with `cpuMs` of CPU time. */
const timed = (context: object | undefined, cpuMs: number, atUs: number): TimeProfileNodeContext => ({ context, timestamp: BigInt(atUs), cpuTime: cpuMs * MS });

/** The CPU profile's samples of one fold as [stack, span name or '-', CPU ms], sorted. */
function cpuOf(fold: TimeFold, name = 'main'): [string, string, number][] {
  const cpu = runNow(threadsPart([{ name, fold }], build()).build(FROM_MS, undefined)).get('cpu')!;
  const decoded = roundTrip(cpu);
  return decoded.sample
    .map((s): [string, string, number] => [functionNamesOf(decoded, s).join(' < '), labelsOf(decoded, s).span_name ?? '-', Number(s.value[1]) / MS])
    .sort((a, b) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`));
}

describe('the CPU time of idle and (program) ticks', () => {
  it('goes to the busy sample just before it: the end of that work, on the thread’s way to waiting', () => {
    const fold = new TimeFold(spanOf);
    fold.add(window([node('task', 1, [timed(spanA, 2, 1_000)]), node('(idle)', 2, [timed(undefined, 3, 11_000), timed(undefined, 0.5, 21_000)])]), 0);
    assert.deepEqual(cpuOf(fold), [
      ['(idle)', '-', 0.5],
      ['task', 'GET /users/:id', 5],
    ]);
  });

  it('a (program) tick after a busy one is counted with it; one after an idle tick stays out, as before', () => {
    const fold = new TimeFold(spanOf);
    fold.add(
      window([
        node('(program)', 2, [timed(undefined, 4, 2_000), timed(undefined, 7, 4_000)]),
        node('task', 1, [timed(spanB, 1, 1_000)]),
        node('(idle)', 1, [timed(undefined, 0, 3_000)]),
      ]),
      0,
    );
    assert.deepEqual(cpuOf(fold), [['task', 'job', 5]]);
  });

  it('carries over from one tree to the next: the first tick of a gather can end the last one’s work', () => {
    const fold = new TimeFold(spanOf);
    fold.add(window([node('task', 1, [timed(spanA, 2, 1_000)])]), 0);
    fold.add(window([node('(idle)', 1, [timed(undefined, 3, 11_000)])]), 0);
    assert.deepEqual(cpuOf(fold), [['task', 'GET /users/:id', 5]]);
  });

  it('after an idle tick, goes to the work the thread says ran in between, under a frame of its own (a task shorter than the interval)', () => {
    const asked: [number, number][] = [];
    const fold = new TimeFold(spanOf, (from, to) => {
      asked.push([from, to]);
      return spanB;
    });
    // The epoch led the monotonic clock by 5 s when the tree was taken: the question is in monotonic time.
    fold.add(window([node('(idle)', 2, [timed(undefined, 0, 5_001_000), timed(undefined, 4, 5_011_000)])]), 5_000_000);
    assert.deepEqual(cpuOf(fold), [[WORK_BETWEEN_SAMPLES, 'job', 4]]);
    assert.deepEqual(asked, [[1_000, 11_000]]);
  });
});

describe('a garbage collection outside any span’s context', () => {
  const GC = 'Garbage Collection < Node.js';
  /** A tick in a span, a collection in no context 10 ms later (2 hits: one with 3 ms of CPU, one with 1 ms), then an idle tick with 0.5 ms. */
  const afterWork = () =>
    window([
      node('task', 1, [timed(spanA, 2, 1_000)]),
      node('(garbage collector)', 2, [timed(undefined, 3, 11_000), timed(undefined, 1, 12_000)]),
      node('(idle)', 1, [timed(undefined, 0.5, 21_000)]),
    ]);
  const wallOf = (fold: TimeFold) => {
    const decoded = roundTrip(runNow(threadsPart([{ name: 'worker 1', fold }], build()).build(FROM_MS, undefined)).get('wall')!);
    return decoded.sample
      .filter((s) => Number(s.value[1]) > 0)
      .map((s) => [functionNamesOf(decoded, s).join(' < '), labelsOf(decoded, s).span_name ?? '-', Number(s.value[1]) / MS])
      .sort();
  };

  it('in a thread that says whose work ran when (a worker), goes to the work that ran since the tick before, and so does the idle tick after it', () => {
    const asked: [number, number][] = [];
    const fold = new TimeFold(spanOf, (from, to) => {
      asked.push([from, to]);
      return from >= 1_000 ? spanB : undefined;
    });
    fold.add(afterWork(), 0);
    assert.deepEqual(cpuOf(fold), [
      [GC, 'job', 4.5],
      ['task', 'GET /users/:id', 2],
    ]);
    // Each tick of the collection asks about the time since the tick before it.
    assert.deepEqual(asked, [
      [1_000, 11_000],
      [11_000, 12_000],
    ]);
    // Wall time: the collection's two hits, 10 ms each, in the span too.
    assert.deepEqual(wallOf(fold), [
      [GC, 'job', 20],
      ['task', 'GET /users/:id', 10],
    ]);
  });

  it('with no work since the tick before, stays unlabelled', () => {
    const fold = new TimeFold(spanOf, () => undefined);
    fold.add(afterWork(), 0);
    assert.deepEqual(cpuOf(fold), [
      [GC, '-', 4.5],
      ['task', 'GET /users/:id', 2],
    ]);
  });

  it('in a thread that does not say (the main thread), stays unlabelled, as the sampler recorded it', () => {
    const fold = new TimeFold(spanOf);
    fold.add(afterWork(), 0);
    assert.deepEqual(cpuOf(fold), [
      [GC, '-', 4.5],
      ['task', 'GET /users/:id', 2],
    ]);
  });

  it('a collection that started inside a span’s work keeps that span; nobody is asked', () => {
    const fold = new TimeFold(spanOf, () => assert.fail('asked about a collection that carries its span'));
    fold.add(window([node('(garbage collector)', 1, [timed(spanA, 3, 11_000)])]), 0);
    assert.deepEqual(cpuOf(fold), [[GC, 'GET /users/:id', 3]]);
  });
});

describe('threads', () => {
  it('a worker’s fold, shipped to the main thread and added there, builds the samples it had, each labelled with its thread_name', () => {
    const worker = new TimeFold(spanOf);
    worker.add(sampleTree(), 0);
    const shipment = worker.toShipment();
    const received = structuredClone(shipment);
    // On the main thread, the span the worker named is found again by its labels.
    const byId = new Map([spanA, spanB].map((span) => [span.spanId, span]));
    const main = new TimeFold(spanOf);
    main.addShipment(received, (labels) => byId.get(labels.span_id!));
    main.addShipment(received, (labels) => byId.get(labels.span_id!));
    const once = cpuOf(worker, 'worker 7');
    assert.deepEqual(
      cpuOf(main, 'worker 7'),
      once.map(([stack, span, cpu]) => [stack, span, 2 * cpu]),
      'two shipments add up',
    );
  });

  it('every thread’s samples in one pprof: the same script ids on two threads are different functions, and each sample says its thread', () => {
    const mainFold = new TimeFold(spanOf);
    const workerFold = new TimeFold(spanOf);
    // Same script id, line and column on both threads, different code.
    mainFold.add(window([{ ...node('serve', 1, [at(spanA, 1)]), scriptId: 3, lineNumber: 5, columnNumber: 1, scriptName: 'file:///app/server.js' }]), 0);
    workerFold.add(window([{ ...node('crunch', 1, [at(spanA, 2)]), scriptId: 3, lineNumber: 5, columnNumber: 1, scriptName: 'file:///app/task.js' }]), 0);
    const cpu = roundTrip(
      runNow(
        threadsPart(
          [
            { name: 'main', fold: mainFold },
            { name: 'cruncher', fold: workerFold },
          ],
          build(),
        ).build(FROM_MS, undefined),
      ).get('cpu')!,
    );
    const seen = cpu.sample.map((s) => [functionNamesOf(cpu, s).join(' < '), labelsOf(cpu, s).thread_name, labelsOf(cpu, s).span_id]).sort();
    assert.deepEqual(seen, [
      ['crunch', 'cruncher', spanA.spanId],
      ['serve', 'main', spanA.spanId],
    ]);
  });
});
