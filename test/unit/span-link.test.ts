/**
 * SpanLinkProcessor with a real @opentelemetry/sdk-trace TracerProvider: which span's identity the
 * profile samples under a span carry, and which spans get the `pyroscope.profile.id` attribute
 * Grafana's traces-to-profiles follows.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { context, ROOT_CONTEXT, trace, TraceFlags, type Context, type Span } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  createAlwaysRecordSampler,
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import type { SpanScope } from '../../src/config/index.js';
import { fitLabelValue, LabelRegistry, SpanLabels, sampleContextOf, spanOfSample } from '../../src/span-link/labels.js';
import { SpanLinkProcessor } from '../../src/span-link/processor.js';

const ATTR = 'pyroscope.profile.id';
const REMOTE = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };

function setup(scope: SpanScope, sampler?: Sampler) {
  const registry = new LabelRegistry();
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    spanProcessors: [new SpanLinkProcessor(registry, scope), new SimpleSpanProcessor({ exporter })],
    ...(sampler ? { sampler } : {}),
  });
  const tracer = provider.getTracer('span-link-test');
  const start = (name: string, parent: Context = ROOT_CONTEXT) => tracer.startSpan(name, {}, parent);
  const under = (span: Span) => trace.setSpan(context.active(), span);
  /** The attribute as exported, after the span ended. */
  const exportedAttr = (span: Span) => {
    const id = span.spanContext().spanId;
    const finished = exporter.getFinishedSpans().find((s) => s.spanContext().spanId === id);
    assert.ok(finished, `span ${id} was exported`);
    return finished.attributes[ATTR];
  };
  return { registry, start, under, exportedAttr };
}

function remoteParent(traceFlags: number): Context {
  return trace.setSpanContext(ROOT_CONTEXT, { ...REMOTE, traceFlags, isRemote: true });
}

describe('scope root', () => {
  it('a root span gets its own labels and pyroscope.profile.id = its span ID', () => {
    const { registry, start, exportedAttr } = setup('root');
    const root = start('GET');
    const labels = registry.get(root);
    assert.ok(labels instanceof SpanLabels);
    assert.equal(labels.spanId, root.spanContext().spanId);
    assert.equal(labels.traceId, root.spanContext().traceId);
    root.end();
    assert.equal(exportedAttr(root), root.spanContext().spanId);
  });

  it('children and grandchildren share the root’s labels and get no attribute', () => {
    const { registry, start, under, exportedAttr } = setup('root');
    const root = start('GET');
    const child = start('db.query', under(root));
    const grandchild = start('socket.write', under(child));
    assert.equal(registry.get(child), registry.get(root));
    assert.equal(registry.get(grandchild), registry.get(root));
    assert.equal(registry.get(grandchild)?.spanId, root.spanContext().spanId);
    grandchild.end();
    child.end();
    root.end();
    assert.equal(exportedAttr(child), undefined);
    assert.equal(exportedAttr(grandchild), undefined);
    assert.equal(exportedAttr(root), root.spanContext().spanId);
  });

  it('a child started after its root ended still shares the root’s labels', () => {
    const { registry, start, under } = setup('root');
    const root = start('GET');
    root.end();
    const late = start('late.callback', under(root));
    assert.equal(registry.get(late), registry.get(root));
  });

  it('a span with a remote parent is a local root', () => {
    const { registry, start, under, exportedAttr } = setup('root');
    const server = start('POST /orders', remoteParent(TraceFlags.SAMPLED));
    const labels = registry.get(server);
    assert.ok(labels);
    assert.equal(labels.spanId, server.spanContext().spanId);
    assert.equal(labels.traceId, REMOTE.traceId, 'continues the remote trace');
    assert.notEqual(labels.spanId, REMOTE.spanId);
    const child = start('db.query', under(server));
    assert.equal(registry.get(child), labels);
    child.end();
    server.end();
    assert.equal(exportedAttr(server), server.spanContext().spanId);
    assert.equal(exportedAttr(child), undefined);
  });

  it('a span whose local parent was never labelled (another provider) labels its own subtree', () => {
    const { registry, start, under, exportedAttr } = setup('root');
    const foreign = setup('root');
    const outsider = foreign.start('job');
    const span = start('GET /health', under(outsider));
    const labels = registry.get(span);
    assert.ok(labels, 'the span takes part');
    assert.equal(labels.spanId, span.spanContext().spanId);
    const child = start('db.query', under(span));
    assert.equal(registry.get(child), labels);
    child.end();
    span.end();
    outsider.end();
    assert.equal(exportedAttr(span), span.spanContext().spanId);
  });

  it('two roots are labelled apart', () => {
    const { registry, start } = setup('root');
    const a = start('a');
    const b = start('b');
    assert.notEqual(registry.get(a), registry.get(b));
    assert.notEqual(registry.get(a)?.spanId, registry.get(b)?.spanId);
  });

  it('a child ending does not freeze the root’s name', () => {
    const { registry, start, under } = setup('root');
    const root = start('GET');
    const child = start('middleware', under(root));
    child.updateName('middleware - final');
    child.end();
    root.updateName('GET /users/:id');
    assert.equal(registry.get(root)?.spanName, 'GET /users/:id');
  });
});

