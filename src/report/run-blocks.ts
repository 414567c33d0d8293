/**
 * A recording's event-loop blocks (recording.ts BLOCKS_FILE), read and checked, their stacks folded
 * into the run's sample index so a block's flame graph names frames as the profiles do. A
 * recording without the file (made before blocks were watched, or with the watch off) has none.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { BlockSpan } from '../blocks/block.js';
import { BLOCKS_FILE } from '../recording.js';
import type { SampleIndexBuilder } from './sample-index.js';

export interface RunBlock {
  /** Epoch milliseconds. */
  startedAtMs: number;
  durationMs: number;
  /** How long of it the thread was there to hold the loop (RecordedBlock.ranMs). */
  ranMs: number;
  /** The span most of its samples belong to; undefined when most belong to none, or the process did not run through it. */
  span: BlockSpan | undefined;
  samples: number;
  spanSamples: number;
  /** Its stacks as trie nodes of the run's sample index, heaviest first. */
  stacks: { node: number; samples: number; cpuNs: number }[];
  /** Index into `stacks` of the span's heaviest; -1 when it has none. */
  heaviest: number;
}

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** What is wrong with the file's content, or its blocks (longest first). */
export function parseBlocks(raw: unknown, stackNodeOf: SampleIndexBuilder['stackNodeOf']): RunBlock[] | string {
  if (!isObject(raw) || !Array.isArray(raw.frames) || !Array.isArray(raw.blocks)) return 'not an object with frames and blocks';
  const frames: { name: string; file: string; line: number }[] = [];
  for (const [i, frame] of raw.frames.entries()) {
    if (!isObject(frame) || typeof frame.name !== 'string' || typeof frame.file !== 'string' || !isNumber(frame.line))
      return `frame ${i} is not a name, file and line`;
    frames.push({ name: frame.name, file: frame.file, line: frame.line });
  }
  const blocks: RunBlock[] = [];
  for (const [i, block] of raw.blocks.entries()) {
    const problem = `block ${i} is not a block`;
    if (!isObject(block) || typeof block.startedAt !== 'string' || !Array.isArray(block.stacks)) return problem;
    const startedAtMs = Date.parse(block.startedAt);
    const { durationMs, ranMs = durationMs, samples, spanSamples, heaviest, span } = block;
    if (!Number.isFinite(startedAtMs) || !isNumber(durationMs) || !isNumber(ranMs) || !isNumber(samples) || !isNumber(spanSamples) || !isNumber(heaviest))
      return problem;
    if (span !== null && (!isObject(span) || typeof span.spanId !== 'string' || typeof span.traceId !== 'string' || typeof span.name !== 'string'))
      return problem;
    const stacks: RunBlock['stacks'] = [];
    for (const stack of block.stacks as unknown[]) {
      if (!isObject(stack) || !Array.isArray(stack.frames) || !isNumber(stack.samples) || !isNumber(stack.cpuNs)) return problem;
      const path = (stack.frames as unknown[]).map((id) => (Number.isInteger(id) ? frames[id as number] : undefined));
      if (path.includes(undefined)) return `${problem} (a stack names a frame the file does not hold)`;
      stacks.push({ node: stackNodeOf(path as (typeof frames)[number][]), samples: stack.samples, cpuNs: stack.cpuNs });
    }
    blocks.push({
      startedAtMs,
      durationMs,
      ranMs,
      span: span === null ? undefined : { spanId: span.spanId as string, traceId: span.traceId as string, name: span.name as string },
      samples,
      spanSamples,
      stacks,
      heaviest: heaviest >= 0 && heaviest < stacks.length ? heaviest : -1,
    });
  }
  return blocks.sort((a, b) => b.durationMs - a.durationMs || a.startedAtMs - b.startedAtMs);
}

/** The run's blocks (none without the file); throws `corrupt(problem)` for a file that cannot be read. */
export function readBlocks(runDir: string, builder: SampleIndexBuilder, corrupt: (problem: string) => Error): RunBlock[] {
  const file = path.join(runDir, BLOCKS_FILE);
  if (!existsSync(file)) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw corrupt(`${file} is not valid JSON (${(error as Error).message})`);
  }
  const blocks = parseBlocks(raw, (frames) => builder.stackNodeOf(frames));
  if (typeof blocks === 'string') throw corrupt(`${file} is corrupt (${blocks})`);
  return blocks;
}
