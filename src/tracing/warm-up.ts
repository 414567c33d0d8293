import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import { RouteFromSpans } from '../frameworks/routes.js';
import { type Logger, reason } from '../log.js';
import { nodeDiagnosticsChannel } from '../util/builtins.js';
import { otelApi, otelCore, otelSdkTrace } from '../vendor.js';
import { AsyncContextManager } from './context-manager.js';
import { SpanBatcher } from './span-batcher.js';

const { EventEmitter } = process.getBuiltinModule('node:events') as typeof import('node:events');

/**
 * Node's channel for a server that has started listening (net.Server#listen, which http, https and
 * every framework's server go through), published when the server can take connections and
 * before its `listening` event (Node's diagnostics_channel docs; added in June 2024, so present in
 * every Node pyro-run supports).
 */
const LISTENING_CHANNEL = 'tracing:net.server.listen:asyncEnd';

/**
 * Requests run through the SDK by the warm-up. Without one, the SDK's span, context, attribute
 * and processor code is first compiled and optimized while the app serves: on the big-app shape
 * the worst stall of the first seconds of load, when the app's own code tiers up, was 68.5 ms at
 * the median of 22 runs, and 49.5 with it (bare node 30). Sixty did no better than twenty, at
 * twice the start-up cost (docs/performance.md, the big app's stall).
 */
export const WARM_UP_REQUESTS = 20;

/** What the warm-up's span pipeline is made of: the same processors as the app's spans go through. */
export interface WarmUpPipeline {
  /** The link processor the app's spans go through, when spans are linked to profiles. */
  linkProcessor: SpanProcessor | undefined;
  /** Spans go to our batcher: one of the same settings takes part (handing its batches to nobody). */
  batch: { maxQueueSize: number; maxExportBatchSize: number; scheduledDelayMillis: number } | undefined;
}

/**
 * Runs `warm` once, when the app's first server starts listening — before its first connection can
 * be accepted, so the cost lands in the app's start-up and not in a request, and never in a
 * process that serves nothing (a script, a CLI tool, a queue worker). A failure is reported once
 * and changes nothing else: the app's first requests are just slower to trace.
 */
export function warmUpWhenListening(warm: () => void, log: Logger): void {
  const channel = nodeDiagnosticsChannel().channel(LISTENING_CHANNEL);
  // The channel calls its subscribers inside Node's `listen` path: nothing may throw from here.
  const onListening = (): void => {
    try {
      channel.unsubscribe(onListening);
      warm();
    } catch (error) {
      log.warnOnce('warm-up', `could not warm up the tracing path (${reason(error)}); the app's first requests may be slower to trace`);
    }
  };
  channel.subscribe(onListening);
}

/**
 * Runs `requests` request-shaped traces through a tracer provider of their own: the SDK's span
 * code and the processors are the app's (V8 compiles and optimizes code per function, not per
 * object), but nothing reads these spans. Their contexts are entered through a context manager
 * of their own, which the sampler is not linked to, so no profile sample carries their labels;
 * the batcher hands its batches to nobody. The link processor is the app's own instance: its
 * labels go on span objects under its registry's key, so the warm-up's spans have the shape the
 * app's will have (the same hidden class wherever the SDK's code meets one).
 * Returns how many spans reached the batcher.
 */
export function warmUp(pipeline: WarmUpPipeline, requests: number): number {
  const api = otelApi();
  const core = otelCore();
  const batcher = pipeline.batch && new SpanBatcher({ ...pipeline.batch, onBatch: () => undefined, onDrop: () => undefined, onError: () => undefined });
  const processors: SpanProcessor[] = [new RouteFromSpans()];
  if (pipeline.linkProcessor) processors.unshift(pipeline.linkProcessor);
  if (batcher) processors.push(batcher);
  const provider = new (otelSdkTrace().TracerProvider)({ spanProcessors: processors });
  const tracer = provider.getTracer('pyro-run-warm-up');
  const manager = new AsyncContextManager().enable();
  const { SERVER, CLIENT, INTERNAL } = api.SpanKind;

  try {
    for (let i = 0; i < requests; i++) {
      // A request as an HTTP server instrumentation sees one: a server span, its request bound to
      // its context, a framework's spans below, an outgoing call carrying the trace on.
      const server = tracer.startSpan('GET', { kind: SERVER, attributes: { 'http.request.method': 'GET', 'url.path': '/warm-up/1', 'url.scheme': 'http', 'server.port': 8080, 'network.peer.address': '127.0.0.1' } }, api.ROOT_CONTEXT);
      const request = manager.bind(api.trace.setSpan(api.ROOT_CONTEXT, server), new EventEmitter());
      const inRequest = core.setRPCMetadata(api.trace.setSpan(api.ROOT_CONTEXT, server), { type: core.RPCType.HTTP, span: server });
      manager.with(inRequest, () => {
        const middleware = tracer.startSpan('middleware - query', { kind: INTERNAL, attributes: { 'http.route': '/', 'express.type': 'middleware' } }, manager.active());
        middleware.end();
        const handler = tracer.startSpan('request handler - /warm-up/:id', { attributes: { 'http.route': '/warm-up/:id', 'express.type': 'request_handler' } }, manager.active());
        manager.with(api.trace.setSpan(manager.active(), handler), () => {
          const client = tracer.startSpan('GET', { kind: CLIENT, attributes: { 'http.request.method': 'GET', 'server.address': 'localhost' } }, manager.active());
          api.propagation.inject(api.trace.setSpan(manager.active(), client), {});
          client.setAttribute('http.response.status_code', 200);
          client.end();
        });
        handler.end();
        request.once('end', () => server.setAttribute('http.response.status_code', 200));
        request.emit('end');
        server.end();
      });
    }
  } finally {
    manager.disable();
  }
  return batcher?.takeBuffered().flat().length ?? 0;
}
