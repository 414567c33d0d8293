/**
 * Event-loop blocks in a local recording and its report: the longest kept in blocks.json with
 * their frames in one table, read back (old recordings without the file still load), listed
 * longest first with their span's endpoint and where in the app's code they ran, each with its
 * own flame graph; the summary's count and worst.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Block, BlockFrame } from '../../src/blocks/block.js';
import { keepLongest, recordedBlocks } from '../../src/export/local/block-file.js';
import { BLOCKS_FILE, MANIFEST_FILE } from '../../src/recording.js';
import { aggregateRun } from '../../src/report/aggregate.js';
import { blockedByText } from '../../src/report/blocked-by.js';
import { loadRunSync, RunError } from '../../src/report/load-run.js';
import { parseBlocks, type RunBlock } from '../../src/report/run-blocks.js';
import { formatSummary } from '../../src/report/summary.js';
import { SHOP, shopRecording, spanIdOf, traceIdOf } from '../support/recording.js';
import { scratchDirs } from '../support/scratch.js';

const { fresh } = scratchDirs('pyro-run-block-recording-');

const F = {
  main: { name: 'main', file: 'src/server.ts', line: 1 },
  handleUser: { name: 'handleUser', file: 'src/users.ts', line: 30 },
  fib: { name: 'fib', file: 'src/math.ts', line: 12 },
  parse: { name: 'parse', file: '/app/node_modules/qs/lib/parse.js', line: 3 },
} satisfies Record<string, BlockFrame>;

/**
 * A block of `durationMs` charged to `spanName` (none: undefined), its stacks given as frame lists
 * (root first) with their samples; the thread ran `ranMs` of it (all of it unless said).
 */
function block(
  durationMs: number,
  spanName: string | undefined,
  stacks: [BlockFrame[], number][],
  startedAt = Date.parse('2026-11-29T22:15:10Z'),
  ranMs = durationMs,
): Block {
  const frames: BlockFrame[] = [];
  const id = (frame: BlockFrame) => {
    const at = frames.indexOf(frame);
    return at >= 0 ? at : frames.push(frame) - 1;
  };
  return {
    startedAt,
    durationMs,
    ranMs,
    thresholdMs: 100,
    span: spanName === undefined ? undefined : { spanId: spanIdOf(1), traceId: traceIdOf(1), name: spanName },
    samples: stacks.reduce((n, [, samples]) => n + samples, 0),
    spanSamples: stacks[0]?.[1] ?? 0,
    frames,
    stacks: stacks.map(([path, samples]) => ({ frames: path.map(id), samples, cpuNs: samples * 9e6 })),
    heaviest: stacks.length > 0 ? 0 : -1,
    where: undefined,
  };
}

describe('the blocks a recording keeps', () => {
  it('keeps the longest, longest first, a new block after one as long', () => {
    const b = (ms: number) => block(ms, 'x', []);
    const cases: { kept: number[]; add: number; max: number; expected: number[] }[] = [
      { kept: [], add: 150, max: 3, expected: [150] },
      { kept: [300, 200, 100], add: 250, max: 3, expected: [300, 250, 200] },
      { kept: [300, 200, 100], add: 50, max: 3, expected: [300, 200, 100] },
      { kept: [300, 200], add: 200, max: 3, expected: [300, 200, 200] },
    ];
    for (const { kept, add, max, expected } of cases) {
      const added = b(add);
      const next = keepLongest(kept.map(b), added, max);
      assert.deepEqual(
        next.map((x) => x.durationMs),
        expected,
      );
      if (kept.length === 2) assert.equal(next[2], added);
    }
  });

  it('writes the blocks’ frames once, in one table, each stack pointing into it', () => {
    const recorded = recordedBlocks([block(250, 'GET /users/:id', [[[F.main, F.handleUser, F.fib], 20]]), block(120, undefined, [[[F.main, F.parse], 12]])]);
    assert.deepEqual(
      recorded.frames.map((f) => f.name),
      ['main', 'handleUser', 'fib', 'parse'],
    );
    assert.deepEqual(
      recorded.blocks.map((b) => [b.startedAt, b.durationMs, b.span?.name ?? null, b.stacks.map((s) => s.frames)]),
      [
        ['2026-11-29T22:15:10.000Z', 250, 'GET /users/:id', [[0, 1, 2]]],
        ['2026-11-29T22:15:10.000Z', 120, null, [[0, 3]]],
      ],
    );
  });
});

