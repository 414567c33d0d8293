/** A frame of the data's frame table as the page names it: function, file and line. */
import type { SelfTime } from '../aggregate.js';
import { data } from './data.js';
import { frameNames } from './frame-names.js';

const names = frameNames(data);

/** The root (-1) is `all`. */
export const frameName = names.name;

export const frameFile = names.file;

/** `file:line`, the file alone when the profile has no line, '' when it has no file. */
export const frameWhere = names.where;

/** A self-time entry's function, with the app's function it ran for when it is not the app's own code: `writev ← listArticles (articles.js:41)`. */
export function selfName(t: SelfTime): string {
  if (t.caller == null) return frameName(t.frame);
  const where = frameWhere(t.caller).replace(/^.*[\\/]/, '');
  return `${frameName(t.frame)} ← ${frameName(t.caller)}${where ? ` (${where})` : ''}`;
}
