/**
 * The diff page's data: two runs' flame trees merged per request (src/diff/flame-diff.ts), their
 * functions matched as the function list matches them (diff-frames.ts), the colour scale
 * (change-colour.ts), and `pyro-run diff --html` writing the page — on synthetic runs with a known
 * CPU per request and function.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runDiff } from '../../src/cli/diff.js';
import { type ChangeClass, changeLook } from '../../src/diff/change-colour.js';
import { compareRunsWithSides } from '../../src/diff/compare-runs.js';
import { diffPageData } from '../../src/diff/diff-page-data.js';
import type { DiffFlameTree } from '../../src/diff/flame-diff.js';
import { DEFAULT_NOISE } from '../../src/diff/metric-change.js';
import { modelRun } from '../../src/report/aggregate.js';
import { loadRunSync } from '../../src/report/load-run.js';
import { checkout, jitter, products, type RequestsEndpoint, type RequestsSpec, requestsRecording } from '../support/requests-recording.js';
import { scratchDirs } from '../support/scratch.js';

const MS = 1e6;
const { base, fresh } = scratchDirs('pyro-run-diff-flame-');
const OPTIONS = { noise: DEFAULT_NOISE, topFunctions: 10 };

/** The products' endpoint with other functions: recommend 3 ms a request and `more`. */
const productsWith = (requests: number, more: Record<string, number>): RequestsEndpoint => ({
  ...products(requests),
  cpuMs: (i) => ({ recommend: 3 * jitter(i), ...more }),
});

const model = (spec: RequestsSpec) => modelRun(loadRunSync(requestsRecording(fresh(), spec)));

/** The page's data of two runs, as `pyro-run diff --html` builds it. */
function pageData(before: RequestsSpec, after: RequestsSpec) {
  const a = model(before);
  const b = model(after);
  return diffPageData(a, b, compareRunsWithSides(a, b, OPTIONS));
}

/** Each node of a tree by its path of names (`main/handle POST /checkout/priceCart`), with its values. */
function nodes(data: ReturnType<typeof pageData>, tree: DiffFlameTree) {
  const name = (f: number) => (f < 0 ? 'all' : (data.strings[data.frames.name[f] as number] as string));
  const out = new Map<string, { width: number; before: number; after: number; beforeSelf: number; afterSelf: number; file: string }>();
  const path: string[] = [];
  tree.frame.forEach((f, i) => {
    const depth = tree.depth[i] as number;
    path.length = depth;
    path.push(name(f));
    out.set(path.join('/'), {
      width: tree.total[i] as number,
      before: tree.before[i] as number,
      after: tree.after[i] as number,
      beforeSelf: tree.beforeSelf[i] as number,
      afterSelf: tree.afterSelf[i] as number,
      file: f < 0 ? '' : (data.strings[data.frames.file[f] as number] as string),
    });
  });
  return out;
}

const near = (actual: number | undefined, expected: number, what: string) =>
  assert.ok(Math.abs((actual ?? NaN) - expected) < 1, `${what}: ${actual} ≠ ${expected}`);

/** Every node's width is its own plus its children's, and children come widest first: what the report's layout needs. */
function assertLaidOut(tree: DiffFlameTree): void {
  const n = tree.frame.length;
  for (let i = 0; i < n; i++) {
    const depth = tree.depth[i] as number;
    let children = 0;
    let previous = Infinity;
    for (let j = i + 1; j < n && (tree.depth[j] as number) > depth; j++) {
      if (tree.depth[j] !== depth + 1) continue;
      children += tree.total[j] as number;
      assert.ok((tree.total[j] as number) <= previous, `children of node ${i} widest first`);
      previous = tree.total[j] as number;
    }
    // Within the six significant digits values are rounded to.
    assert.ok(
      Math.abs((tree.total[i] as number) - (tree.self[i] as number) - children) <= 1e-5 * (tree.total[i] as number),
      `node ${i}: width ≠ own + children`,
    );
  }
}

const CHECKOUT = 'all/main/handle POST /checkout';

