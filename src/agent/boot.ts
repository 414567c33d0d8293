import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import { Agent, type Started } from './agent.js';
import { appDirs } from '../util/app-dirs.js';
import { AGENT_DIR } from '../util/agent-dir.js';
import { BlockSpans } from '../blocks/block-spans.js';
import { heldByApp } from '../blocks/block-attribution.js';
import { BlockWatch } from '../blocks/block-watch.js';
import { LABEL_SPAN_NAME } from '../wire.js';
import { startClientHooks } from '../clients/index.js';
import { type Config, SETTINGS } from '../config/index.js';
import type { Destination } from '../export/destination.js';
import { HttpSender } from '../export/transport/http-sender.js';
import { NO_DESTINATION } from '../export/no-destination.js';
import { otlpTlsEndpoints, remoteUpstreams } from '../export/remote-upstreams.js';
import { originTls } from '../export/transport/origin-tls.js';
import { Uploads } from '../export/uploads.js';
import { onFirstListen } from './first-listen.js';
import { guardInstrumentations } from '../tracing/instrumentation-guard.js';
import { openRecording } from '../export/local/local-mode.js';
import { type Logger, reason } from '../log.js';
import { allocationsSupported } from '../profiling/allocation-source.js';
import { Profiler, type ProfileWindow } from '../profiling/profiler.js';
import { installShutdown } from './shutdown.js';
import { frameLinker } from '../span-link/frame-context.js';
import { LabelRegistry, type SpanLabels, spanOfSample } from '../span-link/labels.js';
import { NO_OWNER } from '../span-link/linking.js';
import { SpanLinkProcessor } from '../span-link/processor.js';
import { SPAN_NAME_OVERFLOW, SpanNameCap } from '../span-link/span-name-cap.js';
import { slotLinker } from '../span-link/slot-context.js';
import { startTracing, type Tracing } from '../tracing/tracing.js';
import { type MainThreadParts, startThreads, type Threads } from '../threads/main-thread.js';
import type { WorkerSettings } from '../threads/protocol.js';
import { type Pools, startPoolHooks } from '../threads/pools/index.js';

/** Most uploads waiting at once, over every pipeline (docs/configuration.md, Sending: the outage it covers at the defaults). */
const MAX_QUEUED_UPLOADS = 32;

/** The remote destination: every upstream the config names, through one sender. */
function uploads(config: Config, log: Logger): Destination {
  // The OTLP endpoints' CA and client certificate files, read once, here (paths relative to the app's working directory, as OTel reads them).
  const tls = originTls(otlpTlsEndpoints(config), (file) => readFileSync(path.resolve(file), 'utf8'));
  for (const problem of tls.problems) log.warn(problem);
  const sender = new HttpSender({
    timeoutMs: config.pyroscope.uploadTimeoutMs,
    maxQueued: MAX_QUEUED_UPLOADS,
    log,
    tlsSkipVerify: config.tlsSkipVerify,
    proxy: config.proxy,
    originTls: tls.material,
  });
  const upstreams = remoteUpstreams(config, (request) => sender.enqueue(request), log);
  return new Uploads(sender, upstreams, log, { shutdownTimeoutMs: config.shutdownTimeoutMs, proxy: config.proxy });
}