describe('reading them back', () => {
  const nodes: string[] = [];
  const stackNodeOf = (frames: readonly BlockFrame[]) => nodes.push(frames.map((f) => f.name).join('>'));

  it('reads the file the recorder writes, longest first', () => {
    const recorded = recordedBlocks([block(120, undefined, [[[F.main, F.parse], 12]]), block(250, 'GET /users/:id', [[[F.main, F.fib], 20]])]);
    const blocks = parseBlocks(JSON.parse(JSON.stringify(recorded)), stackNodeOf);
    assert.ok(Array.isArray(blocks));
    assert.deepEqual(
      blocks.map((b) => [b.durationMs, b.span?.name, b.stacks.map((s) => nodes[s.node - 1]), b.heaviest]),
      [
        [250, 'GET /users/:id', ['main>fib'], 0],
        [120, undefined, ['main>parse'], 0],
      ],
    );
  });

  it('keeps how long of each block the process ran; a file from before it was kept reads as all of it', () => {
    const recorded = recordedBlocks([block(160, undefined, [[[F.main], 3]], undefined, 30.04)]);
    assert.equal(recorded.blocks[0]!.ranMs, 30);
    const read = (raw: unknown) => (parseBlocks(raw, stackNodeOf) as RunBlock[]).map((b) => [b.durationMs, b.ranMs]);
    assert.deepEqual(read(recorded), [[160, 30]]);
    const { ranMs: _, ...before } = recorded.blocks[0]!;
    assert.deepEqual(read({ ...recorded, blocks: [before] }), [[160, 160]]);
    assert.match(String(parseBlocks({ ...recorded, blocks: [{ ...before, ranMs: 'most' }] }, stackNodeOf)), /block 0 is not a block/);
  });

  it('says what is wrong with a file it cannot read', () => {
    const good = recordedBlocks([block(250, 'x', [[[F.main], 3]])]);
    const cases: { raw: unknown; problem: RegExp }[] = [
      { raw: [], problem: /not an object with frames and blocks/ },
      { raw: { ...good, frames: [{ name: 'main' }] }, problem: /frame 0 is not a name, file and line/ },
      { raw: { ...good, blocks: [{ ...good.blocks[0], startedAt: 'yesterday' }] }, problem: /block 0 is not a block/ },
      { raw: { ...good, blocks: [{ ...good.blocks[0], span: { spanId: 1 } }] }, problem: /block 0 is not a block/ },
      { raw: { ...good, blocks: [{ ...good.blocks[0], stacks: [{ frames: [7], samples: 1, cpuNs: 0 }] }] }, problem: /names a frame the file does not hold/ },
    ];
    for (const { raw, problem } of cases) assert.match(String(parseBlocks(raw, stackNodeOf)), problem);
  });

  it('a recording made before blocks were watched loads as before: no blocks, none in the report', () => {
    const run = loadRunSync(shopRecording(fresh()));
    assert.deepEqual(run.blocks, []);
    assert.equal(run.manifest.blocks, undefined);
    const aggregates = aggregateRun(run);
    assert.equal(aggregates.blocks, undefined);
    assert.deepEqual(aggregates.trees?.blocks, []);
    assert.doesNotMatch(formatSummary(aggregates), /Event-loop blocks/);
  });

  it('a damaged blocks.json is a corrupt recording, named', () => {
    const dir = shopRecording(fresh());
    writeFileSync(path.join(dir, BLOCKS_FILE), '{"frames": [');
    assert.throws(
      () => loadRunSync(dir),
      (error: unknown) => error instanceof RunError && error.code === 'corrupt' && error.message.includes(BLOCKS_FILE),
    );
  });
});

/** The shop recording with blocks.json and run.json's count: `count` blocks in all, `blocks` kept. */
function shopWithBlocks(blocks: Block[], count = blocks.length): string {
  const dir = shopRecording(fresh());
  writeFileSync(path.join(dir, BLOCKS_FILE), JSON.stringify(recordedBlocks(blocks)));
  const manifestPath = path.join(dir, MANIFEST_FILE);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  writeFileSync(manifestPath, JSON.stringify({ ...manifest, blocks: { thresholdMs: 100, count } }));
  return dir;
}