describe('a diff flame tree', () => {
  it("is the endpoint's tree with each node's time per request in both runs: priceCart 2ms → 2.6ms, applyDiscounts 1ms → 1ms", () => {
    const data = pageData({ endpoints: [checkout(200), products(200)] }, { endpoints: [checkout(200, 1.3), products(200)] });
    const index = data.endpoints.findIndex((endpoint) => endpoint.name === 'POST /checkout');
    const tree = (data.trees.endpoints[index] as (typeof data.trees.endpoints)[number]).cpu;
    const byPath = nodes(data, tree);
    const cases: [string, number, number][] = [
      ['all', 3 * MS, 3.6 * MS],
      [CHECKOUT, 3 * MS, 3.6 * MS],
      [`${CHECKOUT}/priceCart`, 2 * MS, 2.6 * MS],
      [`${CHECKOUT}/applyDiscounts`, 1 * MS, 1 * MS],
    ];
    for (const [at, before, after] of cases) {
      near(byPath.get(at)?.before, before, `${at} before`);
      near(byPath.get(at)?.after, after, `${at} after`);
      near(byPath.get(at)?.width, after, `${at} width`);
    }
    near(byPath.get(`${CHECKOUT}/priceCart`)?.afterSelf, 2.6 * MS, 'priceCart self after');
    assert.ok(![...byPath.keys()].some((at) => at.includes('products')), "another endpoint's frames leaked in");
    assertLaidOut(tree);
  });

  it('runs of different lengths are compared per request, never in totals', () => {
    const data = pageData({ endpoints: [products(100)] }, { endpoints: [products(400)] });
    for (const [at, node] of nodes(data, (data.trees.endpoints[0] as (typeof data.trees.endpoints)[number]).cpu)) near(node.after, node.before, at);
  });

  it("a function only the after run has is new; one only the before run has is gone, drawn at its before time beside the after run's", () => {
    const data = pageData({ endpoints: [productsWith(100, { legacyScore: 1 })] }, { endpoints: [productsWith(100, { vectorScore: 0.5 })] });
    const tree = (data.trees.endpoints[0] as (typeof data.trees.endpoints)[number]).cpu;
    const byPath = nodes(data, tree);
    const handler = 'all/main/handle GET /products/:id';
    const legacy = byPath.get(`${handler}/legacyScore`);
    const vector = byPath.get(`${handler}/vectorScore`);
    assert.deepEqual([legacy?.before, legacy?.after, legacy?.width], [1 * MS, 0, 1 * MS]);
    assert.deepEqual([vector?.before, vector?.after, vector?.width], [0, 0.5 * MS, 0.5 * MS]);
    near(byPath.get(handler)?.after, 3.5 * MS, 'handler after');
    near(byPath.get(handler)?.width, 4.5 * MS, 'handler width: after plus what is gone');
    assertLaidOut(tree);
  });

  it('a function is matched across two checkouts of the app (another path, another line) and named as the after run names it', () => {
    const spec = (dir: string, line: number): RequestsSpec => ({
      endpoints: [checkout(50)],
      functions: { priceCart: { file: `/ci/${dir}/server.mjs`, line }, applyDiscounts: { file: `/ci/${dir}/server.mjs`, line: 90 } },
    });
    const data = pageData(spec('base', 30), spec('change', 33));
    const byPath = nodes(data, (data.trees.endpoints[0] as (typeof data.trees.endpoints)[number]).cpu);
    const priceCart = [...byPath].filter(([at]) => at.endsWith('/priceCart'));
    assert.equal(priceCart.length, 1);
    assert.equal(priceCart[0]?.[1].file, '/ci/change/server.mjs');
    near(priceCart[0]?.[1].before, 2 * MS, 'before');
    near(priceCart[0]?.[1].after, 2 * MS, 'after');
    const line = data.frames.line[data.frames.name.findIndex((name) => data.strings[name] === 'priceCart')];
    assert.equal(line, 33);
  });

  it("an endpoint one run has not: the other run's tree, every node new (added) or gone (removed)", () => {
    const data = pageData(
      { endpoints: [products(50), { ...products(100), name: 'GET /old' }] },
      { endpoints: [products(50), { ...products(200), name: 'GET /new' }] },
    );
    const tree = (name: string) =>
      (data.trees.endpoints[data.endpoints.findIndex((endpoint) => endpoint.name === name)] as (typeof data.trees.endpoints)[number]).cpu;
    const added = tree('GET /new');
    assert.ok(added.before.every((value) => value === 0));
    near(added.after[0], 3 * MS, 'added: after');
    near(added.total[0], 3 * MS, 'added: width');
    const removed = tree('GET /old');
    assert.ok(removed.after.every((value) => value === 0));
    near(removed.before[0], 3 * MS, 'removed: before');
    near(removed.total[0], 3 * MS, 'removed: width, its before time');
  });

  it('the whole process: every sample over every request of the run, CPU and wall', () => {
    const data = pageData({ endpoints: [checkout(100), products(100)] }, { endpoints: [checkout(300, 1.3), products(300)] });
    for (const kind of ['cpu', 'wall'] as const) {
      const byPath = nodes(data, data.trees.process[kind]);
      // (3ms + 3ms) over 200 requests before; (3.6ms + 3ms) over 600 after, 3 times as many.
      near(byPath.get('all')?.before, 3 * MS, `${kind} before`);
      near(byPath.get('all')?.after, 3.3 * MS, `${kind} after`);
      near(byPath.get(`${CHECKOUT}/priceCart`)?.after, 1.3 * MS, `${kind} priceCart after`);
    }
  });
});

