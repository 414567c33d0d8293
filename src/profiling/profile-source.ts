import type { WindowPart } from './profile-window.js';

/** A sampler cut into windows: what it recorded since the last cut becomes one part of the window. */
export interface ProfileSource {
  start(): void;
  /** Takes what was recorded since the last cut; with `last`, recording stops for good. */
  cut(last: boolean): WindowPart | undefined;
}