/** The samplers the config asks for (those this Node can run), started; undefined when none or when they cannot start. */
function startProfiling(config: Config, log: Logger, outOfMemory: (window: ProfileWindow) => void): Profiler | undefined {
  let types = config.profiles;
  if (types.includes('alloc') && !allocationsSupported()) {
    log.warn(`allocation profiles need Node.js 26 or newer (this is ${process.versions.node}); the other profiles go on without them`);
    types = types.filter((type) => type !== 'alloc');
  }
  if (types.length === 0) return undefined;
  try {
    const { samplingIntervalMicros, flushIntervalMs, traceIdLabel, heap } = config;
    const cap = new SpanNameCap(config.maxSpanNames, (names, max) => log.warn(spanNamesOverWarning(names, max)));
    const boundLabels = (labelSets: readonly Record<string, string>[]) => cap.bound(labelSets);
    const profiler = new Profiler({
      types,
      samplingIntervalMicros,
      flushIntervalMs,
      traceIdLabel,
      spanOf: spanOfSample(samplingIntervalMicros),
      boundLabels,
      heap,
      outOfMemory,
    });
    profiler.start();
    if (types.includes('heap') && !profiler.watchesOutOfMemory)
      log.debug('the heap limit is not watched: no heap profile will be kept when the app runs out of memory');
    if (profiler.time && !profiler.time.linksSamples)
      log.warn('this platform cannot attach span contexts to samples; profiles are collected without span links');
    if (config.sourceMaps) {
      const [entryDir = process.cwd()] = appDirs(process.argv, process.cwd());
      profiler.loadSourceMaps(entryDir).then(
        (maps) => log.debug(`source maps: ${maps} found under ${entryDir}`),
        (error: unknown) => log.warnOnce('source-maps', `could not read source maps: ${reason(error)}; profiles name the compiled files`),
      );
    }
    return profiler;
  } catch (error) {
    log.warn(`profiler unavailable (${reason(error)}); tracing continues without profiles`);
    return undefined;
  }
}

/**
 * The event-loop block watch (src/blocks/), when the threshold is set and the time sampler links
 * samples: it taps the sampler's stops, hands each block to the destination (recorded in local
 * mode), and starts. Undefined when it cannot start (one warning).
 */
function startBlockWatch(
  config: Config,
  profiler: Profiler,
  destination: Destination,
  log: Logger,
  gatherSoon: () => void,
): BlockWatch<SpanLabels> | undefined {
  const time = profiler.time;
  if (config.blockThresholdMs <= 0 || time === undefined) return undefined;
  try {
    const watch = new BlockWatch<SpanLabels>({
      thresholdMs: config.blockThresholdMs,
      intervalMicros: config.samplingIntervalMicros,
      ownerOf: spanOfSample(config.samplingIntervalMicros),
      spanOf: (labels) => ({ spanId: labels.spanId, traceId: labels.traceId, name: labels.toLabels(false)[LABEL_SPAN_NAME] ?? '' }),
      sourceMapper: () => profiler.sourceMaps,
      agentDir: AGENT_DIR,
      gatherSoon,
      log,
    });
    watch.onBlock((block) => {
      const by = block.span ? `span ${block.span.spanId} (${block.span.name})` : 'no span';
      const ran = heldByApp(block.ranMs, block.thresholdMs) ? '' : `: the process was not running (it ran ${Math.round(block.ranMs)} ms of it)`;
      log.debug(`event loop blocked for ${Math.round(block.durationMs)} ms by ${by}${ran}`);
      destination.blocks?.(block);
    });
    time.tap = watch;
    watch.start();
    destination.blocksWatched?.(config.blockThresholdMs);
    return watch;
  } catch (error) {
    log.warn(`event-loop blocks are not watched: ${reason(error)}`);
    return undefined;
  }
}

function spanNamesOverWarning(names: readonly string[], max: number): string {
  const { env, flag } = SETTINGS.maxSpanNames;
  const quoted = names.map((name) => JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name)).join(', ');
  return `more than ${max} distinct span names in one profile window (past them: ${quoted}); those spans' samples are labelled span_name="${SPAN_NAME_OVERFLOW}" and keep their span_id. Name spans by what they do and put IDs in attributes, or raise ${env} (--${flag})`;
}

/** The slice of the config a worker's agent works by. */
function workerSettings({ profiles, flushIntervalMs, heap, samplingIntervalMicros, traceIdLabel, spanScope, logLevel }: Config): WorkerSettings {
  return { profiles, flushIntervalMs, heap, samplingIntervalMicros, traceIdLabel, spanScope, logLevel };
}

function startThreadsOrWarn(parts: MainThreadParts): Threads | undefined {
  try {
    return startThreads(parts);
  } catch (error) {
    parts.log.warn(`worker threads are not profiled (${reason(error)}); the main thread is`);
    return undefined;
  }
}

