// Writes synthetic recordings in the documented on-disk format (docs/local-mode.md): run.json,
// profiles/<window>-<type>.pb.gz (gzipped pprof built with pprof-format, labels span_id /
// span_name / trace_id / thread_name) and spans/<batch>.jsonl (OTLP/JSON, one request per line), so report
// tests read exactly what the recorder writes.

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Function as PprofFunction, Label, Line, Location, Profile, Sample, StringTable, ValueType } from 'pprof-format';
import { LABEL_SPAN_ID, LABEL_SPAN_NAME, LABEL_THREAD_NAME, LABEL_TRACE_ID } from '../../src/wire.js';

export interface FrameSpec {
  file: string;
  line: number;
}

export interface SampleSpec {
  /** Function names, root first (`['main', 'handle', 'fib']`: fib is the leaf). */
  stack: string[];
  /** Nanoseconds of the profile's kind. */
  value: number;
  /** The span the sample ran in; none for a sample outside spans. */
  span?: { spanId: string; spanName: string; traceId: string };
  /** Its `thread_name` label; none, as recordings made before workers were profiled have it. */
  thread?: string;
}

export interface WindowSpec {
  cpu?: SampleSpec[];
  wall?: SampleSpec[];
}

export interface SpanSpec {
  spanId: string;
  traceId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP SpanKind number; default 2 (server). */
  kind?: number;
  startNs: bigint;
  durationNs: number;
  /** Sets `pyroscope.profile.id` = spanId, as the linker does on local roots. */
  profiled?: boolean;
  route?: string;
  statusCode?: number;
  /** Other string attributes (`db.system`, `db.statement`, `http.request.method` …). */
  attributes?: Record<string, string>;
}

export interface RecordingSpec {
  /** Run folder name; default `app-20261129-221503-4242`. */
  name?: string;
  service?: string;
  windows?: WindowSpec[];
  /** Each inner array becomes one spans/<n>.jsonl file. */
  spanBatches?: SpanSpec[][];
  /** Where functions are defined; names missing here are in app.js at line 1. */
  functions?: Record<string, FrameSpec>;
  /** Window length written to duration_nanos; default 15 s. */
  windowNs?: bigint;
  startedAt?: string;
  manifest?: Record<string, unknown>;
}

const pad = (n: number) => String(n).padStart(6, '0');

export function buildPprof(
  kind: 'cpu' | 'wall',
  samples: readonly SampleSpec[],
  functions: Record<string, FrameSpec>,
  timeNanos: bigint,
  durationNanos: bigint,
): Profile {
  const strings = new StringTable();
  const fns = new Map<string, PprofFunction>();
  const locations = new Map<string, Location>();
  const locationFor = (name: string): Location => {
    let location = locations.get(name);
    if (location === undefined) {
      const where = functions[name] ?? { file: 'app.js', line: 1 };
      let fn = fns.get(name);
      if (fn === undefined) {
        fn = new PprofFunction({ id: fns.size + 1, name: strings.dedup(name), systemName: strings.dedup(name), filename: strings.dedup(where.file) });
        fns.set(name, fn);
      }
      // As @datadog/pprof writes them: the function's line on Line.line, no start_line.
      location = new Location({ id: locations.size + 1, line: [new Line({ functionId: fn.id, line: where.line })] });
      locations.set(name, location);
    }
    return location;
  };
  const label = (key: string, value: string) => new Label({ key: strings.dedup(key), str: strings.dedup(value) });
  const sample = samples.map(
    (s) =>
      new Sample({
        locationId: [...s.stack].reverse().map((name) => locationFor(name).id),
        value: [1, s.value],
        label: [
          ...(s.span ? [label(LABEL_SPAN_ID, s.span.spanId), label(LABEL_SPAN_NAME, s.span.spanName), label(LABEL_TRACE_ID, s.span.traceId)] : []),
          ...(s.thread === undefined ? [] : [label(LABEL_THREAD_NAME, s.thread)]),
        ],
      }),
  );
  const metric = new ValueType({ type: strings.dedup(kind), unit: strings.dedup('nanoseconds') });
  return new Profile({
    sampleType: [new ValueType({ type: strings.dedup('samples'), unit: strings.dedup('count') }), metric],
    periodType: metric,
    period: 10_000_000,
    timeNanos,
    durationNanos,
    sample,
    location: [...locations.values()],
    function: [...fns.values()],
    stringTable: strings,
  });
}

