import path from 'node:path';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Logger } from '../../log.js';
import { SPANS_DIR, spanFileName } from '../../recording.js';
import { otlpJsonTraceSerializer } from '../../vendor.js';
import { writeFileAtomicSync } from '../../util/atomic-file.js';
import type { RunCaps } from './run-caps.js';
import type { RunManifest } from './run-manifest.js';

/**
 * Spans per line of a span file (one OTLP/JSON request each, as the collector's file exporter
 * writes them): a reader takes a file line by line, and the final flush's file can hold a whole
 * run's late spans.
 */
const SPANS_PER_LINE = 512;
const NEWLINE = Buffer.from('\n');
/** Less room than this left in the spans' share: no span file fits, none is tried. */
const MIN_SPAN_ROOM = 1024;

/**
 * Where to split a batch of kept spans (SpanKeeper writes each local trace's spans with its root
 * last): after the local root nearest the middle, else in the middle; 0 for a single span.
 */
export function splitPoint(batch: readonly ReadableSpan[]): number {
  if (batch.length < 2) return 0;
  const middle = batch.length / 2;
  let best = 0;
  batch.forEach((span, i) => {
    const parent = span.parentSpanContext;
    const isRoot = parent === undefined || parent.isRemote === true;
    if (isRoot && i + 1 < batch.length && (best === 0 || Math.abs(i + 1 - middle) < Math.abs(best - middle))) best = i + 1;
  });
  return best || Math.floor(middle);
}

/** Spans as the lines of a span file, SPANS_PER_LINE a line, without the last newline; undefined when they do not serialize. */
function serialize(spans: ReadableSpan[]): Uint8Array | undefined {
  const parts: Uint8Array[] = [];
  for (let at = 0; at < spans.length; at += SPANS_PER_LINE) {
    const line = otlpJsonTraceSerializer().serializeRequest(spans.slice(at, at + SPANS_PER_LINE));
    if (line === undefined) return undefined;
    if (parts.length > 0) parts.push(NEWLINE);
    parts.push(line);
  }
  return Buffer.concat(parts);
}

/**
 * The run's span files: each batch of kept spans one file of OTLP/JSON lines, counted in run.json
 * (which the caller writes), within the spans' room (disk-budget.ts spanRoom). A batch that does
 * not fit is split between two local traces and each half tried; what still does not fit is
 * dropped, counted, said once.
 */
export class SpanFiles {
  private seq = 0;
  /** What the span files hold. */
  private bytes = 0;

  constructor(
    private readonly dir: string,
    private readonly manifest: RunManifest,
    private readonly caps: RunCaps,
    private readonly log: Logger,
  ) {}

  write(batch: ReadableSpan[]): void {
    if (batch.length === 0) return;
    const { counts } = this.manifest;
    const { left, limit } = this.caps.forSpans(this.bytes);
    // Without room for any span file, spans are counted without being serialized first.
    const body = left < MIN_SPAN_ROOM ? undefined : serialize(batch);
    if (body === undefined && left >= MIN_SPAN_ROOM) return;
    const bytes = body === undefined ? Number.POSITIVE_INFINITY : body.byteLength + 1;
    const room = bytes > left ? limit : this.caps.fits(bytes);
    if (room !== true || body === undefined) {
      // What fits goes: the batch is split between two local traces and each half tried.
      const at = body === undefined ? 0 : splitPoint(batch);
      if (at > 0) {
        this.write(batch.slice(0, at));
        this.write(batch.slice(at));
        return;
      }
      counts.droppedSpans += batch.length;
      this.log.warnOnce(
        'cap-spans',
        `the recording reached ${room === true ? limit : room}; further span details are not recorded (counted in run.json; every request is still counted in the endpoint totals, and profiles keep their room)`,
      );
      return;
    }
    try {
      writeFileAtomicSync(path.join(this.dir, SPANS_DIR, spanFileName(++this.seq)), Buffer.concat([body, NEWLINE]));
    } catch (error) {
      counts.droppedSpans += batch.length;
      throw error;
    }
    counts.spanFiles++;
    counts.spans += batch.length;
    counts.bytes += bytes;
    this.bytes += bytes;
  }
}
