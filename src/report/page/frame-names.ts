/**
 * How a page names a frame of a frame table (its function, file and line), whichever table it is:
 * a run's (the report) or two runs' merged (the diff).
 */
import type { FrameTable } from '../aggregate.js';

export interface FrameNames {
  /** The root (-1) is `all`. */
  name(f: number): string;
  file(f: number): string;
  /** `file:line`, the file alone when the profile has no line, '' when it has no file. */
  where(f: number): string;
}

export function frameNames(table: { strings: readonly string[]; frames: FrameTable }): FrameNames {
  const { strings, frames } = table;
  const name = (f: number): string => (f < 0 ? 'all' : strings[frames.name[f]!]!);
  const file = (f: number): string => (f < 0 ? '' : strings[frames.file[f]!]!);
  const where = (f: number): string => {
    const path = file(f);
    if (!path) return '';
    const line = frames.line[f]!;
    return line ? `${path}:${line}` : path;
  };
  return { name, file, where };
}
