import path from 'node:path';
import { writeFileAtomicSync } from '../util/atomic-file.js';
import { nodeFs, nodeOs } from '../util/builtins.js';
import { urlCredentials } from '../util/basic-auth.js';
import type { Logger } from '../log.js';

/**
 * Profiles kept on disk for a later process to send: the heap profile taken when the app hit its
 * heap limit, written synchronously as the process is about to die, and sent by the next process
 * of the same service to the same server when it starts (best effort: once handed to the sender,
 * the file is gone). A file holds what the upload needs and no secret: the next process sends it
 * with its own credentials (and, to /ingest, its own labels; an OTLP request holds its resource).
 */

const SPOOL_FORMAT = 'pyro-run-spool';
const SPOOL_VERSION = 1;
const SPOOL_FILE = /^[^.].*\.spool\.json$/;
/** Owner-only: what the app held in memory is visible in a profile's function names. */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

export interface Spooled {
  /** Where it goes, without credentials: a Pyroscope base URL (/ingest) or an OTLP profiles endpoint. */
  server: string;
  serviceName: string;
  /** Window bounds, epoch milliseconds. */
  from: number;
  until: number;
  /** The profile type (/ingest) or the piece of the window's OTLP request; also in the file's name. */
  type: string;
  /** The body as its upstream sends it: gzipped pprof (/ingest), an OTLP profiles request. */
  body: Uint8Array;
}

/** Whose kept profiles: the spool folder configured (PYRO_RUN_SPOOL_DIR), the server or endpoint they go to, the service. */
export interface SpoolPlace {
  dir: string | undefined;
  server: string;
  serviceName: string;
}

/** What an upload of a kept profile is, in its upstream's logs. */
export const KEPT_NOTE = 'kept by an earlier process when it hit its heap limit';

/** Keeps a window's bodies for the next start, as the process is about to die, and says where. */
export function keepSync(place: SpoolPlace, window: { from: number; until: number }, bodies: readonly { type: string; body: Uint8Array }[], log: Logger): void {
  const server = spoolServer(place.server);
  const { serviceName } = place;
  const files = spoolSync(
    spoolDirOf(place.dir),
    bodies.map(({ type, body }) => ({ server, serviceName, from: window.from, until: window.until, type, body })),
  );
  log.warn(`the heap profile of this moment is in ${files.join(', ')}; the next start of ${serviceName} sends it`);
}

/** Takes what earlier processes kept for `place` (spooled files removed), saying how many go out. */
export function takeKept(place: SpoolPlace, log: Logger): Spooled[] {
  const spooled = takeSpooled(spoolDirOf(place.dir), spoolServer(place.server), place.serviceName);
  if (spooled.length > 0) log.info(`sending ${spooled.length} profile${spooled.length === 1 ? '' : 's'} an earlier process kept when it hit its heap limit`);
  return spooled;
}

/** The spool folder: the one configured, else `pyro-run-spool` in the OS's temporary folder. */
function spoolDirOf(configured: string | undefined): string {
  return configured ?? path.join(nodeOs().tmpdir(), 'pyro-run-spool');
}

/** The server or endpoint URL as spooled: credentials in it are secrets and stay out of the file. */
function spoolServer(serverAddress: string): string {
  if (urlCredentials(serverAddress) === undefined) return serverAddress;
  const url = new URL(serverAddress);
  url.username = '';
  url.password = '';
  return url.toString().replace(/\/$/, '');
}

/** Writes each profile as a file of its own, whole or not at all; returns the files written. */
function spoolSync(dir: string, entries: readonly Spooled[]): string[] {
  nodeFs().mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  return entries.map((entry) => {
    const file = path.join(dir, `${entry.serviceName.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80)}-${entry.from}-${process.pid}-${entry.type}.spool.json`);
    const { body, ...rest } = entry;
    writeFileAtomicSync(file, JSON.stringify({ format: SPOOL_FORMAT, version: SPOOL_VERSION, ...rest, body: Buffer.from(body).toString('base64') }), FILE_MODE);
    return file;
  });
}

/**
 * Takes the profiles spooled for `server` and `serviceName` (their files are removed); others' are
 * left for their own service. A file that is not a spooled profile is left alone; one that is
 * but cannot be read whole is removed, so it is not tried at every start.
 */
function takeSpooled(dir: string, server: string, serviceName: string): Spooled[] {
  const fs = nodeFs();
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((name) => SPOOL_FILE.test(name));
  } catch {
    return [];
  }
  const taken: Spooled[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    let entry: Spooled | undefined;
    try {
      entry = parseSpooled(fs.readFileSync(file, 'utf8'));
    } catch {
      entry = undefined;
    }
    if (entry !== undefined && (entry.server !== server || entry.serviceName !== serviceName)) continue;
    fs.rmSync(file, { force: true });
    if (entry !== undefined) taken.push(entry);
  }
  return taken.sort((a, b) => a.from - b.from);
}

function parseSpooled(text: string): Spooled | undefined {
  const raw = JSON.parse(text) as Record<string, unknown>;
  if (raw.format !== SPOOL_FORMAT || raw.version !== SPOOL_VERSION) return undefined;
  const { server, serviceName, from, until, type, body } = raw;
  if (typeof server !== 'string' || typeof serviceName !== 'string' || typeof type !== 'string' || typeof body !== 'string') return undefined;
  if (typeof from !== 'number' || typeof until !== 'number') return undefined;
  return { server, serviceName, from, until, type, body: Buffer.from(body, 'base64') };
}