describe('scope all', () => {
  it('every span gets its own labels and attribute', () => {
    const { registry, start, under, exportedAttr } = setup('all');
    const root = start('GET');
    const child = start('db.query', under(root));
    const grandchild = start('socket.write', under(child));
    const spans = [root, child, grandchild];
    const labels = spans.map((s) => registry.get(s));
    assert.equal(new Set(labels).size, 3);
    spans.forEach((span, i) => {
      assert.equal(labels[i]?.spanId, span.spanContext().spanId);
      assert.equal(labels[i]?.traceId, root.spanContext().traceId);
      assert.equal(labels[i]?.spanName, ['GET', 'db.query', 'socket.write'][i]);
    });
    for (const span of [...spans].reverse()) span.end();
    for (const span of spans) assert.equal(exportedAttr(span), span.spanContext().spanId);
  });

  it('a span with a remote parent gets its own labels too', () => {
    const { registry, start, exportedAttr } = setup('all');
    const server = start('POST /orders', remoteParent(TraceFlags.SAMPLED));
    assert.equal(registry.get(server)?.spanId, server.spanContext().spanId);
    server.end();
    assert.equal(exportedAttr(server), server.spanContext().spanId);
  });
});

describe('unsampled spans take no part', () => {
  // The samplers are wrapped so the span is still recorded (RECORD, not sampled): the SDK then calls
  // the processor and exports nothing, so only the processor's own check can keep it out.
  const cases: { name: string; sampler: Sampler; parent: () => Context }[] = [
    { name: 'AlwaysOffSampler', sampler: createAlwaysRecordSampler(new AlwaysOffSampler()), parent: () => ROOT_CONTEXT },
    {
      name: 'ParentBased with an unsampled remote parent (traceFlags 0)',
      sampler: createAlwaysRecordSampler(new ParentBasedSampler({ root: new AlwaysOnSampler() })),
      parent: () => remoteParent(TraceFlags.NONE),
    },
  ];
  for (const scope of ['root', 'all'] as const) {
    for (const c of cases) {
      it(`${c.name}, scope ${scope}`, () => {
        const { registry, start, under } = setup(scope, c.sampler);
        const span = start('GET', c.parent());
        assert.equal(span.isRecording(), true, 'the span is recorded, so the processor saw it');
        assert.equal(span.spanContext().traceFlags & TraceFlags.SAMPLED, 0);
        const child = start('db.query', under(span));
        assert.equal(registry.get(span), undefined);
        assert.equal(registry.get(child), undefined);
        span.setAttribute('probe', 1);
        const attributes = (span as unknown as { attributes: Record<string, unknown> }).attributes;
        assert.equal(attributes[ATTR], undefined);
        assert.equal(attributes.probe, 1);
      });
    }
  }

  it('ParentBased with a sampled remote parent takes part', () => {
    const { registry, start } = setup('root', new ParentBasedSampler({ root: new AlwaysOffSampler() }));
    const span = start('GET', remoteParent(TraceFlags.SAMPLED));
    assert.equal(registry.get(span)?.spanId, span.spanContext().spanId);
  });
});

