import path from 'node:path';
import { nodeFs } from '../util/builtins.js';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import type { Env } from '../config/index.js';
import { isOwnTraffic } from '../export/transport/own-traffic.js';
import { type ExpressInternalTypes, type ExpressUtils, withLeanLayerSpans } from '../frameworks/express-layer-spans.js';
import { EXPRESS_TYPES_ENTRY, EXPRESS_UTILS_ENTRY, HTTP_UTILS_ENTRY, instrumentationPackage } from '../vendor.js';
import { type HttpUtils, withLeanServerSpans } from './http-server-spans.js';

/**
 * The instrumentations of @opentelemetry/auto-instrumentations-node, loaded only when the app can
 * use them. Its index imports all ~40 eagerly (≈470 modules, most of a second at start); here each
 * one is loaded only if a module it instruments is installed where the app can resolve it, or it
 * instruments Node itself. The env semantics are the same as getNodeAutoInstrumentations():
 * OTEL_NODE_ENABLED_INSTRUMENTATIONS (then exactly those, installed or not),
 * OTEL_NODE_DISABLED_INSTRUMENTATIONS, and fs / host-metrics off by default.
 */
interface Entry {
  /** Package suffix after `@opentelemetry/instrumentation-`, as the env vars name it. */
  name: string;
  /** Exported class. */
  className: string;
  /** Packages it instruments; empty = Node itself (always usable). */
  modules: readonly string[];
  /** Only when this holds of the env (e.g. running in AWS Lambda). */
  when?: (env: Env, context: SelectionContext) => boolean;
  /** The instrumentation's config, where pyro-run needs one (the instrumentation copies it). */
  config?: (context: SelectionContext) => object;
  /** pyro-run's subclass of the exported class, given the package's exports. */
  extend?: (Class: InstrumentationClass, exports: Record<string, unknown>) => InstrumentationClass;
}

type InstrumentationClass = new (config?: object) => Instrumentation;

export interface SelectionContext {
  /** Metrics are exported (the runtime-node instrumentation only produces metrics). */
  metrics: boolean;
  /** Log records are exported (OTEL_LOGS_EXPORTER). */
  logs: boolean;
}

/**
 * The logger instrumentations (pino, bunyan, winston) put the trace and span ids into each log
 * line, and by default also send every line as a log record: pino's stream becomes a multistream
 * whose second branch parses each line back from JSON, bunyan's loggers get a second stream. With no logs pipeline asked for
 * those records go nowhere, so the library keeps its own stream, as without the agent.
 */
const logSending = (context: SelectionContext) => ({ disableLogSending: !context.logs });

const TABLE: readonly Entry[] = [
  { name: 'amqplib', className: 'AmqplibInstrumentation', modules: ['amqplib'] },
  { name: 'aws-lambda', className: 'AwsLambdaInstrumentation', modules: [], when: (env) => Boolean(env.AWS_LAMBDA_FUNCTION_NAME || env.LAMBDA_TASK_ROOT) },
  // Today's AWS SDK v3 clients depend on @smithy/core (its client submodule) and
  // @smithy/middleware-stack, which the instrumentation hooks, and no longer on smithy-client.
  {
    name: 'aws-sdk',
    className: 'AwsInstrumentation',
    modules: ['aws-sdk', '@smithy/smithy-client', '@aws-sdk/smithy-client', '@smithy/core', '@smithy/middleware-stack'],
  },
  { name: 'bunyan', className: 'BunyanInstrumentation', modules: ['bunyan'], config: logSending },
  { name: 'cassandra-driver', className: 'CassandraDriverInstrumentation', modules: ['cassandra-driver'] },
  { name: 'connect', className: 'ConnectInstrumentation', modules: ['connect'] },
  { name: 'cucumber', className: 'CucumberInstrumentation', modules: ['@cucumber/cucumber'] },
  { name: 'dataloader', className: 'DataloaderInstrumentation', modules: ['dataloader'] },
  { name: 'dns', className: 'DnsInstrumentation', modules: [] },
  {
    name: 'express',
    className: 'ExpressInstrumentation',
    modules: ['express'],
    extend: (Class, exports) => withLeanLayerSpans(Class, exports[EXPRESS_UTILS_ENTRY] as ExpressUtils, exports[EXPRESS_TYPES_ENTRY] as ExpressInternalTypes),
  },
  { name: 'fs', className: 'FsInstrumentation', modules: [] },
  { name: 'generic-pool', className: 'GenericPoolInstrumentation', modules: ['generic-pool'] },
  { name: 'graphql', className: 'GraphQLInstrumentation', modules: ['graphql'] },
  { name: 'grpc', className: 'GrpcInstrumentation', modules: ['@grpc/grpc-js'] },
  { name: 'hapi', className: 'HapiInstrumentation', modules: ['@hapi/hapi'] },
  { name: 'host-metrics', className: 'HostMetricsInstrumentation', modules: [] },
  // Each request a server receives takes a lighter path (http-server-spans.ts), to the same span.
  {
    name: 'http',
    className: 'HttpInstrumentation',
    modules: [],
    extend: (Class, exports) => withLeanServerSpans(Class, exports[HTTP_UTILS_ENTRY] as HttpUtils),
  },
  { name: 'ioredis', className: 'IORedisInstrumentation', modules: ['ioredis'] },
  { name: 'kafkajs', className: 'KafkaJsInstrumentation', modules: ['kafkajs'] },
  { name: 'knex', className: 'KnexInstrumentation', modules: ['knex'] },
  { name: 'koa', className: 'KoaInstrumentation', modules: ['koa', '@koa/router'] },
  { name: 'lru-memoizer', className: 'LruMemoizerInstrumentation', modules: ['lru-memoizer'] },
  { name: 'memcached', className: 'MemcachedInstrumentation', modules: ['memcached'] },
  { name: 'mongodb', className: 'MongoDBInstrumentation', modules: ['mongodb'] },
  { name: 'mongoose', className: 'MongooseInstrumentation', modules: ['mongoose'] },
  { name: 'mysql2', className: 'MySQL2Instrumentation', modules: ['mysql2'] },
  { name: 'mysql', className: 'MySQLInstrumentation', modules: ['mysql'] },
  { name: 'nestjs-core', className: 'NestInstrumentation', modules: ['@nestjs/core'] },
  { name: 'net', className: 'NetInstrumentation', modules: [] },
  { name: 'openai', className: 'OpenAIInstrumentation', modules: ['openai'] },
  { name: 'oracledb', className: 'OracleInstrumentation', modules: ['oracledb'] },
  { name: 'pg', className: 'PgInstrumentation', modules: ['pg', 'pg-pool'] },
  { name: 'pino', className: 'PinoInstrumentation', modules: ['pino'], config: logSending },
  { name: 'redis', className: 'RedisInstrumentation', modules: ['redis', '@redis/client', '@node-redis/client'] },
  { name: 'restify', className: 'RestifyInstrumentation', modules: ['restify'] },
  { name: 'router', className: 'RouterInstrumentation', modules: ['router'] },
  { name: 'runtime-node', className: 'RuntimeNodeInstrumentation', modules: [], when: (_env, context) => context.metrics },
  { name: 'socket.io', className: 'SocketIoInstrumentation', modules: ['socket.io'] },
  { name: 'tedious', className: 'TediousInstrumentation', modules: ['tedious'] },
  // fetch is built into Node (undici inside), so this one is always usable.
  { name: 'undici', className: 'UndiciInstrumentation', modules: [], config: () => ({ ignoreRequestHook: isOwnTraffic }) },
  { name: 'winston', className: 'WinstonInstrumentation', modules: ['winston'], config: logSending },
];

