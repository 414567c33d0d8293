/**
 * Two recordings compared as `pyro-run diff` does, on synthetic runs with a known CPU per request
 * and function: per request (never in totals), endpoints matched or listed as added and removed,
 * changes beyond the noise first with the functions they are made of, and the text and JSON users
 * and tools read.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareRuns, type RunDiff } from '../../src/diff/compare-runs.js';
import { type FunctionDelta, topFunctions } from '../../src/diff/function-deltas.js';
import { DEFAULT_NOISE } from '../../src/diff/metric-change.js';
import { formatDiffJson } from '../../src/diff/render-json.js';
import { formatChange, formatDiff, formatRelative } from '../../src/diff/render-text.js';
import { endpointRequests } from '../../src/diff/request-values.js';
import { parseRule, type Rule } from '../../src/diff/rules.js';
import { aggregateRun, modelRun } from '../../src/report/aggregate.js';
import { loadRunSync } from '../../src/report/load-run.js';
import { checkout, jitter, products, type RequestsEndpoint, type RequestsSpec, requestsRecording } from '../support/requests-recording.js';
import { scratchDirs } from '../support/scratch.js';

const MS = 1e6;
const { fresh } = scratchDirs('pyro-run-diff-compare-');
const OPTIONS = { noise: DEFAULT_NOISE, topFunctions: 10 };

const model = (spec: RequestsSpec) => modelRun(loadRunSync(requestsRecording(fresh(), spec)));
const compare = (before: RequestsSpec, after: RequestsSpec, options = OPTIONS) => compareRuns(model(before), model(after), options);
const named = (diff: RunDiff, name: string) => diff.endpoints.find((endpoint) => endpoint.name === name);

describe('comparing two runs', () => {
  it('an endpoint whose hot function got 30% slower is beyond the noise, first, with that function first; one that did not change is within', () => {
    const diff = compare({ endpoints: [checkout(200), products(200)] }, { endpoints: [checkout(200, 1.3), products(200)] });
    const [first, second] = diff.endpoints;
    assert.equal(first?.name, 'POST /checkout');
    assert.ok(first.beyondNoise && first.metrics.cpuPerRequest?.beyondNoise);
    assert.ok(Math.abs((first.metrics.cpuPerRequest?.relativeChange ?? 0) - 0.2) < 1e-6, JSON.stringify(first.metrics.cpuPerRequest));
    assert.equal(first.functions[0]?.function.name, 'priceCart');
    assert.ok(Math.abs((first.functions[0]?.before ?? 0) - 2 * MS) < 1e3 && Math.abs((first.functions[0]?.after ?? 0) - 2.6 * MS) < 1e3);
    assert.equal(second?.name, 'GET /products/:id');
    assert.deepEqual([second.beyondNoise, second.metrics.cpuPerRequest?.change, second.functions], [false, 0, []]);
  });

  it('runs of different lengths are compared per request, never in totals', () => {
    const diff = compare({ endpoints: [products(100)] }, { endpoints: [products(400)] });
    const endpoint = named(diff, 'GET /products/:id');
    assert.deepEqual(endpoint?.requests, { before: 100, after: 400 });
    assert.ok(Math.abs(endpoint?.metrics.cpuPerRequest?.change ?? 1) < 1e-6, JSON.stringify(endpoint?.metrics.cpuPerRequest));
    assert.equal(endpoint?.beyondNoise, false);
  });

  it('endpoints in one run only are listed as added and removed, after those in both', () => {
    const diff = compare(
      { endpoints: [products(50), { ...products(30), name: 'GET /old' }] },
      { endpoints: [{ ...products(40), name: 'GET /new' }, products(50)] },
    );
    assert.deepEqual(
      diff.endpoints.map((endpoint) => [endpoint.name, endpoint.presence, endpoint.requests.before, endpoint.requests.after]),
      [
        ['GET /products/:id', 'both', 50, 50],
        ['GET /new', 'added', 0, 40],
        ['GET /old', 'removed', 30, 0],
      ],
    );
  });

  it('an endpoint with fewer requests than the minimum in a run is not judged, however large its change', () => {
    const diff = compare({ endpoints: [checkout(10), products(50)] }, { endpoints: [checkout(50, 3), products(50)] });
    const endpoint = named(diff, 'POST /checkout');
    assert.deepEqual([endpoint?.judged, endpoint?.beyondNoise, endpoint?.metrics.cpuPerRequest?.interval], [false, false, null]);
    assert.equal(diff.noise.comparisons, 4, 'only the judged endpoint widens the intervals');
  });

  it('endpoints beyond the noise come first, then by how much their CPU per request changed', () => {
    const search = (factor: number): RequestsEndpoint => ({ name: 'GET /search', requests: 200, cpuMs: (i) => ({ rankResults: 4 * factor * jitter(i) }) });
    const diff = compare({ endpoints: [products(200), search(1), checkout(200)] }, { endpoints: [products(200), search(1.5), checkout(200, 1.3)] });
    assert.deepEqual(
      diff.endpoints.map((endpoint) => [endpoint.name, endpoint.beyondNoise]),
      [
        ['GET /search', true],
        ['POST /checkout', true],
        ['GET /products/:id', false],
      ],
    );
  });

  it('the same runs always give the same diff (the resampling is seeded)', () => {
    const before = model({ endpoints: [checkout(100), products(100)] });
    const after = model({ endpoints: [checkout(100, 1.1), products(100)] });
    assert.deepEqual(compareRuns(before, after, OPTIONS), compareRuns(before, after, OPTIONS));
  });

  it('--min-effect: a sure change below it is within the noise', () => {
    const before = { endpoints: [checkout(400)] };
    const after = { endpoints: [checkout(400, 1.3)] };
    assert.equal(compare(before, after, { ...OPTIONS, noise: { ...DEFAULT_NOISE, minEffect: 0.25 } }).endpoints[0]?.metrics.cpuPerRequest?.beyondNoise, false);
  });
});

describe('per request', () => {
  it('a request no sample fell in counts as 0, and the samples of a request the recording does not hold still count', () => {
    const spec: RequestsSpec = { endpoints: [{ name: 'GET /a', requests: 100, unkept: 10, cpuMs: (i) => ({ work: i % 2 === 0 ? 2 : 0 }) }] };
    const [a] = endpointRequests(model(spec));
    assert.equal(a?.requests, 100);
    assert.equal(a?.cpu?.length, 100);
    assert.equal(
      a?.cpu?.reduce((x, y) => x + y, 0),
      100 * MS,
      'every sample counted once',
    );
    assert.equal(a?.cpu?.filter((value) => value === 0).length, 50);
  });

  it("latencies are every request's, from the recorder's totals: p50 and p95 read as the report reads them", () => {
    const run = loadRunSync(requestsRecording(fresh(), { endpoints: [checkout(300)] }));
    const [endpoint] = endpointRequests(modelRun(run));
    const [reported] = aggregateRun(run, { trees: false }).endpoints;
    const diff = compareRuns(modelRun(run), modelRun(run), OPTIONS);
    assert.equal(endpoint?.latency.length, 300);
    assert.deepEqual([diff.endpoints[0]?.metrics.p50?.before, diff.endpoints[0]?.metrics.p95?.before], [reported?.p50Ns, reported?.p95Ns]);
  });

  it("requests in flight at once, by Little's law: one started every 20 ms, each lasting 80 ms, keep about 4 in flight; never fewer than 1", () => {
    const [busy] = endpointRequests(model({ endpoints: [{ ...products(100), durationMs: () => 80 }] }));
    assert.ok(Math.abs(busy!.inFlight - (100 * 80) / (99 * 20 + 80)) < 1e-9, String(busy!.inFlight));
    const [idle] = endpointRequests(model({ endpoints: [{ ...products(100), durationMs: () => 5 }] }));
    assert.equal(idle!.inFlight, 1);
  });

  it('without totals (older recordings), the requests are the spans the recording holds', () => {
    const [endpoint] = endpointRequests(model({ endpoints: [{ ...products(30), durationMs: (i) => i + 1 }], totals: false }));
    assert.deepEqual([endpoint?.requests, endpoint?.latency[0], endpoint?.latency[29]], [30, 1 * MS, 30 * MS]);
  });
});

describe("an endpoint's functions", () => {
  it('are matched across two checkouts at different paths by name and file name, and named where they are now', () => {
    const at = (dir: string, line: number) => ({
      priceCart: { file: `/ci/${dir}/src/cart.js`, line },
      applyDiscounts: { file: `/ci/${dir}/src/cart.js`, line: 40 },
    });
    const diff = compare({ endpoints: [checkout(200)], functions: at('base', 10) }, { endpoints: [checkout(200, 1.3)], functions: at('change', 14) });
    const priceCart = diff.endpoints[0]?.functions.filter((delta) => delta.function.name === 'priceCart');
    assert.equal(priceCart?.length, 1);
    assert.deepEqual([priceCart?.[0]?.function.file, priceCart?.[0]?.function.line, priceCart?.[0]?.function.app], ['/ci/change/src/cart.js', 14, true]);
    assert.ok((priceCart?.[0]?.before ?? 0) > 0 && (priceCart?.[0]?.after ?? 0) > 0);
  });

  it("the largest changes are listed, the app's own functions first", () => {
    const delta = (name: string, change: number, app: boolean): FunctionDelta => ({
      function: { name, file: app ? 'app.js' : '', line: 1, owner: app ? 'the app' : 'V8 (built-ins, GC, idle)', app },
      before: 10,
      after: 10 + change,
      change,
      relativeChange: change / 10,
    });
    const deltas = [
      delta('JSON.stringify', 9, false),
      delta('priceCart', 8, true),
      delta('(garbage collector)', -7, false),
      delta('render', 6, true),
      delta('tiny', 1, true),
    ];
    assert.deepEqual(
      topFunctions(deltas, 4).map((d) => d.function.name),
      ['priceCart', 'render', 'JSON.stringify', '(garbage collector)'],
    );
  });
});

describe('what users and tools read', () => {
  const diff = compare(
    { endpoints: [checkout(200), products(200)] },
    { endpoints: [checkout(200, 1.3), products(200), { ...products(25), name: 'GET /new' }] },
  );

  it('the text: each endpoint with its verdict, its metrics before → after with change and interval, its functions, the added, the footnote', () => {
    const text = formatDiff(diff);
    assert.match(text, /^Before: \S+ \(shop, 400 requests\)\nAfter: {2}\S+ \(shop, 425 requests\)\n/);
    assert.match(text, /\n {20}before +after +change +interval of the change\n/);
    assert.match(
      text,
      /\nPOST \/checkout — 200 → 200 requests, beyond the noise\n {2}CPU per request +3\.00ms +3\.60ms +\+600µs +\+20% +\* +\[\+\d+µs, \+\d+µs\]\n/,
    );
    assert.match(
      text,
      /\n {2}Self CPU per request of the functions that changed most \(the app’s first\):\n {4}priceCart \(app\.js:1\) +2\.00ms +2\.60ms +\+600µs +\+30%\n/,
    );
    assert.match(text, /\nGET \/products\/:id — 200 → 200 requests, within the noise\n {2}CPU per request +3\.00ms +3\.00ms +0 +0% +\[/);
    assert.match(text, /\nAdded \(only in the after run\):\n {2}GET \/new — 25 requests\n/);
    assert.match(
      text,
      /\n1 of the 2 endpoints in both runs changed beyond the noise\.\n\* beyond the noise: the change's interval excludes 0 and the change is at least 15% of the before value/,
    );
    assert.match(text, /the change ± 3\.23 standard errors, from a bootstrap over requests/);
  });

  it('the JSON: a format tag, both runs, how noise was judged, every endpoint, the rules and what broke them', () => {
    const rules = [parseRule('cpu-per-request>+10%') as Rule];
    const json = JSON.parse(formatDiffJson(diff, rules, [])) as Record<string, unknown> & {
      endpoints: Record<string, unknown>[];
      noise: Record<string, unknown>;
    };
    assert.deepEqual(Object.keys(json), ['format', 'formatVersion', 'before', 'after', 'noise', 'endpoints', 'rules', 'broken']);
    assert.deepEqual([json.format, json.formatVersion, json.rules, json.broken], ['pyro-run-diff', 1, ['cpu-per-request>+10%'], []]);
    assert.deepEqual(Object.keys(json.noise).sort(), ['comparisons', 'confidence', 'maxDraws', 'minEffect', 'minRequests', 'resamples', 'z']);
    const [first] = json.endpoints as { name: string; metrics: Record<string, Record<string, unknown>>; functions: Record<string, unknown>[] }[];
    assert.deepEqual(Object.keys(first ?? {}), ['name', 'presence', 'requests', 'judged', 'beyondNoise', 'metrics', 'functions']);
    assert.deepEqual(Object.keys(first?.metrics ?? {}), ['cpuPerRequest', 'wallPerRequest', 'p50', 'p95']);
    assert.deepEqual(Object.keys(first?.metrics.cpuPerRequest ?? {}), ['before', 'after', 'change', 'relativeChange', 'interval', 'beyondNoise']);
    assert.deepEqual(Object.keys(first?.functions[0] ?? {}), ['function', 'before', 'after', 'change', 'relativeChange']);
  });
});

describe('how changes print', () => {
  const changes: [number, string][] = [
    [610_000, '+610µs'],
    [-1_620_000, '-1.62ms'],
    [0, '0'],
    [-400, '0'],
  ];
  for (const [ns, text] of changes) it(`${ns} ns → ${text}`, () => assert.equal(formatChange(ns), text));
  const relatives: [number | null, string][] = [
    [0.216, '+22%'],
    [-0.046, '-4.6%'],
    [-0.0001, '0%'],
    [null, 'new'],
  ];
  for (const [ratio, text] of relatives) it(`${ratio} → ${text}`, () => assert.equal(formatRelative(ratio), text));
});
