/**
 * Backend faults against a real app under load. For each way a backend can fail (FAULTS in
 * support/backend-faults.ts: refused, unresolvable name, a resolver that never answers, accepts and
 * never answers, answers after 30 s, 500s, 429 + Retry-After, connection reset mid-body, 200 with a
 * garbage body, TLS spoken to a plain-HTTP port), applied to Pyroscope /ingest alone, to OTLP
 * alone and to both, the app (test/fixtures/apps/server.cjs under `--import dist/preload/register.js`,
 * serving /work/:seq) must not notice:
 *
 * - every response is right, and throughput and p99 latency stay within TOLERANCE of the same app
 *   with a healthy backend, measured in alternating slices during the fault (each /work request
 *   also runs an async randomBytes on libuv's threadpool: a fault that ties up the threadpool
 *   stalls the app's requests);
 * - pyro-run says one warning per failing pipeline, naming the endpoint, never a secret;
 * - the healthy pipeline keeps flowing while the other one is down, says nothing, and in the end
 *   has delivered everything: every span, every profile window;
 * - once the backend behaves again, uploads resume and what was queued during the outage arrives:
 *   the profile windows form a gap-free chain across the outage, every request's span is there,
 *   and nothing arrives twice;
 * - SIGTERM ends the process within the shutdown deadline, dying of SIGTERM.
 *
 * Timeline of a run: the app starts with a healthy backend and warms up; the fault is armed (for a
 * wrong name or protocol it is in the URL from the start); the paired measurement runs with the
 * fault active (~6.5 s, or twice that when the first round is out of tolerance: the verdict is
 * then on both rounds together); the backend is healed; the backlog must arrive; SIGTERM.
 *
 * Timeouts are short so each run fits in seconds: a 2.5 s upload timeout (this is what bounds
 * "answers after 30 s" and "never answers": each attempt gives up after 2.5 s) and a 3 s shutdown
 * deadline. Windows are 2 s and span batches 3 s: the sender holds at most 32 requests, and an
 * outage plus the retry backoff reached by then (a refused connection is retried after 0.5, 1, 2,
 * 4, 8 s, ±25 %) must fit in it for "nothing queued is lost" to be promised — at 1 s windows (two
 * uploads a second) it would take only ~13 s of outage and backoff to overflow.
 */
import assert from 'node:assert/strict';
import { after, test, type TestContext } from 'node:test';
import type { IngestRecord, DecodedSpan } from '../support/receiver.js';
import { type Receiver, startReceiver } from '../support/receiver.js';
import { type Fault, FAULTS, type Target, UPLOAD_TIMEOUT_MS } from './support/backend-faults.js';
import {
  FAST,
  type LoadResult,
  mergeLoads,
  type RunningApp,
  startApp,
  steadyLoad,
  stop,
  uploadWarnings,
  warnings,
  windowChain,
  workSpans,
} from './support/app.js';
import { recordFigures, round } from './support/figures.js';

/** Each fault on each pipeline alone and on both together. */
const TARGET_SETS: readonly (readonly Target[])[] = [['ingest'], ['traces'], ['ingest', 'traces']];

const TOKEN = 'tok-FAULT-SECRET-4242';
const OTLP_TOKEN = 'otlp-FAULT-SECRET-4343';
const WINDOW_MS = 2000;

/**
 * Long enough to include each app's first uploads (the first window after 2 s, the first span
 * batch ~3 s after the first span), whose first encodings run cold on the app's main thread.
 * Measured after that, two healthy apps agree within ~1.5× on p99; measured across it, whichever
 * app is at its first upload at that moment pays a longer p99.
 */
const WARM_MS = 4500;
/** Paired measurement: this many slices of the faulty app, each followed by one of the healthy app. */
const SLICES = 8;
const SLICE_MS = 400;
const SHUTDOWN_MS = Number(FAST.PYRO_RUN_SHUTDOWN_TIMEOUT_MS);
/** Process teardown, the flush worker, a loaded 2-core machine: on top of the deadline. */
const SHUTDOWN_SLACK_MS = 2500;
/** A recovery waits out the backoff reached during the outage (≤ 10 s here), then delivers. */
const RECOVERY_MS = 25_000;

/**
 * On a noisy 2-core machine (the app, the load generator and the receiver share it, and other
 * work comes and goes), the healthy app's own slices differ by 10-20 % in throughput and tens of
 * ms in p99 (this fixture compiles six functions per request and its p99 is in the 100-300 ms
 * range). A fault must cost the app less than: 30 % of throughput, or doubling p99 plus 5 ms.
 */
