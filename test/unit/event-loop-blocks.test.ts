/**
 * Event-loop blocks inside the agent (src/blocks/): the watch's stalls, the samples a sampler's
 * tree holds inside them, whose block a stall is, the block as kept and as a span event, and the
 * spans held while a block they may own is attributed (and the span batcher's gate they wait at).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TimeProfile, TimeProfileNode, TimeProfileNodeContext } from '@datadog/pprof/out/src/v8-types.js';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { attributeStall, heldByApp, ranFor, type StallMicros } from '../../src/blocks/block-attribution.js';
import { BlockEvents, blockEvent } from '../../src/blocks/block-events.js';
import { type Block, blockOf, MAX_STACKS, whereIn } from '../../src/blocks/block.js';
import { BlockWatch } from '../../src/blocks/block-watch.js';
import { type SampleKind, type StallSample, samplesWithin } from '../../src/blocks/stall-samples.js';
import { SpanHold } from '../../src/blocks/span-hold.js';
import { stallOf, watchPeriodMs } from '../../src/blocks/stall-watch.js';
import { Logger } from '../../src/log.js';
import { SpanBatcher, type SpanGate } from '../../src/tracing/span-batcher.js';

const AGENT_DIR = '/opt/pyro-run/dist/';

describe('the stall watch', () => {
  it('watches every half threshold, between every 10 ms and once a second', () => {
    const cases = [
      { thresholdMs: 20, periodMs: 10 },
      { thresholdMs: 100, periodMs: 50 },
      { thresholdMs: 101, periodMs: 50 },
      { thresholdMs: 5000, periodMs: 1000 },
    ];
    for (const { thresholdMs, periodMs } of cases) assert.equal(watchPeriodMs(thresholdMs), periodMs, `threshold ${thresholdMs}`);
  });

  it('a gap between two turns shorter than the threshold holds no block; a longer one is a stall from the last turn, busy from the timer’s due time', () => {
    const cases = [
      { last: 0, due: 50, now: 99, stall: undefined },
      { last: 0, due: 50, now: 100, stall: { sinceMs: 0, dueMs: 50, untilMs: 100 } },
      { last: 0, due: 50, now: 260, stall: { sinceMs: 0, dueMs: 50, untilMs: 260 } },
      // The last turn was a stop's, after the watch's own run: the due time is no earlier than it.
      { last: 70, due: 50, now: 300, stall: { sinceMs: 70, dueMs: 70, untilMs: 300 } },
      { last: 0, due: 500, now: 300, stall: { sinceMs: 0, dueMs: 300, untilMs: 300 } },
    ];
    for (const { last, due, now, stall } of cases) assert.deepEqual(stallOf(last, due, now, 100), stall, `${last} → ${now}`);
  });
});

/** A sample of a stall at `ms`, `kind`, of `owner`, on stack `stack`. */
const sample = (ms: number, owner: string | undefined, stack = 0, kind: SampleKind = 'busy', cpuMs = 10): StallSample<string> => ({
  atMicros: ms * 1000,
  kind,
  owner,
  stack,
  cpuNanos: cpuMs * 1e6,
});
const stallOfMs = (sinceMs: number, dueMs: number, untilMs: number): StallMicros => ({
  sinceMicros: sinceMs * 1000,
  dueMicros: dueMs * 1000,
  untilMicros: untilMs * 1000,
});
/** The attribution's settings: a 100 ms threshold, a sample every 10 ms. */
const AT = { thresholdMs: 100, intervalMicros: 10_000 };
/** Samples every 10 ms from `fromMs` to `toMs` (both included). */
const every10 = (fromMs: number, toMs: number, make: (ms: number) => StallSample<string>) =>
  Array.from({ length: Math.floor((toMs - fromMs) / 10) + 1 }, (_, i) => make(fromMs + i * 10));

