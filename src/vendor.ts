import { createRequire } from 'node:module';
import type { Dispatcher } from 'undici';
import { CODE_CACHE_DIR, requireWithCodeCache } from './util/code-cache.js';

const require = createRequire(import.meta.url);

/**
 * The OpenTelemetry packages pyro-run runs inside the app, taken from the bundles that
 * `npm run build` writes to dist/vendor/ (build/vendor-bundles.ts says why). Every use goes
 * through here, so that there is one copy of each package in the process: also no second copy from
 * the ESM builds these packages ship, which an `import` from our ESM code would load.
 */
export const SHARED_PACKAGES = [
  '@opentelemetry/api',
  '@opentelemetry/context-async-hooks',
  '@opentelemetry/core',
  '@opentelemetry/instrumentation',
  '@opentelemetry/propagator-b3',
  '@opentelemetry/resources',
  '@opentelemetry/sdk-trace',
  '@opentelemetry/semantic-conventions',
] as const;

export const VENDOR_CORE_FILE = 'otel.cjs';
/** The core bundle's key for @opentelemetry/instrumentation's shimmer, patched to take the wrap guard. */
export const WRAP_GUARD_ENTRY = 'pyro-run:shimmer';
export const VENDOR_OTLP_TRACE_FILE = 'otlp-trace.cjs';
export const VENDOR_UNDICI_FILE = 'undici.cjs';
/**
 * The files of undici its bundle holds, by the key it exposes each under (a getter: the file runs at
 * the first read). undici has no `exports` map, so these paths are public to Node; its version is
 * pinned, and every upload test goes through them.
 */
export const UNDICI_PARTS = {
  Agent: 'lib/dispatcher/agent.js',
  buildConnector: 'lib/core/connect.js',
  Dispatcher: 'lib/dispatcher/dispatcher.js',
  /** The request API, as undici's index mixes it into every dispatcher. */
  request: 'lib/api/api-request.js',
  Pool: 'lib/dispatcher/pool.js',
  ProxyAgent: 'lib/dispatcher/proxy-agent.js',
  /** The CONNECT request, as undici's index mixes it into every dispatcher. */
  connect: 'lib/api/api-connect.js',
} as const;
export const instrumentationFile = (name: string): string => `instrumentation-${name}.cjs`;
/** The http instrumentation bundle's key for the package's own dist/utils.cjs (tracing/http-server-spans.ts uses it). */
export const HTTP_UTILS_ENTRY = 'pyro-run:http-utils';
/** The express instrumentation bundle's keys for the package's dist/utils.cjs and dist/internal-types.cjs (frameworks/express-layer-spans.ts). */
export const EXPRESS_UTILS_ENTRY = 'pyro-run:express-utils';
export const EXPRESS_TYPES_ENTRY = 'pyro-run:express-internal-types';
/**
 * Files of an instrumentation package that its bundle exposes beside the package's exports, by
 * bundle key: functions and markers of its own (not among its exports) that pyro-run's lighter
 * paths call, so that their spans stay the package's.
 */
export const BUNDLED_INTERNALS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  http: { [HTTP_UTILS_ENTRY]: 'dist/utils.cjs' },
  express: { [EXPRESS_UTILS_ENTRY]: 'dist/utils.cjs', [EXPRESS_TYPES_ENTRY]: 'dist/internal-types.cjs' },
};

interface Shared {
  '@opentelemetry/api': typeof import('@opentelemetry/api');
  '@opentelemetry/context-async-hooks': typeof import('@opentelemetry/context-async-hooks');
  '@opentelemetry/core': typeof import('@opentelemetry/core');
  '@opentelemetry/instrumentation': typeof import('@opentelemetry/instrumentation');
  '@opentelemetry/propagator-b3': typeof import('@opentelemetry/propagator-b3');
  '@opentelemetry/resources': typeof import('@opentelemetry/resources');
  '@opentelemetry/sdk-trace': typeof import('@opentelemetry/sdk-trace');
  [WRAP_GUARD_ENTRY]: Shimmer;
}

/** What the bundle build adds to shimmer's module (build/instrumentation-patches.ts). */
interface Shimmer {
  /** The guard (instrumentation-guard.ts), called as `guard(wrapper, original, name, instrumentationName)`. */
  setWrapGuard(guard: (...args: never[]) => unknown): void;
  /** Where an instrumentation's failed patch of a whole module is reported (it rethrows until set). */
  setPatchFailed(report: (owner: string, module: string, error: unknown) => void): void;
  /** What shapes a function an instrumentation puts in place of the app's (the `standIn` the build adds to `@opentelemetry/instrumentation`). */
  setStandIn(shape: (replacement: never, original: unknown) => unknown): void;
  /** shimmer's own: where it reports a wrap it could not do (console.error by default). */
  default(options: { logger: (message: string) => void }): void;
}

let shared: Shared | undefined;
/** dist/src/vendor.js → dist/vendor/, each bundle compiled with V8's code cache (util/code-cache.ts). */
const vendored = (file: string): unknown => requireWithCodeCache(require.resolve(`../vendor/${file}`), CODE_CACHE_DIR);
const get = <K extends keyof Shared>(pkg: K): Shared[K] => (shared ??= vendored(VENDOR_CORE_FILE) as Shared)[pkg];

export const otelApi = () => get('@opentelemetry/api');
export const otelContextAsyncHooks = () => get('@opentelemetry/context-async-hooks');
export const otelCore = () => get('@opentelemetry/core');
export const otelInstrumentation = () => get('@opentelemetry/instrumentation');
export const otelPropagatorB3 = () => get('@opentelemetry/propagator-b3');
export const otelResources = () => get('@opentelemetry/resources');
export const otelSdkTrace = () => get('@opentelemetry/sdk-trace');
export const otelShimmer = () => get(WRAP_GUARD_ENTRY);

type Transformer = typeof import('@opentelemetry/otlp-transformer');
/**
 * The OTLP/JSON trace serializer of @opentelemetry/otlp-transformer (only it: the index also loads
 * metrics and logs; protobuf is ours, export/otlp-trace-encode.ts).
 */
export const otlpJsonTraceSerializer = (): Transformer['JsonTraceSerializer'] =>
  (vendored(VENDOR_OTLP_TRACE_FILE) as Pick<Transformer, 'JsonTraceSerializer'>).JsonTraceSerializer;

type UndiciIndex = typeof import('undici');
/** The parts of undici the uploads use, from its bundle (UNDICI_PARTS says which file each is). */
export interface UndiciParts extends Pick<UndiciIndex, 'Agent' | 'buildConnector' | 'Dispatcher' | 'Pool' | 'ProxyAgent'> {
  request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
  connect: unknown;
}
export const undiciParts = (): UndiciParts => vendored(VENDOR_UNDICI_FILE) as UndiciParts;

/** The exports of `@opentelemetry/instrumentation-<name>`, from its bundle. */
export function instrumentationPackage(name: string): Record<string, unknown> {
  return vendored(instrumentationFile(name)) as Record<string, unknown>;
}
