// Interleaved rounds: A B C D E, A B C D E, … so that drift on the machine (thermal, page cache,
// a neighbour's burst) spreads over every contender instead of landing on whichever ran last.

/**
 * Calls `measure(item, round)` for every item in every round, in order, and returns the results
 * grouped by item key: { [key(item)]: [result of round 0, round 1, …] }.
 */
export async function interleave(rounds, items, key, measure, progress = () => undefined) {
  const out = {};
  for (let round = 0; round < rounds; round++) {
    for (const item of items) {
      progress(`round ${round + 1}/${rounds}: ${key(item)}`);
      const result = await measure(item, round);
      (out[key(item)] ??= []).push(result);
    }
  }
  return out;
}