/**
 * Starts the parts the config asks for, in the order they depend on each other: ESM hook (before
 * any app import), sampler (the context manager writes to it), tracing (with the link processor),
 * then windows and the exit hooks.
 */
export function boot(config: Config, log: Logger): Started {
  const tracingOn = !config.sdkDisabled;

  let agent: Agent | undefined;
  const profiler = startProfiling(config, log, (window) => agent?.outOfMemory(window));
  const destination: Destination = config.local ? (openRecording(config, config.local, log) ?? NO_DESTINATION) : uploads(config, log);
  if (profiler && !config.local && config.profilesExport.exporter === 'pyroscope' && config.profilesExport.sender === undefined)
    log.info('no PYROSCOPE_SERVER_ADDRESS: profiles are collected but not uploaded');

  const time = profiler?.time;
  const registry = new LabelRegistry();
  const linking = time?.linksSamples ? (time.frameSlot ? frameLinker(registry, time.frameSlot) : slotLinker(registry, time.globalSlot)) : undefined;
  const blocks = profiler && linking ? startBlockWatch(config, profiler, destination, log, () => agent?.gatherSoon()) : undefined;
  if (config.blockThresholdMs > 0 && blocks === undefined)
    log.debug('event-loop blocks are not watched: they are attributed from the CPU or wall profile, which is off or cannot link samples here');

  let tracing: Tracing | undefined;
  let pools: Pools | undefined;
  if (tracingOn) {
    try {
      guardInstrumentations(log, config.quiet);
      const linkProcessor: SpanProcessor | undefined = linking && new SpanLinkProcessor(registry, config.spanScope);
      const blockSpans = blocks && new BlockSpans(blocks, (span) => registry.get(span)?.spanId === span.spanContext().spanId, log);
      tracing = startTracing({
        config,
        destination,
        log,
        linkProcessor,
        linkContext: linking?.linkContext,
        appDirs: appDirs(process.argv, process.cwd()),
        blocks: blockSpans && { gate: blockSpans, outgoing: blockSpans.outgoing },
      });
      // After tracing: its require hook must not exist while startTracing loads exporters (see there).
      if (linking) {
        startClientHooks(linking.owner, log);
        if (config.workers) pools = startPoolHooks(linking.owner, log);
      }
    } catch (error) {
      tracing = undefined;
      log.warn(`tracing unavailable (${reason(error)}); profiling continues without spans`);
    }
  }
  const threads =
    (time || profiler?.heap) && config.workers
      ? startThreadsOrWarn({
          time,
          heap: profiler?.heap,
          owner: linking?.owner ?? NO_OWNER,
          log,
          pools,
          tracing: tracing !== undefined,
          settings: workerSettings(config),
        })
      : undefined;
  // After tracing: what sendKept sends, and the warm-up's loopback exchange, are our own traffic,
  // which only a registered context manager keeps out of the app's own telemetry (the
  // instrumentations' spans and metrics). A process that never listens loads the upload path at
  // its first upload.
  const prepare = destination.prepare?.bind(destination);
  if (prepare) onFirstListen(prepare);
  destination.sendKept?.();

  agent = new Agent({
    config,
    log,
    destination,
    profiler,
    threads,
    blocks,
    batcher: tracing?.batcher,
    logBatcher: tracing?.logBatcher,
    metricReader: tracing?.metricReader,
    processors: tracing?.processors ?? [],
    sdk: tracing?.sdk,
  });
  agent.startWindows();
  const uninstall = installShutdown(agent, config.shutdownTimeoutMs, log);
  log.debug(
    `started: service ${config.serviceName}, profiles [${config.profiles.join(',')}], traces ${tracing ? config.traces.exporters.join(',') || 'none' : 'off'}, async context frame ${profiler?.time?.frameCarriesContext ?? 'n/a'}`,
  );
  return { agent, config, log, uninstall };
}
