/** A frame of the data's frame table as the page names it: function, file and line. */
import type { SelfTime } from '../aggregate.js';
import { data } from './data.js';

/** The root (-1) is `all`. */
export const frameName = (f: number): string => (f < 0 ? 'all' : data.strings[data.frames.name[f]!]!);

export const frameFile = (f: number): string => (f < 0 ? '' : data.strings[data.frames.file[f]!]!);

/** `file:line`, the file alone when the profile has no line, '' when it has no file. */
export function frameWhere(f: number): string {
  const file = frameFile(f);
  if (!file) return '';
  const line = f < 0 ? 0 : data.frames.line[f]!;
  return line ? `${file}:${line}` : file;
}

/** A self-time entry's function, with the app's function it ran for when it is not the app's own code: `writev ← listArticles (articles.js:41)`. */
export function selfName(t: SelfTime): string {
  if (t.caller == null) return frameName(t.frame);
  const where = frameWhere(t.caller).replace(/^.*[\\/]/, '');
  return `${frameName(t.frame)} ← ${frameName(t.caller)}${where ? ` (${where})` : ''}`;
}