function otlpSpan(span: SpanSpec): Record<string, unknown> {
  const attributes: { key: string; value: Record<string, unknown> }[] = [];
  if (span.profiled) attributes.push({ key: 'pyroscope.profile.id', value: { stringValue: span.spanId } });
  if (span.route !== undefined) attributes.push({ key: 'http.route', value: { stringValue: span.route } });
  if (span.statusCode !== undefined) attributes.push({ key: 'http.response.status_code', value: { intValue: span.statusCode } });
  for (const [key, value] of Object.entries(span.attributes ?? {})) attributes.push({ key, value: { stringValue: value } });
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    ...(span.parentSpanId === undefined ? {} : { parentSpanId: span.parentSpanId }),
    name: span.name,
    kind: span.kind ?? 2,
    startTimeUnixNano: String(span.startNs),
    endTimeUnixNano: String(span.startNs + BigInt(span.durationNs)),
    attributes,
    droppedAttributesCount: 0,
    events: [],
    links: [],
    status: { code: 0 },
    flags: 257,
  };
}

/** One ExportTraceServiceRequest line, as the collector's file exporter writes it. */
export function otlpLine(spans: readonly SpanSpec[], service = 'app'): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [{ scope: { name: 'test' }, spans: spans.map(otlpSpan) }],
      },
    ],
  });
}

