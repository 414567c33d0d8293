/** Each distinct value once, numbered in the order first met: its number by value, its value by number. */
export class Interner<T> {
  readonly values: T[] = [];
  private readonly ids = new Map<T, number>();

  /** The value's number, given it now if it is new. */
  id(value: T): number {
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.values.length;
      this.values.push(value);
      this.ids.set(value, id);
    }
    return id;
  }
}