describe('whose block a stall is', () => {
  it('the owner of most busy samples holds the block; the others’ samples count in its total', () => {
    const samples = [...every10(0, 40, (ms) => sample(ms, 'ping')), ...every10(50, 240, (ms) => sample(ms, 'report', 1)), sample(250, 'ping')];
    const block = attributeStall(stallOfMs(0, 50, 250), samples, AT)!;
    assert.equal(block.owner, 'report');
    assert.deepEqual([block.ownerSamples, block.samples], [20, 26]);
    assert.equal(block.heaviest, 1);
    assert.deepEqual(
      block.stacks.map((s) => [s.stack, s.samples]),
      [
        [1, 20],
        [0, 6],
      ],
    );
  });

  it('a stall most of whose samples belong to no span is charged to none', () => {
    const block = attributeStall(
      stallOfMs(0, 50, 200),
      [...every10(0, 150, (ms) => sample(ms, undefined)), ...every10(160, 200, (ms) => sample(ms, 'a'))],
      AT,
    )!;
    assert.equal(block.owner, undefined);
    assert.equal(block.ownerSamples, 16);
  });

  it('a span wins a tie with no span; (program) samples show in the stacks but do not vote', () => {
    const samples = [
      ...every10(0, 40, (ms) => sample(ms, undefined)),
      ...every10(50, 90, (ms) => sample(ms, 'a')),
      ...every10(100, 190, (ms) => sample(ms, undefined, 2, 'program')),
    ];
    const block = attributeStall(stallOfMs(0, 50, 200), samples, AT)!;
    assert.deepEqual([block.owner, block.samples, block.ownerSamples], ['a', 10, 5]);
    assert.ok(block.stacks.some((s) => s.stack === 2 && s.samples === 10));
  });

  it('the block starts with the run of busy samples reaching the timer’s due time: an idle sample before it is the loop waiting', () => {
    const samples = [...every10(0, 30, (ms) => sample(ms, undefined, 0, 'idle')), ...every10(40, 200, (ms) => sample(ms, 'a'))];
    const block = attributeStall(stallOfMs(0, 50, 205), samples, AT)!;
    assert.deepEqual([block.startMicros, block.durationMs], [40_000, 165]);
    assert.equal(block.samples, 17, 'idle samples do not count');
  });

  it('without samples it starts at the due time, and a stall shorter than the threshold from there is no block', () => {
    assert.equal(attributeStall(stallOfMs(0, 50, 140), [], AT), undefined);
    assert.deepEqual(
      (({ startMicros, durationMs, owner, samples, heaviest }) => ({ startMicros, durationMs, owner, samples, heaviest }))(
        attributeStall(stallOfMs(0, 50, 160), [], AT)!,
      ),
      { startMicros: 50_000, durationMs: 110, owner: undefined, samples: 0, heaviest: undefined },
    );
  });

  it('a busy stretch that proves shorter than the threshold once its idle samples are read is no block', () => {
    const samples = [...every10(0, 60, (ms) => sample(ms, undefined, 0, 'idle')), ...every10(70, 120, (ms) => sample(ms, 'a'))];
    assert.equal(attributeStall(stallOfMs(0, 70, 125), samples, AT), undefined);
  });

  it('a stall the process did not run through is no one’s block: what was current when it stopped did not hold the loop', () => {
    // 30 ms of /ping's work, then no sample for 150 ms (the process stopped, or not given a core): the one after brings 2 ms of CPU.
    const samples = [...every10(0, 30, (ms) => sample(ms, 'ping')), sample(180, 'ping', 0, 'busy', 2), sample(190, 'ping'), sample(200, 'ping')];
    const block = attributeStall(stallOfMs(0, 50, 205), samples, AT)!;
    assert.deepEqual([block.owner, block.ownerSamples, block.samples, block.durationMs, block.ranMs], [undefined, 0, 7, 205, 65]);
    assert.equal(block.heaviest, 0, 'its stacks still show where the thread was');
  });

  it('a call that waits holds the loop: samples at every interval with little CPU are the span’s', () => {
    const block = attributeStall(
      stallOfMs(0, 50, 200),
      every10(0, 200, (ms) => sample(ms, 'a', 0, 'busy', 0.05)),
      AT,
    )!;
    assert.deepEqual([block.owner, block.ownerSamples, block.ranMs], ['a', 21, 200]);
  });

  it('the CPU a late sample brings counts: a sampler that fell behind does not make a block the process’s', () => {
    const samples = [0, 60, 120, 180, 200].map((ms) => sample(ms, 'a', 0, 'busy', ms === 0 ? 10 : ms === 200 ? 20 : 60));
    const block = attributeStall(stallOfMs(0, 50, 200), samples, AT)!;
    assert.deepEqual([block.owner, block.ranMs], ['a', 200]);
  });

  it('the time the thread was there: each gap up to the CPU the sample after it brings, or an interval when less; up to an interval after the last', () => {
    const at = (ms: number, cpuMs: number) => sample(ms, 'a', 0, 'busy', cpuMs);
    const cases: { samples: StallSample<string>[]; untilMs: number; ranMs: number }[] = [
      { samples: [], untilMs: 150, ranMs: 10 },
      { samples: [at(10, 10), at(20, 10)], untilMs: 25, ranMs: 25 },
      { samples: [at(10, 0.1), at(20, 0.1)], untilMs: 20, ranMs: 20 },
      { samples: [at(100, 5)], untilMs: 150, ranMs: 20 },
      { samples: [at(100, 80)], untilMs: 100, ranMs: 80 },
      { samples: [at(100, 500)], untilMs: 100, ranMs: 100 },
    ];
    for (const { samples, untilMs, ranMs } of cases)
      assert.equal(ranFor(samples, 0, untilMs * 1000, 10_000) / 1000, ranMs, JSON.stringify({ samples, untilMs }));
    assert.deepEqual([heldByApp(100, 100), heldByApp(99.9, 100)], [true, false], 'the app held the loop when the thread was there for the threshold');
  });

  it('samples outside the stall are not its own', () => {
    const samples = [sample(-50, 'b'), ...every10(60, 200, (ms) => sample(ms, 'a')), sample(260, 'b')];
    const block = attributeStall(stallOfMs(0, 50, 210), samples, AT)!;
    assert.deepEqual([block.owner, block.samples], ['a', 15]);
  });
});

