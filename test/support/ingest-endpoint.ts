// The Pyroscope `/ingest` endpoint, for pprof bodies: the path through
// grafana/pyroscope pkg/ingester/pyroscope/ingest_handler.go (ServeHTTP,
// parseInputMetadataFromRequest), ingest_adapter.go (parseToPprof) and
// pkg/og/convert/pprof/profile.go (ParseToPprof, createLabels).
// Status codes follow the handler: a bad `name` is 400, and so is a series that
// breaks the distributor's label limits or a profile over its size or sample limits
// (pyroscope-limits.ts); a body that fails to
// parse is not an ingestion.Error, so it is answered 422 (Unprocessable
// Entity); errors are JSON {"code","message"} (pkg/util/http/error.go
// ErrorWithStatus, code from connectgrpc.HTTPToCode). Success is 200 with an
// empty body.
// A `service_name` label in `name` is the series' service name since Pyroscope
// 1.13 (createLabels adds the app name only when there is none,
// grafana/pyroscope#3951); before, createLabels always added the app name and
// the label made a duplicate that ValidateLabels refuses with a 400.

import { goQueryGet, parseGoQuery } from './go-query.js';
import { header, type ReceivedRequest, type Reply } from './exchange.js';
import { sampleViewsOf, type SampleView } from './pprof-helpers.js';
import { decodePprof, PprofDecodeError, type DecodedPprof } from './pprof-wire.js';
import { extractIngestBody, IngestBodyError, type IngestBody } from './pyroscope-body.js';
import { profileLimitError, seriesLimitError } from './pyroscope-limits.js';
import { metricNameOf, profileTypeIdsOf } from './pyroscope-metric.js';
import { ingestedLabels, NameError, parseName, type ParsedName } from './pyroscope-name.js';
import { parseAtTime } from './pyroscope-time.js';
import type { IngestRecord } from './receiver-types.js';

/** connectgrpc.HTTPToCode (pkg/util/connectgrpc), for real and injected statuses alike. */
const CONNECT_CODE: Record<number, string> = {
  400: 'invalid_argument',
  401: 'unauthenticated',
  403: 'permission_denied',
  404: 'unimplemented',
  412: 'failed_precondition',
  413: 'invalid_argument',
  429: 'resource_exhausted',
  431: 'resource_exhausted',
  499: 'canceled',
  502: 'unavailable',
  503: 'unavailable',
  504: 'deadline_exceeded',
};

export function ingestErrorReply(status: number, message: string): Reply {
  const body = `${JSON.stringify({ code: CONNECT_CODE[status] ?? 'unknown', message })}\n`;
  return {
    status,
    headers: { 'content-type': 'application/json', 'x-content-type-options': 'nosniff' },
    body,
    error: message,
  };
}

const DEFAULT_SAMPLE_RATE = 100;

/** strconv.Atoi then uint32(); an unparsable rate falls back to the default. */
function sampleRateOf(value: string): number {
  if (value === '') return DEFAULT_SAMPLE_RATE;
  if (!/^[+-]?\d+$/.test(value)) return DEFAULT_SAMPLE_RATE;
  return Number(BigInt.asUintN(32, BigInt(value)));
}

export type IngestResult = { reply: Reply; record: IngestRecord | undefined };

/** Which Pyroscope's createLabels to model: 1.13 and later (the default), or an older one. */
export type ServiceNameLabelRule = 'replaces-app-name' | 'duplicates-app-name';

export async function handleIngest(request: ReceivedRequest, serviceNameRule: ServiceNameLabelRule = 'replaces-app-name'): Promise<IngestResult> {
  const query = parseGoQuery(request.query);
  const name = goQueryGet(query, 'name');
  let parsed: ParsedName;
  try {
    parsed = parseName(name);
  } catch (error) {
    if (error instanceof NameError) return { reply: ingestErrorReply(400, `name: ${error.message}`), record: undefined };
    throw error;
  }

  const now = request.receivedAt;
  const fromParam = goQueryGet(query, 'from');
  const untilParam = goQueryGet(query, 'until');
  const from = fromParam === '' ? now : parseAtTime(fromParam, now);
  const until = untilParam === '' ? now : parseAtTime(untilParam, now);
  const spyName = goQueryGet(query, 'spyName') || 'unknown';
  const contentType = header(request, 'content-type');

  let body: IngestBody;
  try {
    body = await extractIngestBody(goQueryGet(query, 'format'), contentType, request.body);
  } catch (error) {
    if (error instanceof IngestBodyError) return { reply: ingestErrorReply(422, `parsing IngestInput-pprof failed ${error.message}`), record: undefined };
    throw error;
  }
  if (body.kind === 'unsupported') {
    const message =
      `test receiver models only pprof ingestion (format=pprof or multipart/form-data); ` +
      `this request selects the ${body.format} format (content-type ${JSON.stringify(body.contentType)})`;
    return { reply: ingestErrorReply(501, message), record: undefined };
  }
  // ParseToPprof returns an empty push for an empty profile: 200, nothing stored.
  if (body.profileBytes.length === 0) return { reply: { status: 200, headers: {}, body: '' }, record: undefined };

  let decoded: DecodedPprof;
  try {
    decoded = decodePprof(body.profileBytes);
  } catch (error) {
    if (error instanceof PprofDecodeError) {
      return { reply: ingestErrorReply(422, `parsing IngestInput-pprof failed invalid_argument: ${error.message}`), record: undefined };
    }
    throw error;
  }

  const { profile } = decoded;
  const metricName = metricNameOf(profile, body.sampleTypeConfig);
  const labels = ingestedLabels(parsed.labels);
  const timeNanos = BigInt(profile.timeNanos);
  const seriesLabels = {
    __name__: metricName,
    __delta__: 'false',
    service_name: parsed.serviceName,
    pyroscope_spy: spyName,
    ...labels,
  };
  if (serviceNameRule === 'duplicates-app-name' && 'service_name' in labels) {
    const text = `{${Object.entries(seriesLabels)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${k}="${v}"`)
      .join(', ')}}`;
    return { reply: ingestErrorReply(400, `profile with labels '${text}' has duplicate label name: 'service_name'`), record: undefined };
  }
  const limitError = profileLimitError(seriesLabels, profile, decoded.rawSize) ?? seriesLimitError(seriesLabels, profile);
  if (limitError !== undefined) return { reply: ingestErrorReply(400, limitError), record: undefined };
  let samples: SampleView[] | undefined;
  const record: IngestRecord = {
    receivedAt: request.receivedAt,
    name,
    serviceName: seriesLabels.service_name,
    labels,
    seriesLabels,
    from,
    until,
    spyName,
    sampleRate: sampleRateOf(goQueryGet(query, 'sampleRate')),
    units: goQueryGet(query, 'units') || 'samples',
    aggregationType: goQueryGet(query, 'aggregationType') || 'sum',
    bodyForm: body.kind,
    gzipped: decoded.gzipped,
    contentType,
    headers: request.headers,
    profile,
    sampleTypeConfig: body.sampleTypeConfig,
    metricName,
    profileTypeIds: profileTypeIdsOf(profile, metricName),
    timeNanos: timeNanos === 0n || isIn1970(timeNanos) ? BigInt(from) * 1_000_000n : timeNanos,
    // Computed on first use: benchmarks push many large profiles and may never look.
    get samples(): SampleView[] {
      samples ??= sampleViewsOf(profile);
      return samples;
    },
  };
  return { reply: { status: 200, headers: {}, body: '' }, record };
}

function isIn1970(timeNanos: bigint): boolean {
  return new Date(Number(timeNanos / 1_000_000n)).getUTCFullYear() === 1970;
}