describe('SpanLabels', () => {
  it('spanName follows updateName() until the span ends, then keeps the final name', () => {
    const { registry, start } = setup('root');
    const span = start('GET');
    const labels = registry.get(span);
    assert.ok(labels);
    assert.equal(labels.spanName, 'GET');
    span.updateName('GET /users/:id');
    assert.equal(labels.spanName, 'GET /users/:id');
    span.end();
    assert.equal(labels.spanName, 'GET /users/:id');
    span.updateName('ignored after end');
    assert.equal(labels.spanName, 'GET /users/:id');
  });

  it('after ended() the span object is no longer read', () => {
    const span = { name: 'first' };
    const labels = new SpanLabels('00f067aa0ba902b7', REMOTE.traceId, span);
    span.name = 'second';
    assert.equal(labels.spanName, 'second');
    labels.ended('final', 1_000_000);
    span.name = 'mutated later';
    assert.equal(labels.spanName, 'final');
  });

  it('covers samples until the span ended (plus grace), none after', () => {
    const labels = new SpanLabels('00f067aa0ba902b7', REMOTE.traceId, { name: 'GET /' });
    assert.equal(labels.covers(5_000_000_000, 10_000), true, 'a running span covers every sample');
    labels.ended('GET /', 1_000_000);
    assert.equal(labels.covers(999_000, 10_000), true);
    assert.equal(labels.covers(1_010_000, 10_000), true, 'within the grace');
    assert.equal(labels.covers(1_010_001, 10_000), false, 'work after the span ended is not the span’s');
  });

  it('a sample names the span of its sample context: while the span runs, after it ends within the grace if samples were taken in its life, never if none was', () => {
    const spanOf = spanOfSample(10_000);
    let samplesTaken = 0;
    const count = { samplesTaken: () => samplesTaken };
    const labelsOf = (name: string) => new SpanLabels(name.padEnd(16, '0'), REMOTE.traceId, { name });
    const [sampled, unsampled] = [labelsOf('sampled'), labelsOf('unsampled')];
    const [sampledContext, unsampledContext] = [sampleContextOf(sampled, count), sampleContextOf(unsampled, count)];
    assert.equal(sampleContextOf(sampled, count), sampledContext, 'one context per labels object');
    assert.equal(spanOf({ context: unsampledContext }, 5_000_000), unsampled, 'a running span');
    unsampled.ended('unsampled', 1_000_000);
    samplesTaken++;
    sampled.ended('sampled', 1_000_000);
    assert.equal(spanOf({ context: sampledContext }, 1_005_000), sampled, 'within the grace');
    assert.equal(spanOf({ context: sampledContext }, 1_010_001), undefined, 'after the grace');
    assert.equal(spanOf({ context: unsampledContext }, 1_005_000), undefined, 'no sample was taken in its life: one taken later is not its');
    assert.equal(unsampledContext.labels, undefined, 'and its labels are let go');
    assert.equal(spanOf({ context: sampled }, 5_000_000), undefined, 'the sampler records sample contexts, nothing else');
  });

  it('the processor records when the span ended on the monotonic clock, whatever end time the span was given', () => {
    const { registry, start } = setup('root');
    const span = start('GET /');
    const labels = registry.get(span);
    assert.ok(labels);
    const before = performance.now() * 1000;
    // An end time an hour before the epoch's now: the system clock read by the SDK can be stepped.
    span.end(Date.now() - 3_600_000);
    const after = performance.now() * 1000;
    assert.ok(
      labels.endedAtMicros !== undefined && labels.endedAtMicros >= before && labels.endedAtMicros <= after,
      `${before} ≤ ${labels.endedAtMicros} ≤ ${after}`,
    );
  });

  it('toLabels(false) carries span_id and span_name; toLabels(true) adds trace_id', () => {
    const { registry, start } = setup('root');
    const span = start('checkout');
    const labels = registry.get(span);
    assert.ok(labels);
    const without = labels.toLabels(false);
    assert.deepEqual(Object.keys(without).sort(), ['span_id', 'span_name']);
    assert.match(without.span_id ?? '', /^[0-9a-f]{16}$/);
    assert.equal(without.span_id, span.spanContext().spanId);
    assert.equal(without.span_name, 'checkout');
    const withTrace = labels.toLabels(true);
    assert.deepEqual(Object.keys(withTrace).sort(), ['span_id', 'span_name', 'trace_id']);
    assert.match(withTrace.trace_id ?? '', /^[0-9a-f]{32}$/);
    assert.equal(withTrace.trace_id, span.spanContext().traceId);
    assert.equal(withTrace.span_id, without.span_id);
  });

  it('a child’s samples carry the root’s span_id under scope root', () => {
    const { registry, start, under } = setup('root');
    const root = start('GET');
    const child = start('db.query', under(root));
    assert.deepEqual(registry.get(child)?.toLabels(true), {
      span_id: root.spanContext().spanId,
      span_name: 'GET',
      trace_id: root.spanContext().traceId,
    });
  });
});

describe('label values Pyroscope takes', () => {
  it('cuts a span name longer than 2048 bytes of UTF-8 at a character, and leaves shorter ones', () => {
    assert.equal(fitLabelValue('GET /users/:id'), 'GET /users/:id');
    assert.equal(fitLabelValue('é'.repeat(1024)), 'é'.repeat(1024), 'exactly 2048 bytes fits');
    const long = fitLabelValue('x'.repeat(3000));
    assert.equal(Buffer.byteLength(long), 2048);
    assert.ok(long.endsWith('…'));
    const emoji = fitLabelValue('🔥'.repeat(600));
    assert.ok(Buffer.byteLength(emoji) <= 2048);
    assert.doesNotMatch(emoji, /\uFFFD/);
    assert.equal(
      [...emoji.slice(0, -1)].every((c) => c === '🔥'),
      true,
      'no half of a character',
    );
  });
});
