/**
 * The report's data as html.ts embeds it in the `report-data` element (aggregate.ts's
 * RunAggregates, built with trees), and what the page derives from it once.
 */
import type { FlameTrees, KindInfo, RunAggregates } from '../aggregate.js';
import { formatBytes, formatDuration } from '../format.js';
import type { ProfileKind } from '../load-run.js';
import type { PerSpanType } from '../../profiling/profile-types.js';

export const data = JSON.parse(document.getElementById('report-data')!.textContent!) as RunAggregates & { trees: FlameTrees };

/** The profile types of the table (src/profiling/profile-types.ts), by name. */
const KINDS = Object.fromEntries(data.kinds.map((k) => [k.kind, k])) as Record<ProfileKind, KindInfo>;

export const kindLabel = (kind: ProfileKind): string => KINDS[kind].title;

/** Whether the type's samples carry their span: only those have endpoint, span and request views. */
export const isPerSpan = (kind: ProfileKind): kind is PerSpanType => KINDS[kind].perSpan;

/** The types a toggle is shown for: the per-span ones always, the others when the run holds them. */
export const shownKinds = data.kinds.filter((k) => k.perSpan || k.recorded).map((k) => k.kind);

export const formatValue = (kind: ProfileKind, value: number): string => (KINDS[kind].unit === 'bytes' ? formatBytes(value) : formatDuration(value));
