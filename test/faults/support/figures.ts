/**
 * Figures the fault tests measure, written as JSON lines to test-artifacts/faults/ so
 * docs/reliability.md can quote the numbers of a real run (the files are not committed).
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../support/child.js';

const DIR = path.join(repoRoot, 'test-artifacts', 'faults');

export function recordFigures(file: string, figures: Record<string, unknown>): void {
  try {
    mkdirSync(DIR, { recursive: true });
    appendFileSync(path.join(DIR, file), `${JSON.stringify({ at: new Date().toISOString(), ...figures })}\n`);
  } catch {
    // Figures are a by-product: a read-only checkout must not fail the test.
  }
}

export const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;
