/**
 * The text a run ends with (and `pyro-run report` prints): the heaviest endpoints by CPU in an
 * aligned table, then how much of the profile ran inside spans and, with workers, on which thread.
 * Pure: aggregates in, text out.
 */
import type { EndpointStats, RunAggregates, SampleShare, SelfTime, ThreadStats } from './aggregate.js';
import { blockedByText, chargedTo } from './blocked-by.js';
import { printable } from '../util/printable.js';
import { formatBytes, formatCount, formatDuration, formatPercent, formatTime, truncate } from './format.js';
import { memoryInUseText } from './memory-in-use.js';
import { threadShares } from './thread-shares.js';
import { waitParts } from './wait-parts.js';

export interface SummaryOptions {
  /** Endpoints listed; default 10. */
  limit?: number;
}

const DEFAULT_LIMIT = 10;
const NAME_WIDTH = 40;
const FUNCTION_WIDTH = 32;

/** `fn 62%, writev ← listArticles 20%`: the heaviest functions as shares of `whole`, a leaf outside the app's code with the app's function it ran for. */
function topSelfText(aggregates: RunAggregates, topSelf: readonly SelfTime[], whole: number): string {
  const nameOf = (frame: number) => truncate(printable(aggregates.strings[aggregates.frames.name[frame] as number] ?? ''), FUNCTION_WIDTH);
  return topSelf
    .map(({ frame, value, caller }) => `${nameOf(frame)}${caller === undefined ? '' : ` ← ${nameOf(caller)}`} ${formatPercent(value, whole)}`)
    .join(', ');
}

/** Columns padded to their widest cell: text left-aligned, numbers right-aligned; the last column is not padded. */
export function alignRows(rows: string[][], rightAligned: readonly boolean[]): string[] {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, column) => {
        if (column === row.length - 1) return cell;
        const width = widths[column] ?? 0;
        return rightAligned[column] ? cell.padStart(width) : cell.padEnd(width);
      })
      .join('  ')
      .trimEnd(),
  );
}

function shareText(label: string, share: SampleShare, unmatchedWords: string): string | undefined {
  const whole = share.inside + share.outside;
  if (whole <= 0) return undefined;
  const unmatched = share.unmatched > 0 ? ` (${formatPercent(share.unmatched, whole)} ${unmatchedWords})` : '';
  return `${formatPercent(share.inside, whole)} of ${label}${unmatched}`;
}

/**
 * `CPU time by thread: main 40%, worker 1 60%`: how the work split between the main thread and the
 * workers (by wall time when no CPU was recorded); undefined for a run without workers.
 */
function threadsText(threads: readonly ThreadStats[] | undefined): string | undefined {
  const shares = threadShares(threads);
  if (shares === undefined) return undefined;
  const parts = shares.threads.map((thread) => `${printable(thread.name)} ${formatPercent(thread.value, shares.whole)}`);
  return `${shares.measure} time by thread: ${parts.join(', ')}`;
}

const STATEMENT_WIDTH = 60;

/**
 * `  GET /api/articles  152ms: CPU 9.1ms · database 120ms (41 calls) · neither 23ms · repeated: "SELECT …" ×20 in one request`:
 * where an endpoint's mean request went (CPU spent inside a call, parsing its reply, counts in
 * both), and the call it repeats most in one request.
 */
function waitsText(endpoint: EndpointStats): string | undefined {
  const waits = endpoint.waits;
  if (waits === undefined) return undefined;
  const calls = ` (${waits.databaseCallsP50} call${waits.databaseCallsP50 === 1 ? '' : 's'})`;
  // CPU and neither always, the calls where the requests made some.
  const parts = waitParts(waits)
    .filter(({ part, ns }) => ns > 0 || part === 'cpu' || part === 'rest')
    .map(({ part, title, ns }) => `${title} ${formatDuration(ns)}${part === 'database' ? calls : ''}`);
  const { repeated } = waits;
  if (repeated !== undefined) parts.push(`repeated: "${truncate(printable(repeated.text), STATEMENT_WIDTH)}" ×${repeated.perRequestMax} in one request`);
  return `  ${truncate(printable(endpoint.name) || '(unnamed)', NAME_WIDTH)}  ${formatDuration(waits.durationNs)}: ${parts.join(' · ')}`;
}

