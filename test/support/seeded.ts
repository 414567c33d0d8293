/**
 * A deterministic draw of 0..n-1 for generated test cases, the same sequence on every run: a
 * linear congruential generator, scaled from its high bits — its low bits repeat with a short
 * period (the lowest alternates), so `state % n` would leave some combinations never drawn.
 */
export function seededDraw(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return Math.floor((state / 2147483648) * n);
  };
}