const OFF_BY_DEFAULT = new Set(['fs', 'host-metrics']);

const list = (raw: string | undefined) =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** Pure: which instrumentations to load, by package suffix, given the env and what is installed. */
export function selectInstrumentations(env: Env, installed: (module: string) => boolean, context: SelectionContext): { names: string[]; unknown: string[] } {
  const enabled = list(env.OTEL_NODE_ENABLED_INSTRUMENTATIONS);
  const disabled = new Set(list(env.OTEL_NODE_DISABLED_INSTRUMENTATIONS));
  const known = new Set(TABLE.map((entry) => entry.name));
  const unknown = [...enabled, ...disabled].filter((name) => !known.has(name));
  const names = TABLE.filter((entry) => {
    if (disabled.has(entry.name)) return false;
    if (enabled.length > 0) return enabled.includes(entry.name);
    if (OFF_BY_DEFAULT.has(entry.name)) return false;
    if (entry.when && !entry.when(env, context)) return false;
    return entry.modules.length === 0 || entry.modules.some(installed);
  }).map((entry) => entry.name);
  return { names, unknown };
}

/**
 * Whether `module` is installed where code under one of `fromDirs` resolves packages: a
 * node_modules/<module>/package.json in one of their ancestors, or in NODE_PATH. Yarn PnP has no
 * node_modules to look at: there everything counts as installed.
 */
export function installedFrom(fromDirs: readonly string[], env: Env): (module: string) => boolean {
  if (process.versions.pnp) return () => true;
  const roots = new Set<string>();
  for (const start of fromDirs) {
    for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
      roots.add(path.join(dir, 'node_modules'));
      if (path.dirname(dir) === dir) break;
    }
  }
  for (const extra of list(env.NODE_PATH?.replaceAll(path.delimiter, ','))) roots.add(path.resolve(extra));
  return (module) => [...roots].some((root) => nodeFs().existsSync(path.join(root, module, 'package.json')));
}

/** Every instrumentation pyro-run can load, by package suffix (the build bundles each of them). */
export const INSTRUMENTATION_NAMES: readonly string[] = TABLE.map((entry) => entry.name);

/** Instantiates the selected instrumentations, each from its bundle. */
export function loadInstrumentations(names: readonly string[], context: SelectionContext, onError: (name: string, error: unknown) => void): Instrumentation[] {
  const out: Instrumentation[] = [];
  for (const name of names) {
    const entry = TABLE.find((e) => e.name === name);
    if (!entry) continue;
    try {
      const exports = instrumentationPackage(name);
      const Class = exports[entry.className] as InstrumentationClass | undefined;
      if (typeof Class !== 'function') throw new Error(`no ${entry.className} export`);
      const Used = entry.extend ? entry.extend(Class, exports) : Class;
      out.push(new Used(entry.config?.(context)));
    } catch (error) {
      onError(name, error);
    }
  }
  return out;
}
