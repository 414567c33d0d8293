/**
 * A worker thread's samples as it hands them to the main thread (TimeFold.toShipment), which adds
 * them to the window it is recording (TimeFold.addShipment). Typed arrays and strings only: the
 * message is a structured clone, and typed arrays cross it as one copy of their bytes.
 */

/** A span as a sample's labels name it (SampleLabels.toLabels with the trace ID): span_id, span_name, trace_id. */
export type ShippedLabels = Readonly<Record<string, string>>;

export interface FoldShipment {
  /** Each distinct function once, in parallel arrays. */
  functions: { name: string[]; scriptName: string[]; scriptId: Int32Array; line: Int32Array; column: Int32Array };
  /** The stacks, as nodes of a tree: each one's function and parent node (-1 at the top); a parent comes before its children. */
  nodeFunction: Int32Array;
  nodeParent: Int32Array;
  /** The sums, one per (node, span): samples, those that stand for wall time, CPU nanoseconds. */
  rowNode: Int32Array;
  rowSpan: Int32Array;
  rowCount: Float64Array;
  rowWallCount: Float64Array;
  rowCpu: Float64Array;
  /** The spans rows point to; the first (null) is no span. */
  spans: (ShippedLabels | null)[];
  /** Trees folded, ticks, and the time they covered (microseconds): the thread's mean sampling interval. */
  trees: number;
  hits: number;
  durationMicros: number;
  hasCpuTime: boolean;
}
