/**
 * What the pointer does on a flame graph, on every page that has one: a click on a frame zooms
 * into it (on an ancestor, back out to it), *Reset zoom* zooms out, hovering a frame shows the
 * page's details of it beside the pointer, and a resized window redraws.
 */
import { byTestId } from './dom.js';

export interface FlamePointer {
  /** The page's state: the tree node the graph is zoomed into (0: the root). */
  state: { zoom: number };
  /** The tooltip's content for the tree node under the pointer. */
  describe(node: number): (Node | string)[];
  redraw(): void;
}

/** The frame under the pointer, if any. */
const frameAt = (event: Event): HTMLElement | null => (event.target instanceof Element ? event.target.closest<HTMLElement>('.frame') : null);

/** Puts a shown tooltip beside the pointer, kept inside the window. */
function placeTooltip(tip: HTMLElement, event: MouseEvent): void {
  const margin = 14;
  const left = Math.min(event.clientX + margin, window.innerWidth - tip.offsetWidth - 4);
  const top = event.clientY + margin + tip.offsetHeight > window.innerHeight ? event.clientY - tip.offsetHeight - margin : event.clientY + margin;
  tip.style.left = `${Math.max(4, left)}px`;
  tip.style.top = `${Math.max(4, top)}px`;
}

/** Binds the `flame-graph`, `flame-tooltip` and `flame-reset` elements. */
export function bindFlamePointer(pointer: FlamePointer): void {
  const box = byTestId('flame-graph');
  const tip = byTestId('flame-tooltip');
  const zoomTo = (node: number) => {
    pointer.state.zoom = node;
    pointer.redraw();
  };
  box.addEventListener('click', (event) => {
    const target = frameAt(event);
    if (target) zoomTo(Number(target.dataset.node));
  });
  box.addEventListener('mousemove', (event) => {
    const target = frameAt(event);
    if (!target) {
      tip.hidden = true;
      return;
    }
    tip.replaceChildren(...pointer.describe(Number(target.dataset.node)));
    tip.hidden = false;
    placeTooltip(tip, event);
  });
  box.addEventListener('mouseleave', () => (tip.hidden = true));
  byTestId('flame-reset').addEventListener('click', () => zoomTo(0));
  let pending = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => pointer.redraw());
  });
}
