/** OTEL_BSP_* / OTEL_BLRP_* batching: how much is held, in what batches, how long. */
export interface BatchSettings {
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
  /** Items that make the first batch full; each full batch doubles it, up to maxExportBatchSize (see Batcher). */
  firstFullBatch: number;
}

/** The first batch's size when the batch size is not set (see Batcher). */
export const FIRST_FULL_BATCH = 32;

/** The first full batch for a batch size as set: FIRST_FULL_BATCH when it is not set, else that size from the start. */
export const firstFullBatch = (maxExportBatchSizeGiven: number | undefined): number => maxExportBatchSizeGiven ?? FIRST_FULL_BATCH;

export interface BatcherOptions<T> extends BatchSettings {
  /** A full batch, or the buffer when the delay passed. */
  onBatch: (items: T[]) => void;
  /** An item the full queue had no room for. */
  onDrop: (dropped: T) => void;
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
 *
 * The first batches are full sooner: at `firstFullBatch` items (FIRST_FULL_BATCH, unless the batch
 * size is set: then the set size holds from the start, as the SDK would), then twice as many each
 * time, up to maxExportBatchSize. The first batches go through cold code — the encoder still
 * interpreted on real spans — and a cold pass over a whole batch is one of the longest stretches
 * of work the agent puts in the app's event loop (docs/performance.md, "Flush pauses and
 * event-loop stalls"). Small first batches keep each cold pass short and warm the code on real
 * spans; the steady state is the SDK's batching, unchanged.
 */
export class Batcher<T> {
  private buffer: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  /** How many items make a batch full now: firstFullBatch at first, doubling to maxExportBatchSize. */
  private fullAt: number;

  constructor(private readonly options: BatcherOptions<T>) {
    this.fullAt = Math.min(options.firstFullBatch, options.maxExportBatchSize);
  }

  /** Items buffered, not yet handed over. */
  get size(): number {
    return this.buffer.length;
  }

  add(item: T): void {
    if (this.buffer.length >= this.options.maxQueueSize) {
      this.options.onDrop(item);
      return;
    }
    this.buffer.push(item);
    if (this.buffer.length >= this.fullAt) {
      this.immediate ??= this.handOver();
    } else {
      this.timer ??= this.delayed();
    }
  }

  /**
   * A full batch's hand-over: the batch that filled, and no more — spans that ended since wait for
   * the next batch or the delay, as in the SDK's batch processors (BatchSpanProcessorBase
   * `_flushOneBatch`), so a turn never works on more than one batch and a few stragglers never
   * leave as a request of their own. The next batch is full at twice the size.
   */
  private flushFull(): void {
    this.immediate = undefined;
    const batch = this.buffer.splice(0, this.fullAt);
    this.fullAt = Math.min(this.fullAt * 2, this.options.maxExportBatchSize);
    this.stopDelay();
    if (this.buffer.length >= this.fullAt) this.immediate = this.handOver();
    else if (this.buffer.length > 0) this.timer = this.delayed();
    this.send(batch);
  }

  /** Hands everything buffered to the destination, in batches. */
  flush(): void {
    for (const batch of this.takeBuffered()) this.send(batch);
  }

  /** A full batch's hand-over, in a turn of its own. */
  private handOver(): NodeJS.Immediate {
    return setImmediate(() => this.flushFull()).unref();
  }

  /** The delay after which what is buffered leaves even though no batch filled. */
  private delayed(): NodeJS.Timeout {
    return setTimeout(() => this.flush(), this.options.scheduledDelayMillis).unref();
  }

  private stopDelay(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private send(batch: T[]): void {
    try {
      this.options.onBatch(batch);
    } catch (error) {
      this.options.onError(error);
    }
  }

  /** Empties the buffer into batches of at most maxExportBatchSize, without sending them. */
  takeBuffered(): T[][] {
    this.stopDelay();
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
    const batches: T[][] = [];
    while (this.buffer.length > 0) batches.push(this.buffer.splice(0, this.options.maxExportBatchSize));
    return batches;
  }
}
