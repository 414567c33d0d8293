import assert from 'node:assert/strict';
import type { DecodedSpan, IngestRecord, Receiver, SampleView } from './receiver.js';
import { OtlpSpanKind, isValidSpanId, isValidTraceId } from './receiver.js';
import { spanNameShape } from '../../src/span-link/span-name-shape.js';

const PROFILE_ID_ATTRIBUTE = 'pyroscope.profile.id';
/** hot_<seq>_<where>: the fixtures' per-request functions (test/fixtures/apps/work.cjs). */
export const HOT_FRAME = /^hot_(\d+)_([a-z]+)$/;

export interface Attribution {
  /** Samples (weighted by count) in a request's hot functions. */
  total: number;
  /** …of which labelled with that request's span. */
  right: number;
  /** …labelled with another span, or unlabelled. */
  wrong: number;
  /** …of which unlabelled. */
  unlabelled: number;
  share: number;
}

/**
 * The env of an app under test that sends to `receiver`: finer sampling than the default (2 ms) so
 * an attribution share rests on hundreds of samples, 1 s windows and 200 ms span batches so the
 * data is there soon after the load.
 */
export function linkedEnv(receiver: Receiver): Record<string, string> {
  return {
    PYROSCOPE_SERVER_ADDRESS: receiver.url,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '2000',
    PYROSCOPE_FLUSH_INTERVAL_MS: '1000',
    OTEL_BSP_SCHEDULE_DELAY: '200',
  };
}

export function serverSpans(receiver: Receiver): DecodedSpan[] {
  return receiver.spans.filter((span) => span.kind === OtlpSpanKind.Server);
}

/** The request path an HTTP server span served (semconv url.path, older http.target). */
function pathOf(span: DecodedSpan): string | undefined {
  const path = span.attributes['url.path'] ?? span.attributes['http.target'];
  return typeof path === 'string' ? path.split('?')[0] : undefined;
}

/**
 * For every CPU sample that ran in a `hot_<seq>_*` function (or another function of request <seq>,
 * `frame` capturing <seq>), checks its span_id against the span of request <seq> (found by its URL
 * path): the share that carry the right span.
 */
export function attribution(
  receiver: Receiver,
  profiles: readonly { samples: readonly SampleView[] }[],
  frame: RegExp = HOT_FRAME,
  /** How many looks at the CPU a sample stands for: its `samples` count in /ingest's pprof. */
  weightOf: (sample: SampleView) => number = (sample) => sample.values.samples ?? 1,
): Attribution {
  const spanOfSeq = new Map<number, string>();
  for (const span of serverSpans(receiver)) {
    const match = pathOf(span)?.match(/^\/work\/(\d+)$/);
    if (match) spanOfSeq.set(Number(match[1]), span.spanId);
  }
  let total = 0;
  let right = 0;
  let unlabelled = 0;
  for (const profile of profiles) {
    for (const sample of profile.samples) {
      const match = sample.stack.map((name) => name.match(frame)).find((m) => m !== null);
      if (!match) continue;
      const count = weightOf(sample);
      const expected = spanOfSeq.get(Number(match[1]));
      assert.ok(expected, `no server span for request ${match[1]}`);
      total += count;
      if (sample.labels.span_id === expected) right += count;
      else if (sample.labels.span_id === undefined) unlabelled += count;
    }
  }
  return { total, right, wrong: total - right, unlabelled, share: total === 0 ? 0 : right / total };
}

export interface AttributionGoal {
  /** The per-request functions judged (default: work.cjs's hot_<seq>_*), <seq> captured. */
  frame?: RegExp;
  /** What they are, for the messages. */
  what?: string;
  /** Fewer samples than this cannot be judged (default 300). */
  minSamples?: number;
  /** The share of them that must carry their request's span_id (default 0.99). */
  minShare?: number;
}

/**
 * The attribution of per-request functions' CPU samples (above), reported as a test diagnostic:
 * by default at least 300 samples in hot_<seq>_*, ≥ 99% of them carrying the span_id of the
 * request that ran them.
 */
