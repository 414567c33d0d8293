/**
 * Reads a local-mode recording back the way an outside tool would: run.json, every profile file
 * decoded as gzipped pprof, every span file as OTLP/JSON lines.
 */
import assert from 'node:assert/strict';
import type { Profile } from 'pprof-format';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Manifest, RunCounts } from '../../src/recording.js';
import { decodeTraceRequestJson } from './otlp-decode-json.js';
import type { DecodedSpan } from './otlp-types.js';
import { sampleViewsOf, type SampleView } from './pprof-helpers.js';
import { decodePprof } from './pprof-wire.js';

export interface Recording {
  dir: string;
  manifest: {
    service: string;
    pyroRunVersion: string;
    pid: number;
    complete: boolean;
    endedAt: string | null;
    capBytes: number;
    counts: RunCounts;
    endpoints: Manifest['endpoints'];
  };
  /** `samples[i]` is a view of `profile.sample[i]`; the profile has what a view leaves out (file names). */
  profiles: { name: string; type: string; samples: SampleView[]; profile: Profile }[];
  spans: DecodedSpan[];
  spanFiles: string[];
  /** Bytes of the profile and span files and of blocks.json (when there is one) on disk: what run.json counts. */
  bytesOnDisk: number;
}

/** Reads the one run under `base` strictly: every file must decode, nothing unfinished may be visible. */
export function readRecording(base: string): Recording {
  const runs = readdirSync(base).filter((name) => !name.startsWith('.'));
  assert.equal(runs.length, 1, `one run folder expected in ${base}: ${runs.join(', ')}`);
  return readRun(path.join(base, runs[0]!));
}

/** Reads one run folder as readRecording does. */
export function readRun(dir: string): Recording {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'run.json'), 'utf8')) as Recording['manifest'];
  let bytesOnDisk = 0;
  const profiles = readdirSync(path.join(dir, 'profiles'))
    .filter((name) => !name.startsWith('.'))
    .map((name) => {
      const match = name.match(/^(\d{6})-(cpu|wall|heap|alloc)\.pb\.gz$/);
      assert.ok(match, `unexpected profile file ${name}`);
      const bytes = readFileSync(path.join(dir, 'profiles', name));
      bytesOnDisk += bytes.byteLength;
      const decoded = decodePprof(bytes);
      assert.ok(decoded.gzipped, `${name} is gzipped`);
      return { name, type: match[2]!, samples: sampleViewsOf(decoded.profile), profile: decoded.profile };
    });
  const spanFiles = readdirSync(path.join(dir, 'spans')).filter((name) => !name.startsWith('.'));
  const spans = spanFiles.flatMap((name) => {
    assert.match(name, /^\d{6}\.jsonl$/);
    const text = readFileSync(path.join(dir, 'spans', name), 'utf8');
    bytesOnDisk += statSync(path.join(dir, 'spans', name)).size;
    const lines = text.split('\n').filter((line) => line !== '');
    return lines.flatMap((line) => decodeTraceRequestJson(line));
  });
  const blocks = path.join(dir, 'blocks.json');
  if (existsSync(blocks)) {
    JSON.parse(readFileSync(blocks, 'utf8'));
    bytesOnDisk += statSync(blocks).size;
  }
  return { dir, manifest, profiles, spans, spanFiles, bytesOnDisk };
}