/** Writes the recording under baseDir; returns the run folder. */
export function writeRecording(baseDir: string, spec: RecordingSpec): string {
  const dir = path.join(baseDir, spec.name ?? 'app-20261129-221503-4242');
  mkdirSync(path.join(dir, 'profiles'), { recursive: true });
  mkdirSync(path.join(dir, 'spans'), { recursive: true });
  const windowNs = spec.windowNs ?? 15_000_000_000n;
  const startedAt = spec.startedAt ?? '2026-11-29T22:15:03.120Z';
  const startNs = BigInt(Date.parse(startedAt)) * 1_000_000n;
  const windows = spec.windows ?? [];
  let profileFiles = 0;
  // What the recorder counts in counts.bytes: the profile and span files.
  let bytes = 0;
  windows.forEach((window, i) => {
    for (const kind of ['cpu', 'wall'] as const) {
      const samples = window[kind];
      if (samples === undefined) continue;
      const pprof = buildPprof(kind, samples, spec.functions ?? {}, startNs + windowNs * BigInt(i + 1), windowNs);
      const body = gzipSync(pprof.encode());
      writeFileSync(path.join(dir, 'profiles', `${pad(i + 1)}-${kind}.pb.gz`), body);
      profileFiles++;
      bytes += body.byteLength;
    }
  });
  const batches = spec.spanBatches ?? [];
  batches.forEach((batch, i) => {
    const line = `${otlpLine(batch, spec.service)}\n`;
    writeFileSync(path.join(dir, 'spans', `${pad(i + 1)}.jsonl`), line);
    bytes += Buffer.byteLength(line);
  });
  const spanCount = batches.reduce((n, batch) => n + batch.length, 0);
  const manifest = {
    format: 'pyro-run-recording',
    formatVersion: 1,
    service: spec.service ?? 'app',
    pyroRunVersion: '0.1.0',
    nodeVersion: '24.21.0',
    pid: 4242,
    command: ['node', 'server.js'],
    startedAt,
    endedAt: new Date(Date.parse(startedAt) + Number(windowNs / 1_000_000n) * windows.length).toISOString(),
    complete: true,
    samplingIntervalMicros: 10000,
    flushIntervalMs: Number(windowNs / 1_000_000n),
    profileTypes: ['cpu', 'wall'],
    capBytes: 209715200,
    counts: { windows: windows.length, profileFiles, spanFiles: batches.length, spans: spanCount, bytes, droppedWindows: 0, droppedSpans: 0 },
    ...spec.manifest,
  };
  writeFileSync(path.join(dir, 'run.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return dir;
}

/** 16 / 32 lowercase hex characters from a number, for readable synthetic IDs. */
export const spanIdOf = (n: number) => n.toString(16).padStart(16, '0');
export const traceIdOf = (n: number) => n.toString(16).padStart(32, '0');

const MS = 1_000_000;
/** When the test recordings start (ns since the epoch). */
const RECORDING_START = BigInt(Date.parse('2026-11-29T22:15:04.000Z')) * 1_000_000n;

/** A profiled, answered root span of a test recording, `offsetMs` after its start; `route` where the recorder names one. */
function rootSpan(n: number, spanName: string, offsetMs: number, durationMs: number, route?: string): SpanSpec {
  return {
    spanId: spanIdOf(n),
    traceId: traceIdOf(n),
    name: spanName,
    startNs: RECORDING_START + BigInt(offsetMs * MS),
    durationNs: durationMs * MS,
    profiled: true,
    ...(route === undefined ? {} : { route }),
    statusCode: 200,
  };
}

/** The labels of a sample taken in root span `n`. */
const inSpan = (n: number, spanName: string) => ({ spanId: spanIdOf(n), spanName, traceId: traceIdOf(n) });

/**
 * A small, fully known recording ("shop"): two endpoints with known latencies and CPU, a third
 * without samples, child spans, samples outside spans and one labelled with a span the recording
 * does not hold. `fib` is the hot CPU function; waiting on the database dominates wall time.
 */
export function shopRecording(baseDir: string, name?: string): string {
  const child = (n: number, parent: number, offsetMs: number, durationMs: number): SpanSpec => ({
    spanId: spanIdOf(n),
    traceId: traceIdOf(parent),
    parentSpanId: spanIdOf(parent),
    name: 'db.query',
    kind: 3,
    startNs: RECORDING_START + BigInt(offsetMs * MS),
    durationNs: durationMs * MS,
  });
  const users = (n: number) => inSpan(n, 'GET /users/:id');
  const orders = (n: number) => inSpan(n, 'POST /orders');
  const u = ['main', 'handleUser'];
  const o = ['main', 'handleOrder'];
  return writeRecording(baseDir, {
    name,
    service: 'shop',
    functions: {
      main: { file: 'src/server.ts', line: 1 },
      handleUser: { file: 'src/users.ts', line: 30 },
      fib: { file: 'src/math.ts', line: 12 },
      'JSON.stringify': { file: '', line: 0 },
      waitForDb: { file: 'src/db.ts', line: 7 },
      handleOrder: { file: 'src/orders.ts', line: 5 },
      validate: { file: 'src/orders.ts', line: 40 },
      hash: { file: 'node:crypto', line: 88 },
      '(garbage collector)': { file: '', line: 0 },
      '(program)': { file: '', line: 0 },
      '(idle)': { file: '', line: 0 },
    },
    windows: [
      {
        cpu: [
          { stack: [...u, 'fib'], value: 30 * MS, span: users(1) },
          { stack: [...u, 'JSON.stringify'], value: 5 * MS, span: users(1) },
          { stack: [...u, 'fib'], value: 30 * MS, span: users(2) },
          { stack: [...u, 'fib'], value: 20 * MS, span: users(3) },
          { stack: u, value: 6 * MS, span: users(3) },
          { stack: [...o, 'validate'], value: 10 * MS, span: orders(11) },
          { stack: [...o, 'hash'], value: 15 * MS, span: orders(11) },
          { stack: ['main', '(garbage collector)'], value: 10 * MS },
          { stack: [...u, 'fib'], value: 5 * MS, span: { spanId: 'ffffffffffffffff', spanName: 'GET /gone', traceId: traceIdOf(0xfff) } },
        ],
        wall: [
          { stack: [...u, 'fib'], value: 10 * MS, span: users(1) },
          { stack: [...u, 'fib'], value: 20 * MS, span: users(2) },
          { stack: [...u, 'fib'], value: 30 * MS, span: users(3) },
          { stack: [...o, 'validate'], value: 50 * MS, span: orders(11) },
          { stack: ['(idle)'], value: 500 * MS },
        ],
      },
      {
        cpu: [
          { stack: [...u, 'fib'], value: 40 * MS, span: users(4) },
          { stack: [...o, 'validate'], value: 10 * MS, span: orders(12) },
          { stack: ['(program)'], value: 4 * MS },
        ],
        wall: [
          { stack: [...u, 'fib'], value: 10 * MS, span: users(4) },
          { stack: [...u, 'waitForDb'], value: 90 * MS, span: users(4) },
          { stack: [...o, 'validate'], value: 70 * MS, span: orders(12) },
        ],
      },
    ],
    spanBatches: [
      [
        rootSpan(1, 'GET /users/:id', 0, 10, '/users/:id'),
        child(101, 1, 2, 5),
        rootSpan(2, 'GET /users/:id', 100, 20, '/users/:id'),
        rootSpan(3, 'GET /users/:id', 200, 30, '/users/:id'),
      ],
      [
        rootSpan(4, 'GET /users/:id', 15_000, 100, '/users/:id'),
        child(104, 4, 15_005, 90),
        rootSpan(11, 'POST /orders', 300, 50, '/orders'),
        rootSpan(12, 'POST /orders', 15_200, 70, '/orders'),
        rootSpan(21, 'GET /health', 400, 1, '/health'),
      ],
    ],
  });
}

/** What shopRecording holds, for assertions. */
export const SHOP = {
  users: { name: 'GET /users/:id', count: 4, durationsMs: [10, 20, 30, 100], cpuMs: 131, wallMs: 160 },
  orders: { name: 'POST /orders', count: 2, durationsMs: [50, 70], cpuMs: 35, wallMs: 120 },
  health: { name: 'GET /health', count: 1 },
  cpu: { insideMs: 171, outsideMs: 14, unmatchedMs: 5, insideSamples: 10, outsideSamples: 2 },
  wall: { insideMs: 280, outsideMs: 500, unmatchedMs: 0 },
  hotCpu: 'fib',
  hotWall: 'waitForDb',
} as const;

/**
 * A recording of an app that hands work to two worker threads ("thumbs"): each POST /resize runs a
 * little on the main thread and sends the resizing to a worker, whose samples carry the request's
 * span; a worker also loads its codec outside any span. The workers are `worker 2` and
 * `worker 10`, and worker 10's samples come first in the file: the report lists threads by name.
 * Worker 2 spends more in encodePng than in resizeImage, the other way round from all threads.
 * Every sample carries `thread_name`, as the recorder writes them since workers are profiled.
 */
export function threadsRecording(baseDir: string, name?: string): string {
  const resize = (n: number) => inSpan(n, THREADS.resize.name);
  const health = (n: number) => inSpan(n, THREADS.health.name);
  const main = THREADS.main;
  const [w2, w10] = THREADS.workers;
  return writeRecording(baseDir, {
    name,
    service: 'thumbs',
    functions: {
      main: { file: 'src/server.ts', line: 1 },
      handleResize: { file: 'src/routes.ts', line: 10 },
      health: { file: 'src/routes.ts', line: 30 },
      workerLoop: { file: 'src/worker.ts', line: 1 },
      resizeImage: { file: 'src/resize.ts', line: 5 },
      encodePng: { file: 'src/png.ts', line: 9 },
      loadCodec: { file: 'src/png.ts', line: 60 },
      '(garbage collector)': { file: '', line: 0 },
      '(idle)': { file: '', line: 0 },
    },
    windows: [
      {
        cpu: [
          { stack: ['workerLoop', 'resizeImage'], value: 40 * MS, span: resize(1), thread: w10 },
          { stack: ['workerLoop', 'loadCodec'], value: 10 * MS, thread: w10 },
          { stack: ['main', 'handleResize'], value: 5 * MS, span: resize(1), thread: main },
          { stack: ['main', 'handleResize'], value: 5 * MS, span: resize(2), thread: main },
          { stack: ['workerLoop', 'resizeImage'], value: 10 * MS, span: resize(2), thread: w2 },
          { stack: ['workerLoop', 'encodePng'], value: 20 * MS, span: resize(2), thread: w2 },
          { stack: ['main', 'health'], value: 2 * MS, span: health(3), thread: main },
          { stack: ['main', '(garbage collector)'], value: 8 * MS, thread: main },
        ],
        wall: [
          { stack: ['workerLoop', 'resizeImage'], value: 45 * MS, span: resize(1), thread: w10 },
          { stack: ['main', 'handleResize'], value: 10 * MS, span: resize(1), thread: main },
          { stack: ['workerLoop', 'resizeImage'], value: 25 * MS, span: resize(2), thread: w2 },
          { stack: ['(idle)'], value: 120 * MS, thread: main },
        ],
      },
    ],
    spanBatches: [[rootSpan(1, THREADS.resize.name, 0, 80), rootSpan(2, THREADS.resize.name, 100, 60), rootSpan(3, THREADS.health.name, 200, 2)]],
  });
}

/** What threadsRecording holds, for assertions. */
export const THREADS = {
  main: 'main',
  /** In the order the report lists them. */
  workers: ['worker 2', 'worker 10'],
  threadOrder: ['main', 'worker 2', 'worker 10'] as readonly string[],
  resize: { name: 'POST /resize', cpuMs: 80, wallMs: 80, mainCpuMs: 10, workerCpuMs: 70 },
  health: { name: 'GET /health', cpuMs: 2 },
  /** CPU and wall per thread: main, worker 2, worker 10. */
  cpuMs: [20, 30, 50],
  wallMs: [130, 25, 45],
  workerFrames: ['workerLoop', 'resizeImage', 'encodePng', 'loadCodec'],
  mainFrames: ['main', 'handleResize', 'health', '(garbage collector)', '(idle)'],
} as const;

const CLIENT_KIND = 3;
const SERVER_KIND = 2;
/** The N+1 recording's repeated statement, with its literal. */
const AUTHOR_BY_ID = (id: number) => `SELECT "id", "name" FROM "Authors" WHERE "id" = ${id}`;

/**
 * Two requests of GET /articles: a list query, then one author query per article (N+1: 6 and 8
 * of them), each 5 ms, back to back; an outgoing HTTP call of 10 ms in the second. CPU samples: 4
 * and 6 ms. One GET /health without calls.
 */
export function nPlusOneRecording(dir: string): string {
  let n = 0;
  const spans: SpanSpec[] = [];
  const samples: SampleSpec[] = [];
  const request = (trace: number, authors: number, http: boolean, cpuMs: number, startMs: number) => {
    const traceId = traceIdOf(trace);
    const root = ++n;
    const startNs = BigInt(startMs) * BigInt(MS);
    let at = startNs;
    const call = (name: string, ms: number, attributes: Record<string, string>) => {
      spans.push({ spanId: spanIdOf(++n), traceId, parentSpanId: spanIdOf(root), name, kind: CLIENT_KIND, startNs: at, durationNs: ms * MS, attributes });
      at += BigInt(ms * MS);
    };
    call('pg.query:SELECT shop', 5, { 'db.system': 'postgresql', 'db.statement': 'SELECT "id" FROM "Articles" LIMIT 20' });
    for (let a = 1; a <= authors; a++) call('pg.query:SELECT shop', 5, { 'db.system': 'postgresql', 'db.statement': AUTHOR_BY_ID(a) });
    if (http) call('GET', 10, { 'http.request.method': 'GET', 'server.address': 'stock.internal' });
    const durationNs = Number(at - startNs) + 2 * MS;
    spans.push({ spanId: spanIdOf(root), traceId, name: 'GET /articles', kind: SERVER_KIND, startNs, durationNs, profiled: true, route: '/articles' });
    samples.push({ stack: ['main', 'listArticles'], value: cpuMs * MS, span: { spanId: spanIdOf(root), spanName: 'GET /articles', traceId } });
  };
  request(1, 6, false, 4, 1000);
  request(2, 8, true, 6, 2000);
  const health = ++n;
  spans.push({
    spanId: spanIdOf(health),
    traceId: traceIdOf(3),
    name: 'GET /health',
    kind: SERVER_KIND,
    startNs: 3000n * BigInt(MS),
    durationNs: MS,
    profiled: true,
  });
  return writeRecording(dir, { windows: [{ cpu: samples }], spanBatches: [spans] });
}