const TOLERANCE = { throughput: 0.7, p99Factor: 2, p99PlusMs: 5 };

/**
 * The reference, per run: the same app with a healthy backend (a receiver of its own), started
 * and warmed up alongside the faulty one. Their load slices alternate, so both are measured at the
 * same age (a fresh app's p99 is several times a warm one's: JIT, heap sizing) on the same machine
 * (other work on a shared 2-core box comes and goes; a reference measured minutes earlier would
 * not be a fair one).
 */
const figures: Record<string, unknown>[] = [];

const appEnv = (ingest: string, traces: string) => ({
  PYROSCOPE_SERVER_ADDRESS: ingest,
  OTEL_EXPORTER_OTLP_ENDPOINT: traces,
  PYROSCOPE_FLUSH_INTERVAL_MS: String(WINDOW_MS),
  PYRO_RUN_UPLOAD_TIMEOUT_MS: String(UPLOAD_TIMEOUT_MS),
  // A span batch every 3 s: with a profile upload every second, the 32-request bound holds ~24 s
  // of outage and backoff.
  OTEL_BSP_SCHEDULE_DELAY: '3000',
  PYROSCOPE_AUTH_TOKEN: TOKEN,
  OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${OTLP_TOKEN}`,
});

after(() => {
  recordFigures('backend-faults.jsonl', { runs: figures });
});

/** Load on the faulty app and on the healthy one in alternating slices (F H H F F H …, so neither always goes first); the figures of each. */
async function measurePaired(faulty: RunningApp, healthy: RunningApp): Promise<{ faulty: LoadResult; healthy: LoadResult }> {
  const a: LoadResult[] = [];
  const b: LoadResult[] = [];
  for (let i = 0; i < SLICES; i++) {
    const order: [RunningApp, LoadResult[]][] =
      i % 2 === 0
        ? [
            [faulty, a],
            [healthy, b],
          ]
        : [
            [healthy, b],
            [faulty, a],
          ];
    for (const [app, into] of order) into.push(await steadyLoad(app.base, { durationMs: SLICE_MS }));
  }
  return { faulty: mergeLoads(a), healthy: mergeLoads(b) };
}

function withinTolerance(run: LoadResult, reference: LoadResult): boolean {
  return run.throughput >= TOLERANCE.throughput * reference.throughput && run.p99 <= TOLERANCE.p99Factor * reference.p99 + TOLERANCE.p99PlusMs;
}

const summary = (r: LoadResult) => ({ requests: r.requests, throughput: round(r.throughput), p50: round(r.p50), p99: round(r.p99), max: round(r.max) });
const ingestsOf = (receivers: Receiver[]): IngestRecord[] => receivers.flatMap((r) => r.ingests);
const spansOf = (receivers: Receiver[]): DecodedSpan[] => receivers.flatMap((r) => r.spans);

/**
 * Resolves with `check()` once it is truthy. It is re-run whenever one of the live receivers
 * records something; the set of receivers is looked at again at least every second (healing may
 * bring a new one). Bounded by `timeoutMs`.
 */
async function waitAcross<T>(live: () => Receiver[], check: () => T, timeoutMs: number, description: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    const left = deadline - Date.now();
    const receivers = live();
    if (left <= 0 || receivers.length === 0) throw new Error(`timed out after ${timeoutMs} ms: ${description}`);
    await Promise.race(receivers.map((r) => r.waitFor(check, { timeoutMs: Math.min(left, 1000) }).catch(() => undefined)));
  }
}

async function scenario(t: TestContext, fault: Fault, targets: readonly Target[]): Promise<void> {
  const receiver = await startReceiver();
  const armed = await fault.prepare(receiver, targets);
  const faulty = (target: Target) => targets.includes(target);
  const sinksFor = (target: Target) => (faulty(target) ? armed.sinks() : [receiver]);
  const liveFor = (target: Target) => (faulty(target) ? (armed.live ?? armed.sinks)() : [receiver]);
  const referenceReceiver = await startReceiver();
  let app: RunningApp | undefined;
  let reference: RunningApp | undefined;
  try {
    [app, reference] = await Promise.all([
      startApp({
        nodeArgs: armed.app?.nodeArgs,
        env: { ...appEnv(faulty('ingest') ? armed.url : receiver.url, faulty('traces') ? armed.url : receiver.url), ...armed.app?.env },
      }),
      startApp({ env: appEnv(referenceReceiver.url, referenceReceiver.url) }),
    ]);
    // Both warmed up together, so they are measured at the same age.
    const [warm] = await Promise.all([steadyLoad(app.base, { durationMs: WARM_MS }), steadyLoad(reference.base, { durationMs: WARM_MS })]);
    const faultFrom = Date.now();
    await armed.arm?.();
    let paired = await measurePaired(app, reference);
    let rounds = 1;
    if (!withinTolerance(paired.faulty, paired.healthy)) {
      // A p99 of ~200 requests is their 2nd-worst: one scheduler hiccup on a shared box decides
      // it. Before concluding, double the sample (the fault still active) and judge all of it.
      const more = await measurePaired(app, reference);
      paired = { faulty: mergeLoads([paired.faulty, more.faulty]), healthy: mergeLoads([paired.healthy, more.healthy]) };
      rounds = 2;
    }
    const measured = paired.faulty;
    const healthy = paired.healthy;
    const faultUntil = Date.now();
    const seqs = [...warm.seqs, ...measured.seqs];

    // The healthy pipeline did not wait for the broken one: what was made during the fault arrived before it ended.
    if (!faulty('traces')) {
      const early = measured.seqs.slice(0, Math.ceil(measured.seqs.length / 4));
      const spans = workSpans(receiver.spans);
      assert.deepEqual(
        early.filter((seq) => !spans.has(seq)),
        [],
        'spans kept flowing while /ingest was down',
      );
    }
    if (!faulty('ingest')) {
      assert.ok(windowChain(receiver.ingests).until >= faultFrom + WINDOW_MS, 'profiles kept flowing while OTLP was down');
    }

    let recoveredMs: number | undefined;
    if (armed.heal) {
      const healedAt = Date.now();
      await armed.heal();
      const ingestSinks = () => sinksFor('ingest');
      const traceSinks = () => sinksFor('traces');
      const ingestLive = () => liveFor('ingest');
      const traceLive = () => liveFor('traces');
      if (fault.accepted) {
        // Taken and thrown away by the backend: each window was offered once, never again (the
        // CPU and wall uploads of a window share the query string).
        const offered = new Map<string, number>();
        for (const r of receiver.requests) if (r.endpoint === 'ingest' && r.outcome === 'injected') offered.set(r.query, (offered.get(r.query) ?? 0) + 1);
        if (faulty('ingest')) assert.ok(offered.size >= 2, `windows were offered during the fault: ${offered.size}`);
        assert.ok(
          [...offered.values()].every((n) => n <= 2),
          'a window accepted with 200 was sent again',
        );
        if (faulty('traces'))
          assert.ok(
            receiver.requests.some((r) => r.endpoint === 'traces' && r.outcome === 'injected'),
            'span batches were offered during the fault',
          );
        await waitAcross(
          ingestLive,
          () => windowChain(ingestsOf(ingestSinks()).filter((i) => i.from >= healedAt - WINDOW_MS)).windows > 0,
          RECOVERY_MS,
          'windows after the fault are stored',
        );
        // Nothing of the fault's time comes back, but new spans flow again.
        const later = await steadyLoad(app.base, { durationMs: 300 });
        await waitAcross(
          traceLive,
          () => later.seqs.every((seq) => workSpans(spansOf(traceSinks())).has(seq)),
          RECOVERY_MS,
          'spans of requests after the fault arrive',
        );
      } else {
        // Everything queued during the outage arrives: the window chain has no gap from the first
        // window (cut before the app listened) to past the fault, and every request has its span.
        await waitAcross(
          ingestLive,
          () => {
            const chain = windowChain(ingestsOf(ingestSinks()));
            return chain.from <= app!.listeningAt && chain.until >= faultUntil && chain.gap === undefined;
          },
          RECOVERY_MS,
          'windows queued during the outage arrive, without a gap',
        ).catch((error: Error) => {
          throw new Error(
            `${error.message}\nchain ${JSON.stringify(windowChain(ingestsOf(ingestSinks())))}; listening at ${app!.listeningAt}, fault ${faultFrom}–${faultUntil}\n${app!.child.stderr}`,
          );
        });
        await waitAcross(
          traceLive,
          () => seqs.every((seq) => workSpans(spansOf(traceSinks())).has(seq)),
          RECOVERY_MS,
          'every request of the outage has its span',
        );
        recoveredMs = Date.now() - healedAt;
        assert.equal(windowChain(ingestsOf(ingestSinks())).duplicates, 0, 'no window arrives twice');
        const spanIds = spansOf(traceSinks()).map((s) => s.spanId);
        assert.equal(new Set(spanIds).size, spanIds.length, 'no span arrives twice');
      }
    }

    const [exit, referenceExit] = await Promise.all([stop(app), stop(reference)]);
    assert.deepEqual(warnings(reference.child.stderr), [], 'the healthy reference had nothing to warn about');
    assert.equal(referenceExit.signal, 'SIGTERM');
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: null, signal: 'SIGTERM' }, app.child.stderr);
    assert.ok(exit.ms < SHUTDOWN_MS + SHUTDOWN_SLACK_MS, `SIGTERM took ${exit.ms} ms with a ${SHUTDOWN_MS} ms deadline`);
    armed.verify?.(app.child.stderr);

    // The healthy pipeline delivered everything, the fault healed or not: every request's span,
    // every profile window from the first one to past the fault, each once.
    if (!faulty('traces')) {
      const spans = workSpans(receiver.spans);
      assert.deepEqual(
        seqs.filter((seq) => !spans.has(seq)),
        [],
        'every span reached the healthy OTLP endpoint',
      );
    }
    if (!faulty('ingest')) {
      const chain = windowChain(receiver.ingests);
      assert.ok(
        chain.from <= app.listeningAt && chain.until >= faultUntil && chain.gap === undefined && chain.duplicates === 0,
        `every window reached the healthy /ingest: ${JSON.stringify(chain)}`,
      );
    }

    // One warning per failing pipeline, naming its endpoint; none for the healthy one; no secret anywhere.
    const stderr = app.child.stderr;
    for (const [target, kind, path] of [
      ['ingest', 'profiles', '/ingest'],
      ['traces', 'spans', '/v1/traces'],
    ] as const) {
      const lines = uploadWarnings(stderr, kind);
      if (!faulty(target) || fault.warning === undefined) {
        assert.deepEqual(lines, [], `no ${kind} warning expected:\n${stderr}`);
        continue;
      }
      assert.equal(lines.length, 1, `one ${kind} warning:\n${stderr}`);
      assert.match(lines[0]!, fault.warning);
      assert.ok(lines[0]!.includes(`${armed.url}${path}`), `the warning names the endpoint ${armed.url}${path}: ${lines[0]}`);
    }
    const others = warnings(stderr).filter(
      (line) => !/^pyro-run: warning: (profiles|spans) upload/.test(line) && !(armed.heal === undefined && /final flush: \d+ of \d+ uploads/.test(line)),
    );
    assert.deepEqual(others, [], 'no other warnings (nothing dropped, nothing left undelivered after a recovery)');
    for (const secret of [TOKEN, OTLP_TOKEN]) assert.ok(!stderr.includes(secret) && !app.child.stdout.includes(secret), `a secret leaked:\n${stderr}`);

    // The app did not notice.
    const ok = withinTolerance(measured, healthy);
    const ratio = measured.throughput / healthy.throughput;
    t.diagnostic(
      `${fault.name} → ${targets.join('+')}: ${measured.requests} requests, ${round(measured.throughput)} req/s (${round(ratio * 100)} % of healthy ${round(healthy.throughput)}), ` +
        `p99 ${round(measured.p99)} ms (healthy ${round(healthy.p99)} ms), SIGTERM → exit ${exit.ms} ms` +
        (recoveredMs !== undefined ? `, backlog delivered ${recoveredMs} ms after recovery` : '') +
        (rounds > 1 ? ' (two measurement rounds)' : ''),
    );
    figures.push({
      fault: fault.name,
      targets,
      ...summary(measured),
      throughputRatio: round(ratio, 3),
      healthyThroughput: round(healthy.throughput),
      healthyP99: round(healthy.p99),
      shutdownMs: exit.ms,
      recoveredMs,
      rounds,
    });
    assert.ok(
      ok,
      `the app noticed: ${round(measured.throughput)} req/s vs ${round(healthy.throughput)} healthy (needs ≥ ${TOLERANCE.throughput * 100} %), p99 ${round(measured.p99)} ms vs ${round(healthy.p99)} ms (needs ≤ ${TOLERANCE.p99Factor}× + ${TOLERANCE.p99PlusMs} ms)`,
    );
  } finally {
    for (const child of [app?.child, reference?.child])
      if (child && child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
    await receiver.close();
    await referenceReceiver.close();
    await armed.cleanup?.();
  }
}

/** Every fault × every set of targets, in the order of FAULTS. */
const RUNS = Object.values(FAULTS).flatMap((fault) => TARGET_SETS.map((targets) => ({ fault, targets })));

const targetName = (target: Target) => (target === 'ingest' ? 'Pyroscope /ingest' : 'OTLP');
for (const { fault, targets } of RUNS) {
  test(
    `${fault.name} on ${targets.map(targetName).join(' and ')}: the app does not notice, nothing queued is lost`,
    { skip: fault.unavailable ?? false },
    (t) => scenario(t, fault, targets),
  );
}
