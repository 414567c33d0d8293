/**
 * The tracing warm-up (src/tracing/warm-up.ts): it runs once, when the app's first server starts
 * listening, and before that server's first connection; its spans go through the same span
 * pipeline as the app's but reach no exporter, and their contexts never pass through the app's
 * context manager (the one the sampler is linked to); the app's context is as it was; and a failure
 * is one warning while the app's server listens on as without it.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Context } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { Logger } from '../../src/log.js';
import { LabelRegistry } from '../../src/span-link/labels.js';
import { SpanLinkProcessor } from '../../src/span-link/processor.js';
import { AsyncContextManager } from '../../src/tracing/context-manager.js';
import { warmUp, warmUpWhenListening } from '../../src/tracing/warm-up.js';
import { otelApi } from '../../src/vendor.js';

const api = otelApi();
const BATCH = { maxQueueSize: 2048, maxExportBatchSize: 512, scheduledDelayMillis: 5000 };

function listening(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
}

function closed(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('the warm-up', () => {
  const exporter = new InMemorySpanExporter();
  const registry = new LabelRegistry();
  const manager = new AsyncContextManager().enable();
  const provider = new TracerProvider({ spanProcessors: [new SpanLinkProcessor(registry, 'root'), new SimpleSpanProcessor({ exporter })] });

  before(() => {
    api.context.setGlobalContextManager(manager);
    api.trace.setGlobalTracerProvider(provider);
  });
  after(() => {
    api.trace.disable();
    api.context.disable();
  });

  it('runs every request through its own pipeline: four spans a request reach its batcher, none the app’s exporter', () => {
    assert.equal(warmUp({ linkProcessor: new SpanLinkProcessor(registry, 'root'), batch: BATCH }, 5), 20);
    assert.equal(warmUp({ linkProcessor: undefined, batch: BATCH }, 2), 8);
    assert.equal(exporter.getFinishedSpans().length, 0);
  });

  it('leaves the active context as it was, and enters none of its contexts through the app’s context manager', () => {
    const key = api.createContextKey('app');
    const appContext = api.ROOT_CONTEXT.setValue(key, 'app');
    const appSpan = provider.getTracer('app').startSpan('app span');
    const entered: unknown[] = [];
    const withContext = manager.with;
    api.context.with(api.trace.setSpan(appContext, appSpan), () => {
      // What the sampler's link wraps (span-link/frame-context.ts): every context entered through the app's manager.
      manager.with = ((context: Context, ...rest: unknown[]) => {
        entered.push(api.trace.getSpan(context)?.spanContext().spanId);
        return (withContext as (...args: unknown[]) => unknown).call(manager, context, ...rest);
      }) as typeof manager.with;
      try {
        warmUp({ linkProcessor: new SpanLinkProcessor(registry, 'root'), batch: BATCH }, 3);
      } finally {
        manager.with = withContext;
      }
      assert.equal(api.context.active().getValue(key), 'app');
      assert.equal(api.trace.getSpan(api.context.active()), appSpan);
    });
    appSpan.end();
    assert.deepEqual(entered, []);
    assert.deepEqual(
      exporter.getFinishedSpans().map((span) => span.name),
      ['app span'],
    );
  });

  it('runs once, when the first server listens, before the listen callback and the first connection', async () => {
    const events: string[] = [];
    warmUpWhenListening(() => events.push('warm-up'), new Logger('warn', (t) => t, () => undefined));
    let connected!: () => void;
    const served = new Promise<void>((resolve) => (connected = resolve));
    const first = net.createServer((socket) => {
      events.push('connection');
      socket.end();
      connected();
    });
    first.listen(0, '127.0.0.1', () => {
      events.push('listening callback');
      // A client already waiting: its connection is accepted in the loop's next poll phase.
      net.connect((first.address() as net.AddressInfo).port, '127.0.0.1').resume();
    });
    events.push('listen called');
    await served;
    const second = net.createServer();
    await listening(second);
    await Promise.all([closed(first), closed(second)]);
    assert.deepEqual(events, ['listen called', 'warm-up', 'listening callback', 'connection']);
  });

  it('reports a failure once, and the app’s server listens and its callback runs as without it', async () => {
    const lines: string[] = [];
    warmUpWhenListening(
      () => {
        throw new Error('boom');
      },
      new Logger('warn', (t) => t, (line) => lines.push(line)),
    );
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const server = net.createServer();
      await listening(server);
      assert.equal(server.listening, true);
      const second = net.createServer();
      await listening(second);
      await Promise.all([closed(server), closed(second)]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    assert.deepEqual(uncaught, []);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /could not warm up the tracing path \(boom\)/);
  });
});
