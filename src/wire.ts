/**
 * Names that cross the wire. Each one is matched by Grafana, Pyroscope or Tempo somewhere else,
 * so they live here once.
 */

/** pprof sample label: the 16-hex span ID of the (local-root) span that ran the sample. Pyroscope keeps it per sample only when it is exactly 16 hex chars (grafana/pyroscope pkg/pprof/pprof.go). */
export const LABEL_SPAN_ID = 'span_id';
/** pprof sample label: the 32-hex trace ID. */
export const LABEL_TRACE_ID = 'trace_id';
/** pprof sample label: the span's name. Pyroscope turns it into a series label, so it must stay low-cardinality. */
export const LABEL_SPAN_NAME = 'span_name';
/**
 * pprof sample label: the thread that ran the sample: `main`, a worker's `name` option, else
 * `worker <threadId>`. Pyroscope makes it a series label, as for the threads of other runtimes'
 * profilers (pyroscope-rs `thread_name`).
 */
export const LABEL_THREAD_NAME = 'thread_name';
/** The main thread's `thread_name`. */
export const MAIN_THREAD_NAME = 'main';
/**
 * Pyroscope's default bound on a label value, in bytes (pkg/validation: max_label_value_length); a
 * label over it rejects the whole profile — every other request's samples in the window with it.
 */
export const MAX_LABEL_VALUE_BYTES = 2048;
/** Span attribute Grafana's Tempo data source reads to find the span's profile (grafana/otel-profiling-go). */
export const ATTR_PROFILE_ID = 'pyroscope.profile.id';
/** OpenTelemetry HTTP semantic conventions (v1.23+) a local recording's report reads from a request's span. */
export const ATTR_HTTP_ROUTE = 'http.route';
export const ATTR_URL_PATH = 'url.path';
export const ATTR_HTTP_STATUS_CODE = 'http.response.status_code';
export const ATTR_HTTP_METHOD = 'http.request.method';

/** `spyName` query parameter the Pyroscope Node SDK sends. */
export const SPY_NAME = 'nodespy';
/**
 * Series label Pyroscope files a profile under; Grafana's span-to-profile link matches it against the
 * span's `service.name`. Sent in `/ingest`'s `name` it takes the place of the app name, on Pyroscope
 * 1.13 and later (pkg/og/convert/pprof/profile.go createLabels, grafana/pyroscope#3951).
 */
export const LABEL_SERVICE_NAME = 'service_name';
export const INGEST_PATH = '/ingest';

/** Sample/period types of the two pprofs a window yields; Pyroscope derives the metric name from them. */
export const SAMPLE_TYPE_COUNT = { type: 'samples', unit: 'count' } as const;
export const SAMPLE_TYPE_CPU = { type: 'cpu', unit: 'nanoseconds' } as const;
export const SAMPLE_TYPE_WALL = { type: 'wall', unit: 'nanoseconds' } as const;

/**
 * The span event a blocked event loop leaves on the local-root span whose code held it
 * (docs/event-loop-blocks.md), with its attributes: how long the loop was held and how long of it
 * the process ran, the threshold it
 * crossed, how many profile samples the stall holds and how many of them were this span's, the
 * heaviest stack (leaf first, one frame a line) and the innermost frame of the app's own code on
 * it, under OpenTelemetry's `code.*` attributes (semantic conventions before 1.30 named them so;
 * Tempo shows any attribute).
 */
export const EVENT_LOOP_BLOCKED = 'pyro-run.event_loop.blocked';
export const ATTR_BLOCK_DURATION_MS = 'pyro-run.block.duration_ms';
export const ATTR_BLOCK_THRESHOLD_MS = 'pyro-run.block.threshold_ms';
export const ATTR_BLOCK_RAN_MS = 'pyro-run.block.ran_ms';
export const ATTR_BLOCK_SAMPLES = 'pyro-run.block.samples';
export const ATTR_BLOCK_SPAN_SAMPLES = 'pyro-run.block.span_samples';
export const ATTR_BLOCK_STACK = 'pyro-run.block.stack';
export const ATTR_CODE_FUNCTION = 'code.function';
export const ATTR_CODE_FILEPATH = 'code.filepath';
export const ATTR_CODE_LINENO = 'code.lineno';