/** A node of a sampler tree with samples at the given monotonic ms (epoch offset 0). */
function treeNode(
  name: string,
  samples: { ms: number; owner?: string; cpuMs?: number }[] = [],
  children: TimeProfileNode[] = [],
  file = '/app/server.js',
): TimeProfileNode {
  const contexts: TimeProfileNodeContext[] = samples.map(({ ms, owner, cpuMs = 10 }) => ({
    context: owner === undefined ? undefined : { owner },
    timestamp: BigInt(Math.round(ms * 1000)),
    cpuTime: cpuMs * 1e6,
  }));
  return { name, scriptName: file, scriptId: 1, lineNumber: 10, columnNumber: 3, hitCount: samples.length, contexts, children };
}
const tree = (children: TimeProfileNode[]): TimeProfile => ({ startTime: 0, endTime: 1, topDownRoot: treeNode('(root)', [], children, '') });
const ownerOf = (context: TimeProfileNodeContext) => (context.context as { owner?: string } | undefined)?.owner;

describe('the samples a tree holds inside stalls', () => {
  const raw = tree([
    treeNode('(idle)', [{ ms: 5 }, { ms: 300 }], [], ''),
    treeNode('(program)', [{ ms: 150 }], [], ''),
    treeNode(
      'handler',
      [{ ms: 100, owner: 'a' }],
      [
        treeNode('hold', [
          { ms: 110, owner: 'a' },
          { ms: 120, owner: 'a' },
          { ms: 400, owner: 'c' },
        ]),
      ],
    ),
  ]);

  it('each stretch gets its samples, oldest first, with their kind, owner and stack (root first, V8’s root left out)', () => {
    const { samples, stacks } = samplesWithin(raw, 0, [{ fromMicros: 0, toMicros: 200_000 }], ownerOf);
    assert.deepEqual(
      samples[0]!.map((s) => [s.atMicros / 1000, s.kind, s.owner, stacks[s.stack]!.map((f) => f.name).join('>')]),
      [
        [5, 'idle', undefined, '(idle)'],
        [100, 'busy', 'a', 'handler'],
        [110, 'busy', 'a', 'handler>hold'],
        [120, 'busy', 'a', 'handler>hold'],
        [150, 'program', undefined, '(program)'],
      ],
    );
  });

  it('stretches are read in one walk; a sample in none is left out, and so is its stack', () => {
    const { samples, stacks } = samplesWithin(
      raw,
      50_000,
      [
        { fromMicros: 40_000, toMicros: 60_000 },
        { fromMicros: 250_000, toMicros: 260_000 },
      ],
      ownerOf,
    );
    assert.deepEqual(
      samples.map((list) => list.map((s) => s.atMicros / 1000)),
      [[50, 60], [250]],
    );
    assert.equal(stacks.length, 3);
  });
});