/**
 * `Event-loop blocks of 100ms or longer: 24; the longest 256ms in GET /report/:id, in burn, at …`
 * and who blocked how often; no line when the run did not watch them.
 */
function blocksText(aggregates: RunAggregates): string[] {
  const blocks = aggregates.blocks;
  if (blocks === undefined) return [];
  const head = `Event-loop blocks of ${formatDuration(blocks.thresholdMs * 1e6)} or longer: ${blocks.count === 0 ? 'none' : formatCount(blocks.count)}`;
  const longest = blocks.list[0];
  if (longest === undefined) return [head];
  const where = longest.where < 0 ? '' : `, in ${truncate(printable(aggregates.strings[aggregates.frames.name[longest.where]!] ?? ''), FUNCTION_WIDTH)}`;
  const name = truncate(printable(chargedTo(longest)), NAME_WIDTH);
  const of = blocks.list.length < blocks.count ? ` (the ${formatCount(blocks.list.length)} longest)` : '';
  return [
    `${head}; the longest ${formatDuration(longest.durationMs * 1e6)} in ${name}${where}, at ${formatTime(longest.startMs)} UTC`,
    `  blocked by${of}: ${blockedByText(blocks.list, (text) => truncate(printable(text), NAME_WIDTH))}`,
  ];
}

/** The endpoint table and the inside-spans line, ending with a newline. */
export function formatSummary(aggregates: RunAggregates, options: SummaryOptions = {}): string {
  const limit = options.limit ?? DEFAULT_LIMIT;
  const lines: string[] = [];
  const shown = aggregates.endpoints.slice(0, limit);
  if (shown.length === 0) {
    lines.push('No local-root spans recorded.');
  } else {
    const header = ['Endpoint', 'Count', 'p50', 'p95', 'CPU', 'Top self time (share of endpoint CPU)'];
    const rows = shown.map((endpoint) => [
      truncate(printable(endpoint.name) || '(unnamed)', NAME_WIDTH),
      String(endpoint.count),
      formatDuration(endpoint.p50Ns),
      formatDuration(endpoint.p95Ns),
      formatDuration(endpoint.cpuNs),
      topSelfText(aggregates, endpoint.topSelf, endpoint.cpuNs) || '-',
    ]);
    lines.push(...alignRows([header, ...rows], [false, true, true, true, true, false]));
    const hidden = aggregates.endpoints.length - shown.length;
    if (hidden > 0) lines.push(`… and ${hidden} more endpoint${hidden === 1 ? '' : 's'}`);
    const waits = shown.map(waitsText).filter((line) => line !== undefined);
    if (waits.length > 0) lines.push('Mean request, of those kept (CPU inside a call counts in both):', ...waits);
  }
  const { unmatchedWords } = aggregates.run;
  const shares = [shareText('CPU time', aggregates.share.cpu, unmatchedWords), shareText('wall time', aggregates.share.wall, unmatchedWords)].filter(
    (text) => text !== undefined,
  );
  lines.push(shares.length === 0 ? 'Samples inside spans: no profile samples recorded' : `Samples inside spans: ${shares.join(', ')}`);
  const threads = threadsText(aggregates.threads);
  if (threads !== undefined) lines.push(threads);
  const other = aggregates.run.otherThreadsCpu;
  if (other !== undefined && other.cpuNs > 0) lines.push(other.words);
  for (const snapshot of aggregates.snapshots) {
    lines.push(memoryInUseText(snapshot, formatBytes(snapshot.total), topSelfText(aggregates, snapshot.topSelf.slice(0, 3), snapshot.total)));
  }
  lines.push(...blocksText(aggregates));
  if (aggregates.run.partial) lines.push(`Partial: ${aggregates.run.partial}`);
  return `${lines.join('\n')}\n`;
}