export function assertAttributed(t: { diagnostic(message: string): void }, receiver: Receiver, goal: AttributionGoal = {}): Attribution {
  const { frame = HOT_FRAME, what = 'hot-function', minSamples = 300, minShare = 0.99 } = goal;
  const share = attribution(receiver, cpuIngests(receiver), frame);
  t.diagnostic(`attribution ${(share.share * 100).toFixed(2)}%: ${share.right}/${share.total} ${what} CPU samples carry their request's span_id`);
  assert.ok(share.total >= minSamples, `too few ${what} CPU samples to judge: ${share.total}`);
  assert.ok(
    share.share >= minShare,
    `${what} attribution ${(share.share * 100).toFixed(2)}% (${share.wrong} of ${share.total} samples wrong: ${share.unlabelled} unlabelled, ${share.wrong - share.unlabelled} another span's)`,
  );
  return share;
}

export function cpuIngests(receiver: Receiver): IngestRecord[] {
  return receiver.ingests.filter((i) => i.metricName === 'process_cpu');
}

/**
 * The linking contract Grafana relies on:
 * - every local-root HTTP span carries pyroscope.profile.id = its own span ID;
 * - every span_id label is valid hex and names an exported span carrying that attribute, and
 *   its span_name is that span's final name (route template, not URL), by its shape (IDs folded);
 * - profiles are filed under the spans' service.name; the CPU profile lands as process_cpu with a
 *   cpu/nanoseconds period.
 * `spans`: those a collector other than the receiver took (OTLP/gRPC).
 */
export function assertLinked(receiver: Receiver, serviceName: string, spans: readonly DecodedSpan[] = receiver.spans): void {
  const servers = spans.filter((span) => span.kind === OtlpSpanKind.Server);
  assert.ok(servers.length > 0, 'no HTTP server spans were exported');
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  for (const span of servers) {
    const parent = span.parentSpanId ? byId.get(span.parentSpanId) : undefined;
    assert.equal(parent, undefined, `server span ${span.name} should be a local root`);
    assert.equal(span.attributes[PROFILE_ID_ATTRIBUTE], span.spanId, `${span.name} ${span.spanId} lacks ${PROFILE_ID_ATTRIBUTE}`);
    assert.equal(span.resource['service.name'], serviceName);
  }

  const cpu = cpuIngests(receiver);
  assert.ok(cpu.length > 0, 'no CPU profile arrived');
  assert.ok(
    receiver.ingests.some((i) => i.metricName === 'wall'),
    'no wall profile arrived',
  );
  for (const ingest of receiver.ingests) {
    assert.equal(ingest.serviceName, serviceName);
    assert.equal(ingest.spyName, 'nodespy');
    assert.ok(ingest.until >= ingest.from);
  }
  for (const ingest of cpu) {
    assert.ok(ingest.profileTypeIds.includes('process_cpu:cpu:nanoseconds:cpu:nanoseconds'), ingest.profileTypeIds.join(' '));
    const strings = ingest.profile.stringTable.strings;
    assert.equal(`${strings[Number(ingest.profile.periodType?.type)]}/${strings[Number(ingest.profile.periodType?.unit)]}`, 'cpu/nanoseconds');
  }

  let labelled = 0;
  for (const ingest of receiver.ingests) {
    for (const sample of ingest.samples) {
      const spanId = sample.labels.span_id;
      if (spanId === undefined) continue;
      labelled++;
      assert.ok(isValidSpanId(spanId), `span_id ${spanId} is not 16 lowercase hex`);
      const span = byId.get(spanId);
      assert.ok(span, `span_id ${spanId} names no exported span`);
      assert.equal(span.attributes[PROFILE_ID_ATTRIBUTE], spanId);
      // The name is read when the window is cut: a span still running then (an HTTP span has not
      // learnt its route yet) carries the name it had at that moment.
      const endedBeforeCut = span.endTimeUnixNano <= ingest.timeNanos;
      const shape = spanNameShape(span.name);
      if (endedBeforeCut) assert.equal(sample.labels.span_name, shape);
      else assert.ok(shape.startsWith(sample.labels.span_name ?? '\0'), `${sample.labels.span_name} vs ${span.name}`);
      const traceId = sample.labels.trace_id;
      if (traceId !== undefined) {
        assert.ok(isValidTraceId(traceId), `trace_id ${traceId} is not 32 hex`);
        assert.equal(traceId, span.traceId);
      }
    }
  }
  assert.ok(labelled > 0, 'no sample carries a span_id');
}
