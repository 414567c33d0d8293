/**
 * The ways a backend fails, for test/faults/backend-faults.test.ts: how each is set up against
 * the test receiver, armed, healed, and what pyro-run is expected to say about it.
 */
import { randomBytes } from 'node:crypto';
import { type Receiver, startReceiver } from '../../support/receiver.js';
import { hangingDnsUnavailable, prepareHangingDns } from './hanging-dns.js';

/** The two pipelines: profiles to Pyroscope /ingest, spans to the OTLP endpoint. */
export type Target = 'ingest' | 'traces';

/**
 * Bounds "answers after 30 s", "never answers" and a hanging resolver: each attempt gives up after
 * this. Not lower: the receivers live in the test process, and with other test files running
 * beside this one a healthy receiver can take over a second to answer.
 */
export const UPLOAD_TIMEOUT_MS = 2500;

export interface Armed {
  /** Base URL the faulty pipeline(s) are pointed at, from the start. */
  url: string;
  /** Makes the backend fail; absent when the fault is in the URL itself (active from the start). */
  arm?: () => Promise<void>;
  /** Makes the backend behave again; absent when nothing can (a name that never resolves, the wrong protocol). */
  heal?: () => Promise<void>;
  /** Every receiver that took the faulty pipelines' data (before the fault and after healing). */
  sinks: () => Receiver[];
  /** Those of them still listening, to wait on (default: all). */
  live?: () => Receiver[];
  /** What the faulty app needs started with it (a test-only preload that makes the fault). */
  app?: { nodeArgs: string[]; env: Record<string, string> };
  /** The fault's own checks, on the faulty app's stderr once it has ended. */
  verify?: (stderr: string) => void;
  cleanup?: () => Promise<void>;
}

export interface Fault {
  name: string;
  prepare(receiver: Receiver, targets: readonly Target[]): Promise<Armed>;
  /** What the one warning per failing pipeline says; undefined: nothing to warn about. */
  warning: RegExp | undefined;
  /** The backend answers 2xx during the fault (and drops what it got): nothing is redelivered. */
  accepted?: boolean;
  /** Why the fault cannot be made on this platform, if it cannot. */
  unavailable?: string | undefined;
}

function behaviourFault(name: string, behaviour: Parameters<Receiver['setBehaviour']>[1], warning: RegExp | undefined, accepted = false): Fault {
  return {
    name,
    warning,
    accepted,
    prepare: async (receiver, targets) => ({
      url: receiver.url,
      sinks: () => [receiver],
      arm: async () => {
        for (const target of targets) receiver.setBehaviour(target, behaviour);
      },
      heal: async () => {
        for (const target of targets) receiver.setBehaviour(target, undefined);
      },
    }),
  };
}

const TIMED_OUT = `no complete answer within ${UPLOAD_TIMEOUT_MS} ms`;

export const FAULTS: Record<string, Fault> = {
  refused: {
    name: 'connection refused',
    // Closing the server also resets the keep-alive connection an upload may be using right then.
    warning: /failed: (connect ECONNREFUSED|read ECONNRESET|other side closed)/,
    prepare: async () => {
      // A receiver of its own on a port of its own: closing it refuses connections, listening
      // again on the same port heals.
      const first = await startReceiver();
      const port = Number(new URL(first.url).port);
      let second: Receiver | undefined;
      return {
        url: first.url,
        arm: () => first.close(),
        heal: async () => {
          second = await startReceiver({ port });
        },
        sinks: () => [first, ...(second ? [second] : [])],
        live: () => (second ? [second] : []),
        cleanup: async () => {
          await first.close();
          await second?.close();
        },
      };
    },
  },
  dns: {
    name: 'a name that does not resolve',
    warning: /failed: .*(ENOTFOUND|EAI_AGAIN|no complete answer)/,
    prepare: async () => ({ url: 'http://pyro-run-fault.invalid:4040', sinks: () => [] }),
  },
  dnsHang: {
    name: 'a DNS resolver that never answers',
    // The attempt's own timer or undici's connect timeout (which starts before the lookup), whichever fires first.
    warning: new RegExp(`failed: (${TIMED_OUT}|Connect Timeout Error)`),
    unavailable: hangingDnsUnavailable,
    prepare: () => prepareHangingDns(),
  },
  hang: behaviourFault('accepts, never answers', { hang: true }, new RegExp(`failed: ${TIMED_OUT}`)),
  slow: behaviourFault('answers after 30 s', { delayMs: 30_000 }, new RegExp(`failed: ${TIMED_OUT}`)),
  status500: behaviourFault('500s', { status: 500 }, /failed \(http:\/\/127\.0\.0\.1:\d+\/\S+ answered 500/),
  status429: behaviourFault('429 with Retry-After: 1', { status: 429, retryAfter: '1' }, /failed \(http:\/\/127\.0\.0\.1:\d+\/\S+ answered 429/),
  reset: behaviourFault('connection reset mid-body', { resetMidBody: 'request' }, /failed: .*(other side closed|ECONNRESET|socket hang up|EPIPE)/),
  // Random bytes, binary and a megabyte long: the sender must neither choke on it nor buffer it.
  garbage: behaviourFault('200 with a garbage body', { status: 200, body: randomBytes(1 << 20).toString('latin1') }, undefined, true),
  tlsToPlain: {
    name: 'TLS to a plain-HTTP port',
    warning: /failed: .*(SSL|EPROTO|ECONNRESET|wrong version|packet length)/i,
    prepare: async (receiver) => ({ url: receiver.url.replace(/^http:/, 'https:'), sinks: () => [receiver] }),
  },
};
