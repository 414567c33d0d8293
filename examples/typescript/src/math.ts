/** The hot loop of the example: its samples should name this file, not the compiled .js. */
export function crunchNumbers(iterations: number): number {
  let total = 0;
  for (let i = 0; i < iterations; i++) {
    total += Math.sqrt(i) * Math.sin(i);
  }
  return total;
}
