/**
 * Who blocked the event loop how often, as the summary and the page both say it: the spans' names
 * (the endpoints') by their count of blocks, most first, blocks outside any span as one. Pure, and
 * free of Node's APIs (the page's bundle imports it).
 */

/** How a block charged to no span is named. */
export const OUTSIDE_SPANS = '(outside any span)';

/** `GET /report/:id 23, (outside any span) 1`: each name's blocks, most first; `shown` shapes a name for its reader. */
export function blockedByText(blocks: readonly { name: string }[], shown: (name: string) => string = (name) => name): string {
  const counts = new Map<string, number>();
  for (const { name } of blocks) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([name, count]) => `${shown(name || OUTSIDE_SPANS)} ${count}`)
    .join(', ');
}
