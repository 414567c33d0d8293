/**
 * A span name with the parts that name one instance of something — an order number, a UUID, a
 * hash, an e-mail address — replaced by placeholders: `process order 81234` → `process order {id}`.
 * Pyroscope makes `span_name` a series label (its default `max_global_series_per_tenant` is 5 000
 * active series, after which it refuses the tenant's profiles), and the local report groups
 * endpoints by it: the shape of a name is what both need. The span itself keeps its name.
 *
 * The rules, applied in this order so that a longer form is not read as its parts:
 * - e-mail addresses → `{email}`;
 * - UUIDs (8-4-4-4-12 hex digits) → `{uuid}`;
 * - words of 8 or more hex digits with a digit and a letter among them (hashes, trace and object
 *   IDs) → `{hex}`;
 * - words of 16 or more letters and digits with a letter and at least 2 digits (base64url, nanoid,
 *   ULID) → `{id}`;
 * - numbers standing on their own (not glued to a letter or a digit, as in `v2`, `h264` or `1.2`
 *   after `v`) → `{id}`.
 * Idempotent: a shaped name is its own shape.
 */

const EMAIL = /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/gu;
const UUID = /(?<![\p{L}\p{N}])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![\p{L}\p{N}])/giu;
/** A word of letters and digits: a candidate for the hex and token rules, checked in code (no backtracking). */
const WORD = /(?<![\p{L}\p{N}])[\p{L}\p{N}]{8,}(?![\p{L}\p{N}])/gu;
const ALL_HEX = /^[0-9a-f]+$/i;
const HEX_LETTER = /[a-f]/i;
const DIGIT = /\p{N}/gu;
const LETTER = /\p{L}/u;
/** Not after a letter or digit, nor after a `.` that follows one (`v1.2`, `3.14`'s tail). */
const NUMBER = /(?<![\p{L}\p{N}])(?<![\p{L}\p{N}]\.)\p{N}+(?:[.,]\p{N}+)*(?![\p{L}\p{N}])/gu;
/** Whether any rule can apply: a digit or an `@` (the hex and token rules need a digit too). */
const MAY_HOLD_ID = /[\p{N}@]/u;

/**
 * Past this many characters a name is cut (with `…`) before it is shaped: more than a label value
 * holds (MAX_LABEL_VALUE_BYTES), and it bounds the work on a name the app made huge.
 */
const MAX_SHAPED_LENGTH = 4096;

/** `name` with its ID-like parts replaced by placeholders (see above). */
export function spanNameShape(name: string): string {
  if (!MAY_HOLD_ID.test(name)) return name;
  if (name.length > MAX_SHAPED_LENGTH) {
    // Not between the halves of a surrogate pair: a label value must be valid UTF-8.
    const end = /[\uD800-\uDBFF]/.test(name[MAX_SHAPED_LENGTH - 1]!) ? MAX_SHAPED_LENGTH - 1 : MAX_SHAPED_LENGTH;
    return `${spanNameShape(name.slice(0, end))}…`;
  }
  const named = name.includes('@') ? name.replace(EMAIL, '{email}') : name;
  return named.replace(UUID, '{uuid}').replace(WORD, wordShape).replace(NUMBER, '{id}');
}

function wordShape(word: string): string {
  const digits = word.match(DIGIT)?.length ?? 0;
  if (digits === 0) return word;
  if (ALL_HEX.test(word) && HEX_LETTER.test(word)) return '{hex}';
  if (word.length >= 16 && digits >= 2 && LETTER.test(word)) return '{id}';
  return word;
}

/** Names shaped so far, so that a window's thousands of spans of a few names cost a lookup each. */
const MAX_REMEMBERED = 4096;

/** spanNameShape, remembering recent names (forgetting them all when the cache fills). */
export class SpanNameShapes {
  private readonly shapes = new Map<string, string>();

  of(name: string): string {
    let shape = this.shapes.get(name);
    if (shape === undefined) {
      if (this.shapes.size >= MAX_REMEMBERED) this.shapes.clear();
      shape = spanNameShape(name);
      this.shapes.set(name, shape);
    }
    return shape;
  }
}

/** One cache for the process: the labels of every span and the local endpoints share it. */
export const spanNameShapes = new SpanNameShapes();
