/**
 * The diff flame graph's colour scale: a frame by the change of its time per request, after
 * against before. Red is slower, blue faster, grey within the band (the diff's minimum effect,
 * `--min-effect`, 15% by default: what a shared machine varies by between two runs of the same
 * code, docs/diff.md), the colour deeper as the change grows, deepest from ±50%. A frame only
 * the after run has is `new` (the deepest red), one only the before run has `gone` (a pale blue;
 * the page hatches both, so they read apart from a mere change). Pure: the page's bundle and the
 * tests import it.
 */

export type ChangeClass = 'slower' | 'faster' | 'same' | 'new' | 'gone';

/** The relative change from which a colour is at its deepest. */
export const FULL_CHANGE = 0.5;

const HUE = { slower: 0, faster: 215 } as const;
/** Lightness at the band's edge and at FULL_CHANGE, percent. */
const LIGHTEST = 84;
const DEEPEST = 54;
const GREY = 'hsl(220, 10%, 85%)';
const GONE = 'hsl(215, 35%, 90%)';

export interface ChangeLook {
  change: ChangeClass;
  /** (after − before) / before; null for a new frame (or none in either run). */
  relative: number | null;
  /** 0 at the band's edge (or within it) to 1 from FULL_CHANGE on. */
  strength: number;
  /** A CSS colour. */
  colour: string;
}

const shade = (hue: number, strength: number) => `hsl(${hue}, 80%, ${Math.round(LIGHTEST - (LIGHTEST - DEEPEST) * strength)}%)`;

/** The look of a frame that took `before` and `after` per request; `band`: the relative change still called the same (0.1 is ±10%). */
export function changeLook(before: number, after: number, band: number): ChangeLook {
  if (before <= 0 && after <= 0) return { change: 'same', relative: null, strength: 0, colour: GREY };
  if (before <= 0) return { change: 'new', relative: null, strength: 1, colour: shade(HUE.slower, 1) };
  const relative = (after - before) / before;
  if (after <= 0) return { change: 'gone', relative, strength: 1, colour: GONE };
  const size = Math.abs(relative);
  if (size < band) return { change: 'same', relative, strength: 0, colour: GREY };
  const strength = FULL_CHANGE > band ? Math.min(1, (size - band) / (FULL_CHANGE - band)) : 1;
  const change = relative > 0 ? 'slower' : 'faster';
  return { change, relative, strength, colour: shade(HUE[change], strength) };
}
