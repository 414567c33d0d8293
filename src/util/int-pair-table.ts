/** What `IntPairTable.get` returns for a pair it does not hold. */
export const ABSENT = -1;

/**
 * A map from a pair of non-negative 32-bit integers to an index, in typed arrays: open addressing
 * with linear probing, grown by doubling at half full. It holds no JavaScript object per entry, so
 * a table filled over many seconds (a profile window's stacks) gives the garbage collector nothing
 * to copy or promote: the arrays' memory is outside V8's heap.
 */
export class IntPairTable {
  private firsts: Int32Array;
  private seconds: Int32Array;
  /** The index stored for each slot, ABSENT where the slot is empty. */
  private values: Int32Array;
  private count = 0;

  constructor(initialCapacity = 1024) {
    const capacity = 2 ** Math.ceil(Math.log2(Math.max(16, initialCapacity)));
    this.firsts = new Int32Array(capacity);
    this.seconds = new Int32Array(capacity);
    this.values = new Int32Array(capacity).fill(ABSENT);
  }

  get size(): number {
    return this.count;
  }

  /** The index stored for (first, second), or ABSENT. */
  get(first: number, second: number): number {
    const { firsts, seconds, values } = this;
    const mask = values.length - 1;
    for (let slot = slotOf(first, second, mask); ; slot = (slot + 1) & mask) {
      const value = values[slot]!;
      if (value === ABSENT || (firsts[slot] === first && seconds[slot] === second)) return value;
    }
  }

  /** Stores `value` (≥ 0) for a pair not in the table yet. */
  add(first: number, second: number, value: number): void {
    if ((this.count + 1) * 2 > this.values.length) this.grow();
    this.place(first, second, value);
    this.count++;
  }

  private place(first: number, second: number, value: number): void {
    const { firsts, seconds, values } = this;
    const mask = values.length - 1;
    let slot = slotOf(first, second, mask);
    while (values[slot] !== ABSENT) slot = (slot + 1) & mask;
    firsts[slot] = first;
    seconds[slot] = second;
    values[slot] = value;
  }

  private grow(): void {
    const { firsts, seconds, values } = this;
    this.firsts = new Int32Array(values.length * 2);
    this.seconds = new Int32Array(values.length * 2);
    this.values = new Int32Array(values.length * 2).fill(ABSENT);
    for (let slot = 0; slot < values.length; slot++) {
      if (values[slot] !== ABSENT) this.place(firsts[slot]!, seconds[slot]!, values[slot]!);
    }
  }
}

/** The pair's home slot: the halves combined, then mixed so that every bit reaches the low ones the mask keeps (MurmurHash3's finalizer). */
function slotOf(first: number, second: number, mask: number): number {
  let hash = Math.imul(first, 0x9e3779b1) ^ second;
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) & mask;
}

/** A typed array with room for at least `length` elements: `array` itself, or a copy twice as long. */
export function withRoom<T extends Int32Array | Float64Array>(array: T, length: number): T {
  if (length <= array.length) return array;
  const grown = new (array.constructor as new (length: number) => T)(Math.max(length, array.length * 2));
  grown.set(array);
  return grown;
}
