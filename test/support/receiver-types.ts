// Public record types of the test receiver (see receiver.ts), kept apart so a
// reader can see the whole surface in one place.

import type { IncomingHttpHeaders } from 'node:http';
import type { Profile } from 'pprof-format';
import type { DecodedSpan } from './otlp-types.js';
import type { SampleView } from './pprof-helpers.js';
import type { SampleTypeConfig } from './pyroscope-metric.js';

export type Endpoint = 'ingest' | 'traces' | 'profiles' | 'metrics' | 'logs';

/** One profile the Pyroscope stand-in accepted and would have stored. */
export interface IngestRecord {
  receivedAt: number;
  /** The `name` query parameter as received (after URL decoding). */
  name: string;
  /** `service_name`: the part of `name` before `{`, trimmed. */
  serviceName: string;
  /** Labels from `name` that reach storage: `__`-prefixed keys are dropped, except `__session_id__`. */
  labels: Record<string, string>;
  /** The series labels the server builds: `__name__` (metric), `__delta__`, `service_name`, `pyroscope_spy`, then `labels`. */
  seriesLabels: Record<string, string>;
  /** Unix ms, whatever unit the client sent. */
  from: number;
  until: number;
  spyName: string;
  sampleRate: number;
  units: string;
  aggregationType: string;
  bodyForm: 'raw' | 'multipart';
  /** Whether the profile bytes (not the HTTP body) were gzip-compressed. */
  gzipped: boolean;
  contentType: string;
  headers: IncomingHttpHeaders;
  profile: Profile;
  sampleTypeConfig: Record<string, SampleTypeConfig> | undefined;
  /** `__name__` the server derives from the sample types, e.g. `process_cpu`, `wall`, `memory`. */
  metricName: string;
  /** One per sample type, e.g. `process_cpu:cpu:nanoseconds:cpu:nanoseconds`. */
  profileTypeIds: string[];
  /** profile.time_nanos, or `from` when it is unset or in 1970 (fixTime in pkg/og/convert/pprof/profile.go). */
  timeNanos: bigint;
  readonly samples: SampleView[];
}

/** One series Pyroscope's OTLP profiles ingest made of an OTLP Profile (pyroscope-otlp.ts). */
export interface OtlpProfileRecord {
  receivedAt: number;
  headers: IncomingHttpHeaders;
  /** As Pyroscope builds them: __delta__, __otel__, __name__, resource and scope attributes, service_name. */
  seriesLabels: Record<string, string>;
  serviceName: string;
  /** `process_cpu`, `wall`, … */
  metricName: string;
  /** e.g. `process_cpu:cpu:nanoseconds:cpu:nanoseconds`. */
  profileTypeId: string;
  timeNanos: number;
  durationNanos: number;
  /** The period, in the period type's unit (a CPU sample's value is its count × this). */
  period: number;
  /** As converted: stacks leaf first, span_id/trace_id from the link, sample attributes as labels, the value under the sample type's name. */
  samples: SampleView[];
}

/** One OTLP/HTTP export request the collector stand-in accepted. */
export interface TraceExportRecord {
  receivedAt: number;
  headers: IncomingHttpHeaders;
  encoding: 'protobuf' | 'json';
  /** Content-Encoding of the request ('' when absent). */
  contentEncoding: string;
  spans: DecodedSpan[];
}

export type RequestOutcome =
  /** Still being handled, or held by a `delayMs` behaviour. */
  | 'pending'
  /** Decoded and stored in `ingests` / `spans`. */
  | 'stored'
  /** Accepted with 2xx but nothing stored (e.g. an empty profile, as the server does). */
  | 'ignored'
  /** Refused the way the real server would (bad name, undecodable body, ...). */
  | 'rejected'
  /** Answered with a status injected by setBehaviour. */
  | 'injected'
  /** Never answered (behaviour `hang`). */
  | 'hung'
  /** Connection destroyed without an answer (behaviour `reset`). */
  | 'reset'
  /** The client went away before the body was complete. */
  | 'aborted'
  /** No such endpoint. */
  | 'not-found';

/** Every request, in arrival order, whatever happened to it. */
export interface RequestRecord {
  seq: number;
  receivedAt: number;
  method: string;
  path: string;
  /** Raw query string without '?'. */
  query: string;
  headers: IncomingHttpHeaders;
  endpoint: Endpoint | 'other';
  bodyBytes: number;
  /** Status sent; undefined while pending and for hung/reset/aborted requests. */
  status: number | undefined;
  outcome: RequestOutcome;
  /** Error message sent back, if any. */
  error: string | undefined;
}

/** Fault injection for one endpoint; see Receiver.setBehaviour. */
export interface Behaviour {
  /** Answer with this status instead of handling the request; nothing is stored. */
  status?: number;
  /** Retry-After header to send with `status` (e.g. '2' or an HTTP date). */
  retryAfter?: string;
  /** Response body to send with `status`; default: the endpoint's usual error body. */
  body?: string;
  /** Wait this long before answering (normally or with `status`). */
  delayMs?: number;
  /** Never answer: the socket is held until the client gives up or the receiver closes. */
  hang?: boolean;
  /** Destroy the connection without answering, a network error for the client. */
  reset?: boolean;
  /**
   * Destroy the connection in the middle of a body: `'request'` as soon as the first bytes of the
   * request body arrive (nothing is stored: a network error for the client); `'response'` after
   * the request was handled normally (stored) and half of the reply was written, so the client
   * has a 2xx status line and then a broken body.
   */
  resetMidBody?: 'request' | 'response';
  /** Apply to the next `times` requests only, then handle requests normally again. */
  times?: number;
}

export interface WaitForOptions {
  /** Default 10000. */
  timeoutMs?: number;
  /** Included in the timeout error. */
  description?: string;
}
