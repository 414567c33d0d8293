/** OTEL_BSP_* / OTEL_BLRP_* batching: how much is held, in what batches, how long. */
export interface BatchSettings {
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
}

export interface BatcherOptions<T> extends BatchSettings {
  /** A full batch, or the buffer when the delay passed. */
  onBatch: (items: T[]) => void;
  onDrop: (dropped: number) => void;
  /** A batch the destination could not take: reported, never thrown into the app. */
  onError: (error: unknown) => void;
}

/**
 * Batches items (ended spans, emitted log records) with the semantics of the SDK's batch
 * processors, but hands batches to our destination instead of an exporter: they then share one
 * delivery policy with profiles, and at exit what is still buffered can be taken synchronously
 * (`takeBuffered`) for the final flush.
 *
 * A full batch is handed over in a turn of the event loop of its own (setImmediate), not inside
 * the call that filled it: that call runs in the app's code (a response's 'close', a logger's
 * write), and the hand-over (the first slice of the encoding, the send) would lengthen the app's
 * own task.
 */
export class Batcher<T> {
  private buffer: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;

  constructor(private readonly options: BatcherOptions<T>) {}

  add(item: T): void {
    if (this.buffer.length >= this.options.maxQueueSize) {
      this.options.onDrop(1);
      return;
    }
    this.buffer.push(item);
    if (this.buffer.length >= this.options.maxExportBatchSize) {
      this.immediate ??= setImmediate(() => this.flush()).unref();
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.options.scheduledDelayMillis).unref();
    }
  }

  /** Hands everything buffered to the destination, in batches. */
  flush(): void {
    for (const batch of this.takeBuffered()) {
      try {
        this.options.onBatch(batch);
      } catch (error) {
        this.options.onError(error);
      }
    }
  }

  /** Empties the buffer into batches of at most maxExportBatchSize, without sending them. */
  takeBuffered(): T[][] {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    const batches: T[][] = [];
    while (this.buffer.length > 0) batches.push(this.buffer.splice(0, this.options.maxExportBatchSize));
    return batches;
  }
}
