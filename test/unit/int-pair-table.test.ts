/**
 * IntPairTable: the profile window's index of stacks and sums, in typed arrays. Whatever it holds
 * must be found again exactly — after many doublings, for pairs that hash alike, at the ends of
 * the 32-bit range — and nothing it was not given may be found.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ABSENT, IntPairTable, withRoom } from '../../src/util/int-pair-table.js';

/** A deterministic stream of 31-bit integers (a linear congruential generator). */
function numbers(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return state >>> 1;
  };
}

describe('IntPairTable', () => {
  it('finds every pair added with its value, past many doublings of a small table', () => {
    const table = new IntPairTable(16);
    const reference = new Map<string, number>();
    const next = numbers(7);
    for (let value = 0; value < 50_000; value++) {
      // Small halves repeat often (stack nodes and functions are small indexes); large ones test the range.
      const first = value % 3 === 0 ? next() : next() % 64;
      const second = value % 5 === 0 ? next() : next() % 512;
      if (reference.has(`${first},${second}`)) continue;
      table.add(first, second, value);
      reference.set(`${first},${second}`, value);
    }
    assert.equal(table.size, reference.size);
    for (const [key, value] of reference) {
      const [first, second] = key.split(',').map(Number) as [number, number];
      assert.equal(table.get(first, second), value, key);
    }
  });

  it('a pair not added is not found, its halves swapped included', () => {
    const table = new IntPairTable();
    table.add(1, 2, 10);
    table.add(0, 0, 0);
    table.add(2_147_483_647, 2_147_483_647, 7);
    assert.equal(table.get(2, 1), ABSENT);
    assert.equal(table.get(1, 3), ABSENT);
    assert.equal(table.get(0, 1), ABSENT);
    assert.equal(table.get(0, 0), 0, 'the value 0 is a value, not an empty slot');
    assert.equal(table.get(2_147_483_647, 2_147_483_647), 7);
    assert.equal(table.get(1, 2), 10);
  });

  it('pairs that share a half spread over the table: a column of 20 000 in one row is found', () => {
    const table = new IntPairTable();
    for (let second = 0; second < 20_000; second++) table.add(42, second, second);
    for (let second = 0; second < 20_000; second++) assert.equal(table.get(42, second), second);
    assert.equal(table.get(43, 0), ABSENT);
  });
});

describe('withRoom', () => {
  it('keeps an array with room as it is', () => {
    const array = new Int32Array(8);
    assert.equal(withRoom(array, 8), array);
  });

  it('grows an array without room to at least twice its length, same type, its elements kept', () => {
    const floats = Float64Array.of(1.5, 2.5, 3.5);
    const grown = withRoom(floats, 4);
    assert.ok(grown instanceof Float64Array);
    assert.equal(grown.length, 6);
    assert.deepEqual([...grown.subarray(0, 3)], [1.5, 2.5, 3.5]);
    assert.equal(withRoom(new Int32Array(2), 100).length, 100, 'or to the length asked, when more');
  });
});
