/**
 * Who blocked the event loop how often, as the summary and the page both say it: the spans' names
 * (the endpoints') by their count of blocks, most first, blocks outside any span as one. Pure, and
 * free of Node's APIs (the page's bundle imports it).
 */

/** How a block charged to no span is named. */
export const OUTSIDE_SPANS = '(outside any span)';
/** How a stall the process did not run through (stopped, throttled, waiting for a core) is named. */
export const NOT_RUNNING = '(process not running)';

/** A block as these texts read it: its span's name ('' for none), and whether the process ran through it. */
export interface ChargedBlock {
  name: string;
  notRunning: boolean;
}

/** What a block is charged to, for its reader: its span's name, else why none. */
export function chargedTo(block: ChargedBlock): string {
  return block.name || (block.notRunning ? NOT_RUNNING : OUTSIDE_SPANS);
}

/** `GET /report/:id 23, (outside any span) 1`: each name's blocks, most first; `shown` shapes a name for its reader. */
export function blockedByText(blocks: readonly ChargedBlock[], shown: (name: string) => string = (name) => name): string {
  const counts = new Map<string, number>();
  for (const block of blocks) {
    const name = chargedTo(block);
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([name, count]) => `${shown(name)} ${count}`)
    .join(', ');
}
