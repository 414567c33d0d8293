/** The escapes a reader knows; other control characters as `\xNN`. */
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
/** C0 and C1 control characters and DEL: what a terminal acts on instead of showing. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * `text` with its control characters shown as escapes (`\n`, `\x1b`): span names, function names
 * and a backend's error text come from outside, and what pyro-run prints must not clear, move or
 * recolour the terminal it is printed on.
 */
export function printable(text: string): string {
  return text.replace(CONTROL, (c) => NAMED[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
