/**
 * Reading recordings and what a report computes from them, on synthetic runs written in the
 * documented on-disk format with known stacks, labels and spans: the numbers users read in the
 * summary and the page (endpoint latency, CPU per endpoint and span, flame graph totals, top
 * self-time functions, the share of samples inside spans), and the errors they get for bad input.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { EndpointTotals } from '../../src/export/local/endpoint-totals.js';
import { aggregateRun, type FlameTree, modelRun, processFlameTree, type RunAggregates, spanFlameTree, type ThreadValues } from '../../src/report/aggregate.js';
import { exitSummary } from '../../src/report/exit-summary.js';
import { latestRun, loadRunSync, resolveRunDir, RunError, type RunErrorCode } from '../../src/report/load-run.js';
import { formatSummary } from '../../src/report/summary.js';
import { scratchDirs } from '../support/scratch.js';
import {
  SHOP,
  shopRecording,
  type SampleSpec,
  type SpanSpec,
  spanIdOf,
  THREADS,
  threadsRecording,
  traceIdOf,
  type WindowSpec,
  writeRecording,
} from '../support/recording.js';
import { seededDraw } from '../support/seeded.js';

const MS = 1_000_000;
const { base, fresh } = scratchDirs('pyro-run-report-');

const shop = () => loadRunSync(shopRecording(fresh()));

const frameName = (a: RunAggregates, frame: number) => (frame < 0 ? 'all' : (a.strings[a.frames.name[frame] as number] as string));

/** The node reached by following function names from the root, e.g. ['main', 'handleUser', 'fib']. */
function nodeAt(a: RunAggregates, tree: FlameTree, names: readonly string[]): { total: number; self: number } | undefined {
  const node = nodeIndex(a, tree, names);
  return node < 0 ? undefined : { total: tree.total[node] as number, self: tree.self[node] as number };
}

/** nodeAt's position in the tree's arrays, -1 when there is no such node. */
function nodeIndex(a: RunAggregates, tree: FlameTree, names: readonly string[]): number {
  let node = 0;
  for (const name of names) {
    const depth = (tree.depth[node] as number) + 1;
    let found = -1;
    for (let i = node + 1; i < tree.frame.length && (tree.depth[i] as number) >= depth; i++) {
      if (tree.depth[i] === depth && frameName(a, tree.frame[i] as number) === name) found = i;
    }
    if (found < 0) return -1;
    node = found;
  }
  return node;
}

/**
 * total = self + children's totals, and children heaviest first: what a flame graph's widths rely
 * on. A thread's values on an all-threads tree are not ordered by the thread's own weights (`ordered` false).
 */
function assertConsistent(tree: Pick<FlameTree, 'depth' | 'self' | 'total'>, ordered = true): void {
  for (let i = 0; i < tree.depth.length; i++) {
    let children = 0;
    let previous = Infinity;
    for (let j = i + 1; j < tree.depth.length && (tree.depth[j] as number) > (tree.depth[i] as number); j++) {
      if (tree.depth[j] !== (tree.depth[i] as number) + 1) continue;
      children += tree.total[j] as number;
      if (ordered) assert.ok((tree.total[j] as number) <= previous, `children of node ${i} are not heaviest first`);
      previous = tree.total[j] as number;
    }
    assert.equal(tree.total[i], (tree.self[i] as number) + children, `node ${i}: total != self + children`);
  }
}

