import type { ProfileWindow } from '../profiling/profile-window.js';
import { SpanLabels } from './labels.js';

/**
 * Windows wait for the spans still open at their cut, for at most one flush interval. A span's
 * name can change until it ends — an HTTP span is `GET` until the router ran, then
 * `GET /users/:id` — and a window reads the names of its samples' spans when it is serialized: cut
 * while a request waited for its body, a window would label that request's samples `GET`, and the
 * next windows `GET /users/:id`, one request in two series. So a window whose samples belong to a
 * span still open is held until those spans have ended, or until the next window is cut, and then
 * goes with the best names known. One window is held at most; the final flush takes it.
 */
export class WindowHold {
  private held: { window: ProfileWindow; open: Set<SpanLabels> } | undefined;

  constructor(private readonly send: (window: ProfileWindow) => void) {}

  /** A window was cut: the one held before it goes now, this one once its open spans have ended. */
  add(window: ProfileWindow): void {
    this.release();
    const open = openSpansOf(window);
    if (open.size === 0) {
      this.send(window);
      return;
    }
    const held = { window, open };
    this.held = held;
    for (const labels of open) {
      labels.whenEnded = () => {
        held.open.delete(labels);
        // Called from the span's end, in the app's call: the window goes in a turn of its own.
        if (held.open.size === 0) setImmediate(() => this.held === held && this.release()).unref();
      };
    }
  }

  /** The window held, if any, handed over now (the final flush). */
  take(): ProfileWindow | undefined {
    const held = this.held;
    this.held = undefined;
    if (held === undefined) return undefined;
    for (const labels of held.open) labels.whenEnded = undefined;
    return held.window;
  }

  private release(): void {
    const window = this.take();
    if (window) this.send(window);
  }
}

/** The spans the window's samples belong to that have not ended. */
function openSpansOf(window: ProfileWindow): Set<SpanLabels> {
  const open = new Set<SpanLabels>();
  for (const part of window.parts) {
    for (const context of part.contexts?.() ?? []) {
      if (context instanceof SpanLabels && context.endedAtMicros === undefined) open.add(context);
    }
  }
  return open;
}