describe('the report of a run that watched blocks', () => {
  const blocks = [
    block(120, undefined, [[[F.main, F.parse], 12]], Date.parse('2026-11-29T22:15:04Z')),
    block(250, SHOP.users.name, [
      [[F.main, F.handleUser, F.fib], 20],
      [[F.main, F.handleUser, F.parse], 4],
    ]),
    block(180, SHOP.users.name, [[[F.main, F.handleUser, F.parse], 15]]),
  ];
  /** A stall of 160 ms the process ran 30 ms of (stopped, or not given a core): no one's block. */
  const notRunning = block(160, undefined, [[[F.main, F.handleUser, F.parse], 3]], Date.parse('2026-11-29T22:15:20Z'), 30);

  it('lists them longest first, with their span’s endpoint and the innermost frame of the app’s own code', () => {
    const aggregates = aggregateRun(loadRunSync(shopWithBlocks(blocks, 5)));
    const summary = aggregates.blocks!;
    assert.deepEqual([summary.thresholdMs, summary.count], [100, 5]);
    const name = (frame: number) => aggregates.strings[aggregates.frames.name[frame]!];
    assert.deepEqual(
      summary.list.map((b) => [b.durationMs, b.name, b.endpoint < 0 ? '' : aggregates.endpoints[b.endpoint]!.name, name(b.where), b.spanId]),
      [
        [250, SHOP.users.name, SHOP.users.name, 'fib', spanIdOf(1)],
        [180, SHOP.users.name, SHOP.users.name, 'handleUser', spanIdOf(1)],
        [120, '', '', 'main', undefined],
      ],
    );
  });

  it('each block’s flame graph holds its own samples: CPU by their CPU time, wall by samples × the sampling interval', () => {
    const aggregates = aggregateRun(loadRunSync(shopWithBlocks(blocks)));
    const longest = aggregates.trees!.blocks[0]!;
    assert.equal(longest.wall.total[0], 24 * 10_000_000);
    assert.equal(longest.cpu.total[0], 24 * 9e6);
    assert.deepEqual(
      longest.wall.frame.slice(1).map((f) => aggregates.strings[aggregates.frames.name[f]!]),
      ['main', 'handleUser', 'fib', 'parse'],
    );
  });

  it('the summary gives their count and the worst, and who blocked how often', () => {
    const text = formatSummary(aggregateRun(loadRunSync(shopWithBlocks(blocks, 5)), { trees: false }));
    assert.match(text, /\nEvent-loop blocks of 100ms or longer: 5; the longest 250ms in GET \/users\/:id, in fib, at 2026-11-29 22:15:10\.000 UTC\n/);
    assert.match(text, /\n {2}blocked by \(the 3 longest\): GET \/users\/:id 2, \(outside any span\) 1\n/);
  });

  it('a run that watched and found none says so', () => {
    const text = formatSummary(aggregateRun(loadRunSync(shopWithBlocks([], 0)), { trees: false }));
    assert.match(text, /\nEvent-loop blocks of 100ms or longer: none\n/);
  });

  it('a stall the process did not run through is named so, apart from the blocks outside any span', () => {
    const aggregates = aggregateRun(loadRunSync(shopWithBlocks([...blocks, notRunning])), { trees: false });
    assert.deepEqual(
      aggregates.blocks!.list.map((b) => [b.durationMs, b.name, b.notRunning]),
      [
        [250, SHOP.users.name, false],
        [180, SHOP.users.name, false],
        [160, '', true],
        [120, '', false],
      ],
    );
    assert.match(formatSummary(aggregates), /\n {2}blocked by: GET \/users\/:id 2, \(outside any span\) 1, \(process not running\) 1\n/);
  });

  it('the report reads the agent’s verdict at the threshold’s edge: a stall the process ran 99.96 ms of is not running', () => {
    const edge = block(160, undefined, [[[F.main], 3]], Date.parse('2026-11-29T22:15:20Z'), 99.96);
    const aggregates = aggregateRun(loadRunSync(shopWithBlocks([edge])), { trees: false });
    assert.deepEqual(
      aggregates.blocks!.list.map((b) => b.notRunning),
      [true],
    );
  });

  it('names are counted most first, ties by name', () => {
    const named = (name: string, notRunning = false) => ({ name, notRunning });
    assert.equal(blockedByText([named('b'), named(''), named('a'), named('b'), named('', true)]), 'b 2, (outside any span) 1, (process not running) 1, a 1');
  });
});
