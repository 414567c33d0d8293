/**
 * What some tests need on the machine besides npm's packages — database servers, a browser, a
 * clock library — with the line that installs each (Debian's packages; .ci/run installs them all).
 * On a machine without one, its tests skip and say what to install; under CI=true they run and
 * fail instead, so a CI machine that lost a package cannot pass for a green build.
 */
import { existsSync } from 'node:fs';
import { CHROMIUM } from './browser.js';
import { MARIADB_SERVER } from './mariadb.js';
import { postgresBinDir } from './postgres.js';
import { RABBITMQ_SERVER } from './rabbitmq.js';
import { REDIS_SERVER } from './redis.js';

interface Requirement {
  present: () => boolean;
  install: string;
}

/** Debian's libfaketime, which a test preloads into the app's processes to step their clock. */
export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';

const REQUIREMENTS = {
  postgresql: { present: () => postgresBinDir() !== undefined, install: 'apt-get install -y postgresql' },
  mariadb: { present: () => existsSync(MARIADB_SERVER), install: 'apt-get install -y mariadb-server' },
  redis: { present: () => existsSync(REDIS_SERVER), install: 'apt-get install -y redis-server' },
  rabbitmq: { present: () => existsSync(RABBITMQ_SERVER), install: 'apt-get install -y rabbitmq-server' },
  chromium: { present: () => existsSync(CHROMIUM), install: 'apt-get install -y chromium (or CHROMIUM_PATH=<a Chromium binary>)' },
  libfaketime: { present: () => existsSync(LIBFAKETIME), install: 'apt-get install -y libfaketime' },
} satisfies Record<string, Requirement>;

export type Needed = keyof typeof REQUIREMENTS;

/**
 * node:test's `skip` for a test that needs `needs`: why it is skipped and how to install what is
 * missing, or false when all is there — and always false under CI=true.
 */
export function skipUnless(...needs: Needed[]): string | false {
  if (process.env.CI === 'true') return false;
  const missing = needs.filter((need) => !REQUIREMENTS[need].present());
  if (missing.length === 0) return false;
  return `needs ${missing.join(' and ')}: ${missing.map((need) => REQUIREMENTS[need].install).join('; ')}`;
}