describe('the colour scale', () => {
  const band = 0.1;
  const cases: [string, number, number, ChangeClass, number | null][] = [
    ['30% slower', 2, 2.6, 'slower', 0.3],
    ['20% faster', 5, 4, 'faster', -0.2],
    ['unchanged', 1, 1, 'same', 0],
    ['9% slower: within the band', 100, 109, 'same', 0.09],
    ['9% faster: within the band', 100, 91, 'same', -0.09],
    ['new', 0, 1, 'new', null],
    ['gone', 1, 0, 'gone', -1],
    ['in neither run', 0, 0, 'same', null],
  ];
  for (const [what, before, after, change, relative] of cases) {
    it(`${what}: ${change}`, () => {
      const look = changeLook(before, after, band);
      assert.equal(look.change, change);
      if (relative === null) assert.equal(look.relative, null);
      else assert.ok(Math.abs((look.relative ?? NaN) - relative) < 1e-9, String(look.relative));
    });
  }

  it('deepens as the change grows, to its deepest from ±50%, and shares one grey within the band', () => {
    const lightness = (before: number, after: number) => Number(/(\d+)%\)$/.exec(changeLook(before, after, band).colour)?.[1]);
    assert.ok(lightness(1, 1.15) > lightness(1, 1.3) && lightness(1, 1.3) > lightness(1, 1.5), 'slower: deeper as it grows');
    assert.equal(lightness(1, 1.5), lightness(1, 3));
    assert.ok(lightness(1, 0.85) > lightness(1, 0.6) && lightness(1, 0.5) === lightness(1, 0.1), 'faster likewise');
    assert.equal(changeLook(1, 1.05, band).colour, changeLook(1, 0.95, band).colour);
    assert.notEqual(changeLook(1, 1.3, band).colour, changeLook(1, 0.7, band).colour);
  });

  it('a band of 0 (--min-effect 0): any change is coloured', () => {
    assert.equal(changeLook(100, 101, 0).change, 'slower');
  });
});

describe('pyro-run diff --html', () => {
  const before = requestsRecording(fresh(), { endpoints: [checkout(100)] });
  const slower = requestsRecording(fresh(), { endpoints: [checkout(100, 1.3)] });
  const run = (args: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = runDiff(args, { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: base });
    return { code, stdout, stderr };
  };

  it('writes one self-contained page: its script and data inline, no request allowed, and says where', () => {
    const file = path.join(fresh(), 'diff.html');
    const result = run([before, slower, '--html', file]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`\nDiff page: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n$`));
    const html = readFileSync(file, 'utf8');
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">/);
    assert.match(html, /<script type="application\/json" id="diff-data">\{/);
    assert.doesNotMatch(html, /<script[^>]+src=|<link /);
    assert.equal(html.match(/<\/script>/g)?.length, 2, 'only the two elements end');
  });

  it('without FILE, writes diff.html in the after run; with --json, says where on stderr and keeps stdout JSON', () => {
    const result = run([before, slower, '--json', '--html']);
    assert.equal(result.code, 0, result.stderr);
    JSON.parse(result.stdout);
    assert.equal(result.stderr, `Diff page: ${path.join(slower, 'diff.html')}\n`);
    assert.ok(existsSync(path.join(slower, 'diff.html')));
  });

  it('a page that cannot be written is trouble: exit 2, naming the file', () => {
    const file = path.join(fresh(), 'missing', 'diff.html');
    const result = run([before, slower, '--html', file]);
    assert.equal(result.code, 2);
    assert.equal(result.stderr, `pyro-run diff: cannot write ${file} (ENOENT)\n`);
  });
});
