import path from 'node:path';
import { writeFileAtomicSync } from '../util/atomic-file.js';
import { nodeFs, nodeOs } from '../util/builtins.js';
import { urlCredentials } from '../util/basic-auth.js';

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

/** The spool folder: the one configured, else `pyro-run-spool` in the OS's temporary folder. */
export function spoolDirOf(configured: string | undefined): string {
  return configured ?? path.join(nodeOs().tmpdir(), 'pyro-run-spool');
}

/** The server or endpoint URL as spooled: credentials in it are secrets and stay out of the file. */
export function spoolServer(serverAddress: string): string {
  if (urlCredentials(serverAddress) === undefined) return serverAddress;
  const url = new URL(serverAddress);
  url.username = '';
  url.password = '';
  return url.toString().replace(/\/$/, '');
}

/** Writes each profile as a file of its own, whole or not at all; returns the files written. */
export function spoolSync(dir: string, entries: readonly Spooled[]): string[] {
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
export function takeSpooled(dir: string, server: string, serviceName: string): Spooled[] {
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
