import path from 'node:path';
import { frameOwner } from '../../src/report/frame-owner.js';
import { repoRoot } from './child.js';

/** The built agent's folder, as a recording names it (run.json `agentDir`). */
export const AGENT_DIST = path.join(repoRoot, 'dist');

/**
 * Whether `file` (a path or a file: URL, as stack traces and profiles name files) is one of the
 * built agent's — its preloads' bundles, the vendored OpenTelemetry bundles, its compiled sources —
 * by the report's own rule (frame-owner.ts), so a test follows the build's layout.
 */
export const isAgentFile = (file: string): boolean => file !== '' && frameOwner('', file, AGENT_DIST).kind === 'agent';

/** The file a stack trace line names (`    at fn (file:line:col)` or `    at file:line:col`). */
export const fileOfStackLine = (line: string): string => /\(?([^\s()]+?):\d+:\d+\)?$/.exec(line)?.[1] ?? '';