const frames = (...names: [string, string][]) => names.map(([name, scriptName]) => ({ name, scriptName, scriptId: 1, lineNumber: 3, columnNumber: 5 }));

describe('a block as kept and sent', () => {
  const stacks = [
    frames(['handle', '/app/node_modules/express/lib/router.js'], ['report', '/app/server.js'], ['burn', '/app/burn.js'], ['now', '']),
    // V8 names an anonymous function '': it is named by where it is, as the profiles name it.
    frames(['', `${AGENT_DIR}preload/register.js`], ['ping', '/app/server.js']),
  ];
  const attribution = {
    startMicros: 1_000_000,
    untilMicros: 1_250_000,
    durationMs: 250,
    owner: 'span-a',
    samples: 25,
    ownerSamples: 22,
    stacks: [
      { stack: 0, samples: 22, cpuNanos: 220e6 },
      { stack: 1, samples: 3, cpuNanos: 30e6 },
    ],
    heaviest: 0,
    ranMs: 250,
  };
  const making = {
    thresholdMs: 100,
    spanOf: (owner: string) => ({ spanId: '00f067aa0ba902b7', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', name: `GET /${owner}` }),
    sourceMapper: undefined,
    agentDir: AGENT_DIR,
    epochOffsetMs: 1_700_000_000_000,
  };

  it('is charged to its owner’s span, at the epoch time of its start, its frames shared between its stacks', () => {
    const block = blockOf(attribution, stacks, making);
    assert.equal(block.startedAt, 1_700_000_001_000);
    assert.deepEqual(block.span, { spanId: '00f067aa0ba902b7', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', name: 'GET /span-a' });
    assert.deepEqual(
      block.stacks.map((s) => s.frames.map((id) => block.frames[id]!.name)),
      [
        ['handle', 'report', 'burn', 'now'],
        ['(anonymous:L#3:C#5)', 'ping'],
      ],
    );
    assert.equal(block.heaviest, 0);
  });

  it('names where it ran by the innermost frame of the app’s own code: not a package’s, Node’s, V8’s or the agent’s', () => {
    assert.deepEqual(blockOf(attribution, stacks, making).where, { name: 'burn', file: '/app/burn.js', line: 3 });
    const cases: { stack: [string, string][]; where: string | undefined }[] = [
      {
        stack: [
          ['report', '/app/server.js'],
          ['parse', '/app/node_modules/qs/lib/parse.js'],
        ],
        where: 'report',
      },
      {
        stack: [
          ['report', '/app/server.js'],
          ['readFileSync', 'node:fs'],
        ],
        where: 'report',
      },
      {
        stack: [
          ['report', '/app/server.js'],
          ['wrapped', `${AGENT_DIR}vendor/otel.cjs`],
        ],
        where: 'report',
      },
      { stack: [['parse', '/app/node_modules/qs/lib/parse.js']], where: 'parse' },
      { stack: [], where: undefined },
    ];
    for (const { stack, where } of cases)
      assert.equal(
        whereIn(
          stack.map(([name, file]) => ({ name, file, line: 1 })),
          AGENT_DIR,
        )?.name,
        where,
        JSON.stringify(stack),
      );
  });

  it('keeps its heaviest stacks, and the span’s own heaviest even when others outweigh it', () => {
    const many = Array.from({ length: MAX_STACKS + 5 }, (_, i) => frames([`f${i}`, '/app/a.js']));
    const shares = many.map((_, i) => ({ stack: i, samples: 100 - i, cpuNanos: 0 }));
    const block = blockOf({ ...attribution, stacks: shares, heaviest: MAX_STACKS + 2 }, many, making);
    assert.equal(block.stacks.length, MAX_STACKS);
    assert.equal(block.frames[block.stacks[block.heaviest]!.frames[0]!]!.name, `f${MAX_STACKS + 2}`);
  });

  it('its span event says how long, over what threshold, where, and the heaviest stack leaf first; at its start, or its span’s when it reads earlier', () => {
    const block = blockOf(attribution, stacks, making);
    const event = blockEvent(block, [1_700_000_000, 0]);
    assert.equal(event.name, 'pyro-run.event_loop.blocked');
    assert.deepEqual(event.time, [1_700_000_001, 0]);
    assert.deepEqual(event.attributes, {
      'pyro-run.block.duration_ms': 250,
      'pyro-run.block.ran_ms': 250,
      'pyro-run.block.threshold_ms': 100,
      'pyro-run.block.samples': 25,
      'pyro-run.block.span_samples': 22,
      'code.function': 'burn',
      'code.filepath': '/app/burn.js',
      'code.lineno': 3,
      'pyro-run.block.stack': 'now\nburn (/app/burn.js:3)\nreport (/app/server.js:3)\nhandle (/app/node_modules/express/lib/router.js:3)',
    });
    assert.deepEqual(blockEvent(block, [1_700_000_002, 500]).time, [1_700_000_002, 500]);
  });
});

/** A span as the exporters read it: its context, start and events. */
const spanWith = (spanId: string, events: ReadableSpan['events'] = []) =>
  ({
    spanContext: () => ({ spanId, traceId: '4bf92f3577b34da6a3ce929d0e0e4736', traceFlags: 1 }),
    startTime: [1_700_000_000, 0],
    events,
    name: spanId,
  }) as unknown as ReadableSpan;
const blockFor = (spanId: string | undefined, durationMs = 200): Block => ({
  startedAt: 1_700_000_001_000,
  durationMs,
  ranMs: durationMs,
  thresholdMs: 100,
  span: spanId === undefined ? undefined : { spanId, traceId: '4bf92f3577b34da6a3ce929d0e0e4736', name: 'GET /x' },
  samples: 20,
  spanSamples: 18,
  frames: [],
  stacks: [],
  heaviest: -1,
  where: undefined,
});

describe('the events of blocks on the spans that leave', () => {
  it('a span leaves with one event per block charged to it, once; other spans leave as they are', () => {
    const events = new BlockEvents();
    events.add(blockFor('aaaaaaaaaaaaaaaa', 200));
    events.add(blockFor('aaaaaaaaaaaaaaaa', 300));
    events.add(blockFor(undefined));
    const own = spanWith('aaaaaaaaaaaaaaaa', [{ name: 'app event', time: [1, 0] }]);
    const other = spanWith('bbbbbbbbbbbbbbbb');
    assert.equal(events.outgoing(other), other);
    const out = events.outgoing(own);
    assert.deepEqual(
      out.events.map((e) => [e.name, e.attributes?.['pyro-run.block.duration_ms']]),
      [
        ['app event', undefined],
        ['pyro-run.event_loop.blocked', 200],
        ['pyro-run.event_loop.blocked', 300],
      ],
    );
    assert.equal(own.events.length, 1, "the app's span is untouched");
    assert.equal(out.name, own.name);
    assert.equal(events.outgoing(own), own, 'the events went with it');
  });
});

describe('spans held while a block they may own is attributed', () => {
  const holdWith = (maxHoldMs = 2000, maxHeld = 10) => {
    const passed: string[] = [];
    const hold = new SpanHold<string>(maxHoldMs, maxHeld, (error) => assert.fail(String(error)));
    return { hold, passed, pass: (item: string) => void passed.push(item) };
  };

  it('a held span leaves when the stalls it waits for are settled, in the order held', () => {
    const { hold, passed, pass } = holdWith();
    hold.hold('a', pass, 1, 0);
    hold.hold('b', pass, 2, 1);
    hold.hold('c', pass, 2, 2);
    hold.settled(1, 10);
    assert.deepEqual(passed, ['a']);
    hold.settled(2, 20);
    assert.deepEqual(passed, ['a', 'b', 'c']);
    assert.equal(hold.size, 0);
  });

  it('a span held too long leaves without its block; past the most held, the oldest leaves at once', () => {
    const { hold, passed, pass } = holdWith(100, 2);
    hold.hold('a', pass, 5, 0);
    hold.hold('b', pass, 5, 50);
    hold.hold('c', pass, 5, 60);
    assert.deepEqual(passed, ['a']);
    hold.settled(0, 150);
    assert.deepEqual(passed, ['a', 'b']);
    hold.drain();
    assert.deepEqual(passed, ['a', 'b', 'c']);
  });

  it('what waits too long leaves by itself, without a settled stall', async () => {
    const { hold, passed, pass } = holdWith(20);
    hold.hold('a', pass, 7);
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.deepEqual(passed, ['a']);
  });
});

describe('the block watch', () => {
  const busyFor = (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end);
  };
  /** A watch of `thresholdMs` whose owners are the samples' names, asking `gatherSoon` after a stall its timer finds. */
  const watchWith = (thresholdMs: number, gatherSoon: () => void, log: Logger) =>
    new BlockWatch<string>({
      thresholdMs,
      intervalMicros: 10_000,
      ownerOf,
      spanOf: (owner) => ({ spanId: 'aaaaaaaaaaaaaaaa', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', name: owner }),
      sourceMapper: () => undefined,
      agentDir: AGENT_DIR,
      gatherSoon,
      log,
    });

  it('a stall found at a stop is attributed from that stop’s tree, and what waited for it is settled', () => {
    const blocks: Block[] = [];
    const settled: number[] = [];
    const watch = watchWith(50, () => assert.fail('a stall found at a stop needs no other'), new Logger('silent'));
    watch.onBlock((block) => blocks.push(block));
    watch.onSettled((through) => settled.push(through));
    watch.start();
    try {
      watch.beforeStop(); // the loop's first turn
      const started = performance.now();
      busyFor(80);
      assert.equal(watch.stallsBy(), 1, 'a span ending inside the stall waits for it');
      watch.beforeStop();
      const samples = Array.from({ length: 8 }, (_, i) => ({ ms: started + 5 + i * 10, owner: 'GET /report' }));
      watch.tree(tree([treeNode('hold', samples)]), 0);
    } finally {
      watch.stop();
    }
    assert.equal(blocks.length, 1);
    assert.equal(blocks[0]!.span?.name, 'GET /report');
    assert.ok(blocks[0]!.durationMs >= 50, String(blocks[0]!.durationMs));
    assert.deepEqual(settled, [1]);
    assert.equal(watch.stallsBy(), 0, 'nothing left to wait for');
  });

  it('a failure inside the watch’s own timer is one warning and the end of the watch, never the app’s exception; what waited is let go', async () => {
    const lines: string[] = [];
    const settled: number[] = [];
    const log = new Logger(
      'warn',
      (text) => text,
      (line) => void lines.push(line),
    );
    const watch = watchWith(
      20,
      () => {
        throw new Error('no gather today');
      },
      log,
    );
    watch.onSettled((through) => settled.push(through));
    watch.start();
    try {
      watch.beforeStop();
      busyFor(40);
      // The watch's timer runs next, finds the stall and asks for a gather, which throws.
      await new Promise((resolve) => setTimeout(resolve, 40));
      busyFor(40);
      await new Promise((resolve) => setTimeout(resolve, 40));
    } finally {
      watch.stop();
    }
    assert.deepEqual(lines, ['pyro-run: warning: event-loop blocks are no longer watched: no gather today\n']);
    assert.deepEqual(settled, [Number.POSITIVE_INFINITY]);
    assert.equal(watch.stallsBy(), 0);
  });
});

describe('spans through a gate', () => {
  const span = (name: string) => ({ name, spanContext: () => ({ traceFlags: 1, spanId: name, traceId: name }) }) as unknown as ReadableSpan;

  it('a span the gate keeps leaves when the gate lets it go; the final flush takes what it still holds', () => {
    const held: [ReadableSpan, (span: ReadableSpan) => void][] = [];
    const gate: SpanGate = {
      keep: (s, pass) => s.name.startsWith('root') && held.push([s, pass]) > 0,
      drain: () => {
        for (const [s, pass] of held.splice(0)) pass(s);
      },
    };
    const batcher = new SpanBatcher({
      maxQueueSize: 100,
      maxExportBatchSize: 100,
      scheduledDelayMillis: 60_000,
      firstFullBatch: 100,
      gate,
      outgoing: (s) => ({ ...s, name: `${s.name}!` }) as ReadableSpan,
      onBatch: () => assert.fail('no batch before the flush'),
      onDrop: () => assert.fail('dropped'),
      onError: (error) => assert.fail(String(error)),
    });
    batcher.onEnd(span('child-1'));
    batcher.onEnd(span('root-1'));
    batcher.onEnd(span('child-2'));
    const [first] = held.splice(0, 1);
    first![1](first![0]);
    batcher.onEnd(span('root-2'));
    assert.deepEqual(
      batcher.takeBuffered().map((batch) => batch.map((s) => s.name)),
      [['child-1!', 'child-2!', 'root-1!', 'root-2!']],
    );
  });
});
