import { LABEL_SPAN_NAME } from '../wire.js';

/** The `span_name` of a window's spans past the cap. */
export const SPAN_NAME_OVERFLOW = '(other span names)';

/** How many names a warning quotes. */
const QUOTED = 5;

/**
 * Keeps the `span_name` values of each profile window to at most `max`, the overflow value
 * included, whatever names the app gives its spans (names are shaped first: span-name-shape.ts).
 * Pyroscope makes each value a series; its default limit of active series is per tenant, and past
 * it every service of the tenant has its profiles refused. Names kept in the window before keep
 * their place, so the set of series stays stable from window to window; then the names with the
 * most spans. The rest are labelled SPAN_NAME_OVERFLOW (their samples still carry their span_id,
 * so a span's own profile is whole). Warns once, naming the names that went over.
 */
export class SpanNameCap {
  private kept: ReadonlySet<string> = new Set();
  private warned = false;

  constructor(
    private readonly max: number,
    private readonly warn: (overflowed: readonly string[], max: number) => void,
  ) {}

  /** Rewrites, in place, the span_name of the label sets of one window's spans. */
  bound(labelSets: readonly Record<string, string>[]): void {
    const spans = new Map<string, number>();
    for (const labels of labelSets) {
      const name = labels[LABEL_SPAN_NAME];
      if (name !== undefined) spans.set(name, (spans.get(name) ?? 0) + 1);
    }
    if (spans.size <= this.max) {
      this.kept = new Set(spans.keys());
      return;
    }
    const before = this.kept;
    const ranked = [...spans].sort(([a, x], [b, y]) => Number(before.has(b)) - Number(before.has(a)) || y - x || (a < b ? -1 : 1));
    const kept = new Set(ranked.slice(0, this.max - 1).map(([name]) => name));
    this.kept = kept;
    for (const labels of labelSets) {
      const name = labels[LABEL_SPAN_NAME];
      if (name !== undefined && !kept.has(name)) labels[LABEL_SPAN_NAME] = SPAN_NAME_OVERFLOW;
    }
    if (!this.warned) {
      this.warned = true;
      this.warn(
        ranked.slice(this.max - 1, this.max - 1 + QUOTED).map(([name]) => name),
        this.max,
      );
    }
  }
}
