import { addDuration } from '../../util/duration-histogram.js';
import type { EndpointTotal } from '../../recording.js';
import { spanNameShapes } from '../../span-link/span-name-shape.js';

/** Distinct endpoints counted one by one; the rest share OTHER_ENDPOINT, so that span names the shaping cannot fold cannot grow the manifest without end. */
export const MAX_ENDPOINTS = 500;
export const OTHER_ENDPOINT = '(other endpoints)';

/** OTLP's SpanKind is the API's plus one (OTLP keeps 0 for "unspecified"). */
export const otlpKind = (apiKind: number): number => apiKind + 1;

/** Local roots by name and kind, every one counted (recording.ts EndpointTotal). */
export class EndpointTotals {
  private readonly byKey = new Map<string, EndpointTotal>();

  /** Counts one local root under its name's shape (`process order {id}`, as its samples' span_name); returns its endpoint's totals. */
  add(spanName: string, kind: number, durationNs: number, error: boolean): EndpointTotal {
    let name = spanNameShapes.of(spanName);
    let key = `${kind} ${name}`;
    let total = this.byKey.get(key);
    if (total === undefined && this.byKey.size >= MAX_ENDPOINTS) {
      key = `${kind} ${OTHER_ENDPOINT}`;
      total = this.byKey.get(key);
      name = OTHER_ENDPOINT;
    }
    if (total === undefined) this.byKey.set(key, (total = { name, kind, count: 0, errors: 0, totalNs: 0, maxNs: 0, histogram: {} }));
    total.count++;
    if (error) total.errors++;
    total.totalNs += durationNs;
    if (durationNs > total.maxNs) total.maxNs = durationNs;
    addDuration(total.histogram, durationNs);
    return total;
  }

  list(): EndpointTotal[] {
    return [...this.byKey.values()];
  }
}