describe('loading a recording', () => {
  it('reads the manifest, every profile window and every span', () => {
    const run = shop();
    assert.equal(run.manifest.service, 'shop');
    assert.equal(run.manifest.complete, true);
    assert.deepEqual(
      run.profiles.map((p) => [p.file, p.kind, p.window]),
      [
        ['profiles/000001-cpu.pb.gz', 'cpu', 1],
        ['profiles/000001-wall.pb.gz', 'wall', 1],
        ['profiles/000002-cpu.pb.gz', 'cpu', 2],
        ['profiles/000002-wall.pb.gz', 'wall', 2],
      ],
    );
    assert.equal(run.spans.length, 9);
    const child = run.spans.find((s) => s.spanId === spanIdOf(104));
    assert.deepEqual(
      { parent: child?.parentSpanId, kind: child?.kind, name: child?.name, durationNs: child?.durationNs, profileId: child?.profileId },
      { parent: spanIdOf(4), kind: 3, name: 'db.query', durationNs: 90 * MS, profileId: undefined },
    );
    const root = run.spans.find((s) => s.spanId === spanIdOf(4));
    assert.equal(root?.profileId, spanIdOf(4));
    assert.equal(root?.route, '/users/:id');
    assert.equal(root?.statusCode, 200);
    assert.equal(typeof root?.startNs, 'bigint');
    assert.equal(root?.startNs, BigInt(Date.parse('2026-11-29T22:15:19.000Z')) * 1_000_000n);
  });

  it('takes a folder of runs and picks the newest by start time', () => {
    const dir = fresh();
    const older = shopRecording(dir, 'shop-20261129-221503-1');
    const newer = writeRecording(dir, {
      name: 'a-newer-run-sorting-first',
      startedAt: '2026-11-30T08:00:00.000Z',
      spanBatches: [[{ spanId: spanIdOf(1), traceId: traceIdOf(1), name: 'job', startNs: 1n, durationNs: 5 }]],
    });
    mkdirSync(path.join(dir, 'not-a-run'));
    assert.equal(latestRun(dir), newer);
    assert.equal(resolveRunDir(dir), newer);
    assert.equal(resolveRunDir(older), older);
    assert.equal(loadRunSync(dir).dir, newer);
    assert.equal(latestRun(path.join(dir, 'not-a-run')), undefined);
  });

  it('ignores temporary files (names starting with a dot) and types it does not know', () => {
    const dir = shopRecording(fresh());
    writeFileSync(path.join(dir, 'profiles', '.000003-cpu.pb.gz.tmp'), 'half written');
    writeFileSync(path.join(dir, 'spans', '.000003.jsonl.tmp'), '{"resourceSp');
    writeFileSync(path.join(dir, 'profiles', '000003-mutex.pb.gz'), gzipSync(Buffer.from('some other profile')));
    const run = loadRunSync(dir);
    assert.equal(run.profiles.length, 4);
    assert.equal(run.spans.length, 9);
  });

  const failure = (dir: string, code: RunErrorCode, pattern: RegExp) => {
    assert.throws(
      () => loadRunSync(dir),
      (error: unknown) => {
        assert.ok(error instanceof RunError, `expected a RunError, got ${String(error)}`);
        assert.equal(error.code, code);
        assert.match(error.message, pattern);
        assert.doesNotMatch(error.message, /\n/);
        return true;
      },
    );
  };

  it('says a folder is missing', () => failure(path.join(base, 'missing'), 'missing', /missing does not exist$/));

  it('says a folder holds no run', () => failure(fresh(), 'no-run', /^no recording in .* \(no run\.json in it or in its subfolders\)$/));

  it('says a run has nothing recorded yet', () => {
    const dir = writeRecording(fresh(), {});
    failure(dir, 'empty', /has no profiles or spans yet$/);
  });

  it('says run.json is not JSON, or not a recording manifest', () => {
    const broken = shopRecording(fresh());
    writeFileSync(path.join(broken, 'run.json'), '{"format": "pyro-run-rec');
    failure(broken, 'corrupt', /run\.json is not valid JSON/);
    const foreign = shopRecording(fresh());
    writeFileSync(path.join(foreign, 'run.json'), '{"format": "something-else", "formatVersion": 1}');
    failure(foreign, 'corrupt', /run\.json is not a pyro-run recording manifest \(format is "something-else"/);
    const future = shopRecording(fresh());
    writeFileSync(path.join(future, 'run.json'), '{"format": "pyro-run-recording", "formatVersion": 9}');
    failure(future, 'corrupt', /formatVersion 9; this pyro-run reads up to 1/);
  });

  it('names the profile that is corrupt', () => {
    const notGzip = shopRecording(fresh());
    writeFileSync(path.join(notGzip, 'profiles', '000002-cpu.pb.gz'), 'not gzip at all');
    failure(notGzip, 'corrupt', /profiles\/000002-cpu\.pb\.gz is not a gzipped pprof profile/);
    const truncated = shopRecording(fresh());
    const file = path.join(truncated, 'profiles', '000001-wall.pb.gz');
    writeFileSync(file, gzipSync(Buffer.from([0x0a, 0xff, 0xff, 0x03])));
    failure(truncated, 'corrupt', /profiles\/000001-wall\.pb\.gz /);
  });

  it('names the span file that is corrupt, and the line', () => {
    const dir = shopRecording(fresh());
    writeFileSync(path.join(dir, 'spans', '000003.jsonl'), '{"resourceSpans":[]}\n{"resourceSpans":[{"scopeSp\n');
    failure(dir, 'corrupt', /spans\/000003\.jsonl is corrupt \(line 2 is not JSON/);
  });
});

describe('aggregating a recording', () => {
  const aggregates = aggregateRun(shop());
  const endpoint = (name: string) => {
    const found = aggregates.endpoints.find((e) => e.name === name);
    assert.ok(found, `no endpoint ${name}`);
    return found;
  };

  it('groups local-root spans by name into endpoints, heaviest CPU first, with latency percentiles', () => {
    assert.deepEqual(
      aggregates.endpoints.map((e) => e.name),
      [SHOP.users.name, SHOP.orders.name, SHOP.health.name],
    );
    const users = endpoint(SHOP.users.name);
    assert.deepEqual(
      { count: users.count, totalNs: users.totalNs, p50Ns: users.p50Ns, p95Ns: users.p95Ns, maxNs: users.maxNs },
      { count: 4, totalNs: 160 * MS, p50Ns: 20 * MS, p95Ns: 100 * MS, maxNs: 100 * MS },
    );
    const orders = endpoint(SHOP.orders.name);
    assert.deepEqual([orders.count, orders.p50Ns, orders.p95Ns], [2, 50 * MS, 70 * MS]);
  });

  it('attributes CPU and wall time to endpoints through the span_id label', () => {
    assert.equal(endpoint(SHOP.users.name).cpuNs, SHOP.users.cpuMs * MS);
    assert.equal(endpoint(SHOP.users.name).wallNs, SHOP.users.wallMs * MS);
    assert.equal(endpoint(SHOP.orders.name).cpuNs, SHOP.orders.cpuMs * MS);
    assert.equal(endpoint(SHOP.orders.name).wallNs, SHOP.orders.wallMs * MS);
    assert.equal(endpoint(SHOP.health.name).cpuNs, 0);
  });

  it('lists the top three self-time functions of an endpoint by CPU', () => {
    const top = (name: string) => endpoint(name).topSelf.map((t) => [frameName(aggregates, t.frame), t.value / MS]);
    assert.deepEqual(top(SHOP.users.name), [
      ['fib', 120],
      ['handleUser', 6],
      ['JSON.stringify', 5],
    ]);
    assert.deepEqual(top(SHOP.orders.name), [
      ['validate', 20],
      ['hash', 15],
    ]);
  });

  it('lists the slowest profiled spans with their own CPU and wall time (child spans carry no samples of their own)', () => {
    assert.deepEqual(
      aggregates.slowest.map((s) => [s.spanId, s.durationNs / MS, s.cpuNs / MS, s.wallNs / MS]),
      [
        [spanIdOf(4), 100, 40, 100],
        [spanIdOf(12), 70, 10, 70],
        [spanIdOf(11), 50, 25, 50],
        [spanIdOf(3), 30, 26, 30],
        [spanIdOf(2), 20, 30, 20],
        [spanIdOf(1), 10, 35, 10],
        [spanIdOf(21), 1, 0, 0],
      ],
    );
    const slowest = aggregates.slowest[0];
    assert.equal(aggregates.endpoints[slowest?.endpoint ?? -1]?.name, SHOP.users.name);
    assert.equal(slowest?.traceId, traceIdOf(4));
    assert.equal(slowest?.startMs, Date.parse('2026-11-29T22:15:19.000Z'));
    assert.equal(aggregateRun(shop(), { slowest: 2 }).slowest.length, 2);
  });

  it('measures the share of samples inside spans, and the part whose span is not in the recording', () => {
    assert.deepEqual(aggregates.share.cpu, {
      inside: SHOP.cpu.insideMs * MS,
      outside: SHOP.cpu.outsideMs * MS,
      unmatched: SHOP.cpu.unmatchedMs * MS,
      insideSamples: SHOP.cpu.insideSamples,
      outsideSamples: SHOP.cpu.outsideSamples,
    });
    assert.equal(aggregates.share.wall.inside, SHOP.wall.insideMs * MS);
    assert.equal(aggregates.share.wall.outside, SHOP.wall.outsideMs * MS);
  });

  it('builds the whole-process flame graph: stacks merged across windows, root to leaf, with self and total', () => {
    const trees = aggregates.trees;
    assert.ok(trees);
    const cpu = trees.process.cpu;
    assertConsistent(cpu);
    assertConsistent(trees.process.wall);
    assert.equal(cpu.total[0], (SHOP.cpu.insideMs + SHOP.cpu.outsideMs) * MS);
    assert.deepEqual(nodeAt(aggregates, cpu, ['main']), { total: 181 * MS, self: 0 });
    assert.deepEqual(nodeAt(aggregates, cpu, ['main', 'handleUser']), { total: 136 * MS, self: 6 * MS });
    // Four windows' and five spans' fib samples, merged into one frame.
    assert.deepEqual(nodeAt(aggregates, cpu, ['main', 'handleUser', 'fib']), { total: 125 * MS, self: 125 * MS });
    assert.deepEqual(nodeAt(aggregates, cpu, ['(program)']), { total: 4 * MS, self: 4 * MS });
    assert.equal(trees.process.wall.total[0], (SHOP.wall.insideMs + SHOP.wall.outsideMs) * MS);
  });

  it('knows where each frame is defined (file:line) when the profile says', () => {
    const fib = aggregates.frames.name.findIndex((n) => aggregates.strings[n] === 'fib');
    assert.equal(aggregates.strings[aggregates.frames.file[fib] as number], 'src/math.ts');
    assert.equal(aggregates.frames.line[fib], 12);
  });

  it('builds one flame graph per endpoint and per slow span, for CPU and for wall', () => {
    const trees = aggregates.trees;
    assert.ok(trees);
    const users = trees.endpoints[0];
    assert.ok(users);
    assertConsistent(users.cpu);
    assert.equal(users.cpu.total[0], SHOP.users.cpuMs * MS);
    assert.equal(nodeAt(aggregates, users.cpu, ['main', 'handleUser', 'fib'])?.total, 120 * MS);
    assert.equal(nodeAt(aggregates, users.cpu, ['main', 'handleOrder']), undefined);
    assert.equal(users.wall.total[0], SHOP.users.wallMs * MS);
    assert.equal(trees.endpoints[2]?.cpu.total[0], 0);

    const slowest = trees.slowest[0];
    assert.ok(slowest);
    assert.equal(slowest.cpu.total[0], 40 * MS);
    assert.deepEqual(nodeAt(aggregates, slowest.wall, ['main', 'handleUser', 'waitForDb']), { total: 90 * MS, self: 90 * MS });
    assert.equal(trees.slowest.length, aggregates.slowest.length);
  });

  it('offers the trees one view at a time too', () => {
    const model = modelRun(shop());
    assert.deepEqual(processFlameTree(model, 'cpu'), aggregates.trees?.process.cpu);
    const span4 = model.run.spans.findIndex((s) => s.spanId === spanIdOf(4));
    assert.deepEqual(spanFlameTree(model, span4, 'wall'), aggregates.trees?.slowest[0]?.wall);
  });

  it('skips the trees when asked (the exit summary does not need them)', () => {
    assert.equal(aggregateRun(shop(), { trees: false }).trees, undefined);
  });
});

describe('worker threads', () => {
  const aggregates = aggregateRun(loadRunSync(threadsRecording(fresh())));
  const [w2, w10] = THREADS.workers;
  const thread = (name: string) => THREADS.threadOrder.indexOf(name);
  /** A thread's self and total on the tree's node at `position` (zero where it has no time). */
  const threadAt = (values: ThreadValues | null | undefined, position: number) => {
    const at = values?.node.indexOf(position) ?? -1;
    return at < 0 ? { self: 0, total: 0 } : { self: values?.self[at] as number, total: values?.total[at] as number };
  };
  const resizeAt = () => aggregates.endpoints.findIndex((e) => e.name === THREADS.resize.name);
  /** Every tree of the page: the whole process per kind, each endpoint's and slow span's per kind. */
  const everyTree = (a: RunAggregates): [string, FlameTree][] => {
    const trees = a.trees;
    assert.ok(trees);
    return [
      ...Object.entries(trees.process).map(([kind, tree]): [string, FlameTree] => [`process ${kind}`, tree]),
      ...trees.endpoints.flatMap((kinds, e) =>
        Object.entries(kinds).map(([kind, tree]): [string, FlameTree] => [`endpoint ${a.endpoints[e]?.name} ${kind}`, tree]),
      ),
      ...trees.slowest.flatMap((kinds, s) => Object.entries(kinds).map(([kind, tree]): [string, FlameTree] => [`span ${a.slowest[s]?.spanId} ${kind}`, tree])),
    ];
  };

  it('lists the main thread first, then the workers by name (worker 2 before worker 10), with their CPU and wall time', () => {
    assert.deepEqual(
      aggregates.threads,
      THREADS.threadOrder.map((name, t) => ({ name, cpuNs: (THREADS.cpuMs[t] as number) * MS, wallNs: (THREADS.wallMs[t] as number) * MS })),
    );
  });

  it("an endpoint's flame graph holds the work its requests sent to worker threads", () => {
    const endpoint = aggregates.endpoints[resizeAt()];
    assert.equal(endpoint?.cpuNs, THREADS.resize.cpuMs * MS, 'the workers count in the endpoint CPU');
    assert.equal(endpoint?.wallNs, THREADS.resize.wallMs * MS);
    const tree = aggregates.trees?.endpoints[resizeAt()]?.cpu;
    assert.ok(tree);
    assert.equal(tree.total[0], THREADS.resize.cpuMs * MS);
    assert.deepEqual(nodeAt(aggregates, tree, ['workerLoop', 'resizeImage']), { total: 50 * MS, self: 50 * MS });
    assert.deepEqual(nodeAt(aggregates, tree, ['workerLoop', 'encodePng']), { total: 20 * MS, self: 20 * MS });
    assert.deepEqual(nodeAt(aggregates, tree, ['main', 'handleResize']), { total: 10 * MS, self: 10 * MS });
    assert.equal(nodeAt(aggregates, tree, ['workerLoop', 'loadCodec']), undefined, "a worker's work outside any span is in no endpoint");
    const resizeImage = nodeIndex(aggregates, tree, ['workerLoop', 'resizeImage']);
    assert.deepEqual(
      tree.threads?.map((values) => threadAt(values, resizeImage).total),
      [0, 10 * MS, 40 * MS],
      'each worker has its own part of the frame',
    );
    const health = aggregates.trees?.endpoints[aggregates.endpoints.findIndex((e) => e.name === THREADS.health.name)]?.cpu;
    assert.equal(health && nodeIndex(aggregates, health, ['workerLoop']), -1, "another endpoint's worker work leaked in");
  });

  it("a slow span's flame graph holds the work it sent to a worker, on that worker", () => {
    const first = aggregates.slowest[0];
    assert.equal(first?.spanId, spanIdOf(1));
    assert.equal(first?.cpuNs, 45 * MS);
    const tree = aggregates.trees?.slowest[0]?.cpu;
    assert.ok(tree);
    assert.equal(threadAt(tree.threads?.[thread(w10)], nodeIndex(aggregates, tree, ['workerLoop', 'resizeImage'])).total, 40 * MS);
    assert.equal(tree.threads?.[thread(w2)], null, 'the other worker did nothing for this request');
  });

  it("each thread's values add up to the all-threads tree, in every view and kind", () => {
    for (const [view, tree] of everyTree(aggregates)) {
      const threads = tree.threads;
      assert.ok(threads, `${view}: no per-thread values`);
      assert.equal(threads.length, THREADS.threadOrder.length, view);
      for (const values of threads) {
        if (values === null) continue;
        assert.equal(values.node[0], 0, `${view}: a thread's values start at the root`);
        assert.ok(
          values.total.every((total) => total > 0),
          `${view}: a thread has a node it has no time in`,
        );
        assert.ok(
          values.node.every((node, i) => i === 0 || node > (values.node[i - 1] as number)),
          `${view}: a thread's nodes are not in the tree's order`,
        );
        assertConsistent({ depth: values.node.map((node) => tree.depth[node] as number), self: values.self, total: values.total }, false);
      }
      for (const column of ['self', 'total'] as const) {
        const summed = tree[column].map((_, i): number => threads.reduce((n, values) => n + threadAt(values, i)[column], 0));
        assert.deepEqual(summed, tree[column], `${view}: threads' ${column} values do not add up`);
      }
    }
    const process = aggregates.trees?.process.cpu;
    assert.deepEqual(
      process?.threads?.map((values) => values?.total[0]),
      THREADS.cpuMs.map((ms) => ms * MS),
    );
  });

  it('a recording without thread_name labels ran on the main thread alone: no thread list, no per-thread values', () => {
    const run = shop();
    assert.deepEqual(run.samples.threads, [THREADS.main]);
    assert.ok(run.samples.samples.cpu.thread.every((t) => t === 0));
    const old = aggregateRun(run);
    assert.equal(old.threads, undefined);
    for (const [view, tree] of everyTree(old)) assert.equal(tree.threads, undefined, view);
    assert.doesNotMatch(JSON.stringify(old), /"threads"/);
  });

  it('a recording whose samples all say thread_name main has one thread too', () => {
    const dir = writeRecording(fresh(), { windows: [{ cpu: [{ stack: ['main', 'work'], value: 5 * MS, thread: THREADS.main }] }] });
    const a = aggregateRun(loadRunSync(dir));
    assert.equal(a.threads, undefined);
    assert.equal(a.trees?.process.cpu.threads, undefined);
  });

  it('the summary says how the CPU time split between the threads (wall time when no CPU was recorded)', () => {
    assert.match(formatSummary(aggregates), /\nSamples inside spans: .*\nCPU time by thread: main 20%, worker 2 30%, worker 10 50%\n$/);
    const wallOnly = writeRecording(fresh(), {
      windows: [
        {
          wall: [
            { stack: ['main'], value: 30 * MS, thread: THREADS.main },
            { stack: ['workerLoop'], value: 10 * MS, thread: w2 },
          ],
        },
      ],
    });
    assert.match(formatSummary(aggregateRun(loadRunSync(wallOnly))), /\nWall time by thread: main 75%, worker 2 25%\n$/);
  });
});

describe('span scopes', () => {
  const T = traceIdOf(7);
  const span = (n: number, name: string, parent: number | undefined, durationMs: number, profiled: boolean, kind = 1): SpanSpec => ({
    spanId: spanIdOf(n),
    traceId: T,
    parentSpanId: parent === undefined ? undefined : spanIdOf(parent),
    name,
    kind,
    startNs: 1_000_000_000n * BigInt(n),
    durationNs: durationMs * MS,
    profiled,
  });
  const labelled = (n: number, name: string, stack: string[], ms: number): SampleSpec => ({
    stack,
    value: ms * MS,
    span: { spanId: spanIdOf(n), spanName: name, traceId: T },
  });

  it('scope `all`: samples labelled with child spans count for their local root, and for the child', () => {
    const window: WindowSpec = {
      cpu: [labelled(1, 'GET /a', ['main', 'route'], 3), labelled(2, 'db', ['main', 'query'], 7), labelled(3, 'render', ['main', 'render'], 5)],
    };
    const dir = writeRecording(fresh(), {
      windows: [window],
      spanBatches: [[span(1, 'GET /a', undefined, 50, true, 2), span(2, 'db', 1, 30, true), span(3, 'render', 2, 10, true)]],
    });
    const a = aggregateRun(loadRunSync(dir));
    assert.deepEqual(
      a.endpoints.map((e) => [e.name, e.count, e.cpuNs / MS]),
      [['GET /a', 1, 15]],
    );
    assert.deepEqual(
      a.slowest.map((s) => [s.name, s.cpuNs / MS]),
      [
        ['GET /a', 15],
        ['db', 12],
        ['render', 5],
      ],
    );
  });

  it("endpoints are the roots that took a request: a framework's start-up work is none", () => {
    const window: WindowSpec = { cpu: [labelled(1, 'GET /api/work', ['main', 'handler'], 4), labelled(2, 'load route module', ['main', 'require'], 9)] };
    const dir = writeRecording(fresh(), {
      windows: [window],
      spanBatches: [
        [span(1, 'GET /api/work', undefined, 40, true, 2), span(2, 'load route module', undefined, 20, true, 1), span(3, 'dns.lookup', undefined, 1, true, 3)],
      ],
    });
    assert.deepEqual(
      aggregateRun(loadRunSync(dir)).endpoints.map((e) => [e.name, e.count]),
      [['GET /api/work', 1]],
    );
  });

  it('a run that took no request (a script, a batch job) has its local roots as endpoints', () => {
    const window: WindowSpec = { cpu: [labelled(1, 'nightly import', ['main', 'import'], 8), labelled(2, 'cleanup', ['main', 'sweep'], 2)] };
    const dir = writeRecording(fresh(), {
      windows: [window],
      spanBatches: [[span(1, 'nightly import', undefined, 40, true), span(2, 'cleanup', undefined, 20, true)]],
    });
    assert.deepEqual(
      aggregateRun(loadRunSync(dir)).endpoints.map((e) => [e.name, e.count]),
      [
        ['nightly import', 1],
        ['cleanup', 1],
      ],
    );
  });

  it('scope `root`: a request that re-enters the process is its own endpoint', () => {
    const window: WindowSpec = { cpu: [labelled(1, 'GET /outer', ['main', 'outer'], 4), labelled(3, 'GET /inner', ['main', 'inner'], 6)] };
    const dir = writeRecording(fresh(), {
      windows: [window],
      // outer (server) → its client call (no profile id) → inner server span in the same process.
      spanBatches: [[span(1, 'GET /outer', undefined, 40, true, 2), span(2, 'GET', 1, 20, false, 3), span(3, 'GET /inner', 2, 15, true, 2)]],
    });
    const a = aggregateRun(loadRunSync(dir));
    assert.deepEqual(
      a.endpoints.map((e) => [e.name, e.count, e.cpuNs / MS]),
      [
        ['GET /inner', 1, 6],
        ['GET /outer', 1, 4],
      ],
    );
    assert.deepEqual(
      a.slowest.map((s) => [s.name, s.cpuNs / MS]),
      [
        ['GET /outer', 4],
        ['GET /inner', 6],
      ],
    );
  });
});

describe('the exit summary', () => {
  it('is an aligned table of endpoints by CPU with their top self-time functions, then the share inside spans', () => {
    assert.equal(
      formatSummary(aggregateRun(shop(), { trees: false })),
      [
        'Endpoint        Count     p50     p95     CPU  Top self time (share of endpoint CPU)',
        'GET /users/:id      4  20.0ms   100ms   131ms  fib 92%, handleUser 5%, JSON.stringify ← handleUser 4%',
        'POST /orders        2  50.0ms  70.0ms  35.0ms  validate 57%, hash ← handleOrder 43%',
        'GET /health         1  1.00ms  1.00ms       0  -',
        'Mean request, of those kept (CPU inside a call counts in both):',
        '  GET /users/:id  40.0ms: CPU 32.8ms · other calls 23.8ms · neither 0',
        '  POST /orders  60.0ms: CPU 17.5ms · neither 42.5ms',
        '  GET /health  1.00ms: CPU 0 · neither 1.00ms',
        'Samples inside spans: 92% of CPU time (3% in spans not in the recording), 36% of wall time',
        '',
      ].join('\n'),
    );
  });

  it('lists at most `limit` endpoints and says how many more there are', () => {
    const text = formatSummary(aggregateRun(shop(), { trees: false }), { limit: 1 });
    assert.match(
      text,
      /^Endpoint .*\nGET \/users\/:id .*\n… and 2 more endpoints\nMean request, of those kept .*\n {2}GET \/users\/:id .*\nSamples inside spans: /,
    );
  });

  it('is what a recording app prints at exit (nothing when it recorded nothing)', () => {
    const run = shopRecording(fresh());
    assert.equal(exitSummary(run), formatSummary(aggregateRun(loadRunSync(run), { trees: false })).trimEnd());
    assert.equal(exitSummary(writeRecording(fresh(), {})), undefined);
    assert.throws(() => exitSummary(path.join(base, 'missing')), RunError);
  });

  it('shows control characters in span names as escapes: a name must not drive the terminal', () => {
    const T = traceIdOf(9);
    const name = 'GET /\u001b[2J\rx\ny\u009b';
    const dir = writeRecording(fresh(), {
      windows: [{ cpu: [{ stack: ['main', 'evil\u0007fn'], value: 5 * MS, span: { spanId: spanIdOf(1), spanName: name, traceId: T } }] }],
      spanBatches: [
        [{ spanId: spanIdOf(1), traceId: T, parentSpanId: undefined, name, kind: 2, startNs: 1_000_000_000n, durationNs: 10 * MS, profiled: true }],
      ],
    });
    const text = formatSummary(aggregateRun(loadRunSync(dir), { trees: false }));
    assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/, 'no control character but the line ends');
    assert.match(text, /GET \/\\x1b\[2J\\rx\\ny\\x9b/);
    assert.match(text, /evil\\x07fn/);
  });

  it('says so when nothing ran in a span', () => {
    const dir = writeRecording(fresh(), { windows: [{ cpu: [{ stack: ['main'], value: 5 * MS }] }] });
    assert.equal(formatSummary(aggregateRun(loadRunSync(dir))), 'No local-root spans recorded.\nSamples inside spans: 0% of CPU time\n');
  });
});

describe('a ten-minute recording with 100k spans', () => {
  it('loads and aggregates in one pass', (t) => {
    const SPANS = 100_000;
    const WINDOWS = 40;
    const SAMPLES_PER_PROFILE = 3_000;
    const routes = Array.from({ length: 20 }, (_, i) => `GET /route/${String.fromCharCode(97 + i)}`);
    const names = Array.from({ length: 300 }, (_, i) => `fn${i}`);
    const functions = Object.fromEntries(names.map((name, i) => [name, { file: `src/module${i % 23}.ts`, line: 10 + i }]));
    // 2,000 call paths, each extending an earlier one (so they share prefixes, as real stacks do),
    // 5 to 40 frames deep: a trie of a size real services reach.
    const random = seededDraw(1);
    const paths: string[][] = [['main']];
    while (paths.length < 2_000) {
      const from = paths[paths.length - 1 - random(Math.min(paths.length, 50))] as string[];
      const grown = from.length >= 40 ? from.slice(0, 5 + random(20)) : from;
      paths.push([...grown, ...Array.from({ length: 1 + random(4) }, () => names[random(names.length)] as string)]);
    }
    const spans: SpanSpec[] = [];
    const windowNs = 15_000_000_000n;
    for (let i = 1; i <= SPANS; i++) {
      const root = i % 2 === 1;
      const parent = root ? undefined : i - 1;
      spans.push({
        spanId: spanIdOf(i),
        traceId: traceIdOf(root ? i : i - 1),
        parentSpanId: parent === undefined ? undefined : spanIdOf(parent),
        name: root ? (routes[((i - 1) / 2) % routes.length] as string) : 'db.query',
        kind: root ? 2 : 3,
        startNs: BigInt(i) * 6_000_000n,
        durationNs: 1_000_000 + ((i * 7919) % 50_000_000),
        profiled: root,
      });
    }
    const windows: WindowSpec[] = [];
    for (let w = 0; w < WINDOWS; w++) {
      // A fifth of the samples run outside spans; the rest in a random request.
      const samples = (): SampleSpec[] =>
        Array.from({ length: SAMPLES_PER_PROFILE }, (_, s) => {
          const stack = paths[random(paths.length)] as string[];
          if (s % 5 === 0) return { stack, value: 10 * MS };
          const rootId = random(SPANS) | 1;
          return {
            stack,
            value: 10 * MS,
            span: { spanId: spanIdOf(rootId), spanName: routes[((rootId - 1) / 2) % routes.length] as string, traceId: traceIdOf(rootId) },
          };
        });
      windows.push({ cpu: samples(), wall: samples() });
    }
    const batches: SpanSpec[][] = [];
    for (let i = 0; i < spans.length; i += 10_000) batches.push(spans.slice(i, i + 10_000));
    const dir = writeRecording(fresh(), { windows, spanBatches: batches, functions, windowNs });

    const loadStart = performance.now();
    const run = loadRunSync(dir);
    const loaded = performance.now();
    const a = aggregateRun(run);
    const aggregated = performance.now();
    const json = JSON.stringify(a);
    t.diagnostic(`load ${(loaded - loadStart).toFixed(0)} ms, aggregate ${(aggregated - loaded).toFixed(0)} ms, JSON ${(json.length / 1e6).toFixed(1)} MB`);

    assert.equal(run.profiles.length, WINDOWS * 2);
    assert.equal(run.spans.length, SPANS);
    assert.equal(a.endpoints.length, routes.length);
    assert.equal(
      a.endpoints.reduce((n, e) => n + e.count, 0),
      SPANS / 2,
    );
    const samples = WINDOWS * SAMPLES_PER_PROFILE;
    assert.equal(a.share.cpu.insideSamples + a.share.cpu.outsideSamples, samples);
    assert.equal(a.share.cpu.outsideSamples, samples / 5);
    assert.equal(a.trees?.process.cpu.total[0], samples * 10 * MS);
    // Every labelled sample names a recorded root, so endpoints account for all of the time inside spans.
    assert.equal(a.share.cpu.unmatched, 0);
    assert.equal(
      a.endpoints.reduce((n, e) => n + e.cpuNs, 0),
      a.share.cpu.inside,
    );
    assert.equal(a.slowest.length, 50);
  });
});

describe('a recording made under load (the recorder counted every request, kept the details of some)', () => {
  const MS = 1_000_000;
  // 1000 GET /items requests (3 errors) and 10 POST /items, counted by the recorder's own code;
  // the details of two GET requests kept.
  const totals = new EndpointTotals();
  for (let i = 0; i < 1000; i++) totals.add('GET /items', 2, (1 + (i % 100)) * MS, i < 3);
  for (let i = 0; i < 10; i++) totals.add('POST /items', 2, 50 * MS, false);
  totals.add('dns.lookup', 3, 1 * MS, false);
  const kept = [7, 8].map((n) => ({
    spanId: spanIdOf(n),
    traceId: traceIdOf(n),
    name: 'GET /items',
    startNs: 1_000_000_000_000n,
    durationNs: 5 * MS,
    profiled: true,
  }));
  const items = (n: number) => ({ spanId: spanIdOf(n), spanName: 'GET /items', traceId: traceIdOf(n) });
  const post = (n: number) => ({ spanId: spanIdOf(n), spanName: 'POST /items', traceId: traceIdOf(n) });
  const run = () =>
    loadRunSync(
      writeRecording(fresh(), {
        windows: [
          {
            cpu: [
              { stack: ['main', 'listItems'], value: 10 * MS, span: items(7) },
              { stack: ['main', 'listItems'], value: 20 * MS, span: items(100) },
              { stack: ['main', 'listItems'], value: 30 * MS, span: items(101) },
              { stack: ['main', 'saveItem'], value: 40 * MS, span: post(200) },
            ],
            wall: [{ stack: ['main', 'listItems'], value: 10 * MS, span: items(8) }],
          },
        ],
        spanBatches: [kept],
        manifest: {
          counts: { windows: 1, profileFiles: 2, spanFiles: 1, spans: 2, bytes: 0, droppedWindows: 0, droppedSpans: 5, summarizedSpans: 3024 },
          endpoints: totals.list(),
        },
      }),
    );
  const aggregates = aggregateRun(run());
  const endpoint = (name: string) => aggregates.endpoints.find((e) => e.name === name);

  it('counts, errors and percentiles come from the totals: every request, not the kept ones', () => {
    const get = endpoint('GET /items');
    assert.ok(get);
    assert.deepEqual([get.count, get.errors, get.maxNs], [1000, 3, 100 * MS]);
    // Nearest rank of 1..100 ms, ten times over: p50 50 ms, p95 95 ms, read within one bucket (≤ 4.4% above).
    assert.ok(get.p50Ns >= 50 * MS && get.p50Ns <= 50 * MS * 1.045, String(get.p50Ns));
    assert.ok(get.p95Ns >= 95 * MS && get.p95Ns <= 95 * MS * 1.045, String(get.p95Ns));
    assert.equal(endpoint('POST /items')?.count, 10);
    assert.equal(endpoint('dns.lookup'), undefined, 'a client root is no endpoint where the app took requests');
  });

  it('a sample of a request whose details were not kept counts for the endpoint its span_name names', () => {
    assert.equal(endpoint('GET /items')?.cpuNs, 60 * MS);
    assert.equal(endpoint('POST /items')?.cpuNs, 40 * MS, 'an endpoint none of whose requests was kept still has its CPU');
    assert.equal(aggregates.endpoints[0]?.name, 'GET /items', 'heaviest CPU first');
    const tree = aggregates.trees?.endpoints[1]?.cpu;
    assert.equal(tree?.total[0], 40 * MS, "POST /items' flame graph holds its samples");
  });

  it('the summary says plainly what is partial and what covers everything', () => {
    assert.equal(
      aggregates.run.partial,
      'spans: 2 of 3,031 kept (3,024 summarised under load, 5 past the size cap or a full disk); endpoint counts and percentiles cover all',
    );
    assert.match(formatSummary(aggregates), /\nPartial: spans: 2 of 3,031 kept .*cover all\n$/);
    assert.match(formatSummary(aggregates), /Samples inside spans: 100% of CPU time \(90% in spans whose details were not kept\)/);
    assert.equal(aggregateRun(shop()).run.partial, undefined, 'a whole recording says nothing');
  });
});
