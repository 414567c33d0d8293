import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import type { SpanScope } from '../config.js';
import { RouteFromSpans } from '../frameworks/routes.js';
import { type Logger, reason } from '../log.js';
import { LabelRegistry } from '../span-link/labels.js';
import { SpanLinkProcessor } from '../span-link/processor.js';
import { nodeDiagnosticsChannel } from '../util/builtins.js';
import { otelApi, otelCore, otelSdkTrace } from '../vendor.js';
import { SpanBatcher } from './span-batcher.js';

const { EventEmitter } = process.getBuiltinModule('node:events') as typeof import('node:events');

/**
 * Node's channel for a server that has started listening (net.Server#listen, which http, https and
 * every framework's server go through): "the server is ready to accept connections" (Node's
 * diagnostics_channel docs, `tracing:net.server.listen:asyncEnd`, since 22.4 / 20.16).
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
  /** Spans are linked to profiles: the link processor takes part (over a registry of its own). */
  scope: SpanScope | undefined;
  /** Spans go to our batcher: it takes part (handing its batches to nobody). */
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
 * code and the processors' classes are the app's (V8 compiles and optimizes code per function,
 * not per object), but nothing reads these spans — the link processor labels them in a registry
 * the sampler never sees, so no profile sample carries them, and the batcher hands its batches to
 * nobody. The contexts are entered through the API's context manager, as the instrumentations do.
 * Returns how many spans reached the batcher.
 */
export function warmUp(pipeline: WarmUpPipeline, requests: number): number {
  const api = otelApi();
  const core = otelCore();
  const batcher = pipeline.batch && new SpanBatcher({ ...pipeline.batch, onBatch: () => undefined, onDrop: () => undefined, onError: () => undefined });
  const processors: SpanProcessor[] = [new RouteFromSpans()];
  if (pipeline.scope !== undefined) processors.unshift(new SpanLinkProcessor(new LabelRegistry(), pipeline.scope));
  if (batcher) processors.push(batcher);
  const provider = new (otelSdkTrace().TracerProvider)({ spanProcessors: processors });
  const tracer = provider.getTracer('pyro-run-warm-up');
  const { SERVER, CLIENT, INTERNAL } = api.SpanKind;

  for (let i = 0; i < requests; i++) {
    // A request as an HTTP server instrumentation sees one: a remote parent, a server span, its
    // request and response bound to its context, a framework's spans below, an outgoing call.
    const incoming = api.propagation.extract(api.ROOT_CONTEXT, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    const server = tracer.startSpan('GET', { kind: SERVER, attributes: { 'http.request.method': 'GET', 'url.path': '/warm-up/1', 'url.scheme': 'http', 'server.port': 8080, 'network.peer.address': '127.0.0.1' } }, incoming);
    const request = api.context.bind(api.trace.setSpan(incoming, server), new EventEmitter());
    const inRequest = core.setRPCMetadata(api.trace.setSpan(incoming, server), { type: core.RPCType.HTTP, span: server });
    api.context.with(inRequest, () => {
      const middleware = tracer.startSpan('middleware - query', { kind: INTERNAL, attributes: { 'http.route': '/', 'express.type': 'middleware' } });
      middleware.end();
      const handler = tracer.startSpan('request handler - /warm-up/:id', { attributes: { 'http.route': '/warm-up/:id', 'express.type': 'request_handler' } });
      api.context.with(api.trace.setSpan(api.context.active(), handler), () => {
        const client = tracer.startSpan('GET', { kind: CLIENT, attributes: { 'http.request.method': 'GET', 'server.address': 'localhost' } });
        api.propagation.inject(api.trace.setSpan(api.context.active(), client), {});
        client.setAttribute('http.response.status_code', 200);
        client.end();
      });
      handler.end();
      request.once('end', () => server.setAttribute('http.response.status_code', 200));
      request.emit('end');
      server.end();
    });
  }
  return batcher?.takeBuffered().flat().length ?? 0;
}
