/** The two clocks a sample's time is read back through, in milliseconds. */
export interface Clocks {
  /** The monotonic clock, as `performance.now()`. */
  monotonic(): number;
  /** The system clock, as `Date.now()`: whole milliseconds since the epoch. */
  epoch(): number;
}

const SYSTEM_CLOCKS: Clocks = { monotonic: () => performance.now(), epoch: () => Date.now() };

/**
 * At most this many tries at reading the system clock between two reads of the monotonic one:
 * a read is as good as the time between its two monotonic reads is short, and the thread can be
 * preempted, or a garbage collection run, between any two of them.
 */
const READS = 5;
/** A bracket this short (milliseconds) is as good as a read gets: no further try. */
const TIGHT_MS = 0.05;

/**
 * The epoch's lead over the monotonic clock now, in microseconds: the sampler stamps samples in
 * epoch microseconds, by the system clock it reads as it stops; read again right after, this
 * takes them back to the monotonic clock, so a step of the system clock (NTP, a resumed VM)
 * between a span's end and the stop moves no sample past it.
 *
 * The system clock is read between two reads of the monotonic one, and the read with the
 * shortest bracket is kept: one pair read back to back is off by whatever ran between them (a
 * preemption, a garbage collection), and every sample of the tree with it, which moved samples
 * taken in a span's last milliseconds past its end. `Date.now()` is the epoch cut down to its
 * millisecond: the middle of that millisecond is taken, so a sample reads at most half a
 * millisecond early or late (span-link/labels.ts, CLOCK_SKEW_MICROS).
 */
export function epochOffsetMicros(clocks: Clocks = SYSTEM_CLOCKS): number {
  let narrowest = Number.POSITIVE_INFINITY;
  let offset = 0;
  for (let read = 0; read < READS && narrowest > TIGHT_MS; read++) {
    const before = clocks.monotonic();
    const epoch = clocks.epoch();
    const after = clocks.monotonic();
    if (after - before < narrowest) {
      narrowest = after - before;
      offset = (epoch + 0.5 - (before + after) / 2) * 1000;
    }
  }
  return offset;
}
