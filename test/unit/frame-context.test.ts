/**
 * The AsyncContextFrame linking of a context manager (src/span-link/frame-context.ts) with a real
 * TracerProvider: OTel's context behaves exactly as with OTel's own manager, and the sampler's
 * frame key holds one holder per labelled root while its span runs — shared by the root's child
 * contexts, changed only when the labels change, never kept alive by the labels.
 */
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, describe, it } from 'node:test';
import type { Context } from '@opentelemetry/api';
import type { ProfileType } from '../../src/config/index.js';
import { Profiler } from '../../src/profiling/profiler.js';
import { AsyncContextManager } from '../../src/tracing/context-manager.js';
import type { FrameSlot } from '../../src/profiling/sampler.js';
import { frameLinker } from '../../src/span-link/frame-context.js';
import { LabelRegistry, type SampleContext, type SpanLabels } from '../../src/span-link/labels.js';
import { SpanLinkProcessor } from '../../src/span-link/processor.js';
import { otelApi, otelSdkTrace } from '../../src/vendor.js';

const { context, trace, ROOT_CONTEXT } = otelApi();

/**
 * A slot whose holders are plain objects, counted: what the manager asks of the sampler. Its
 * holders keep their value strongly, as the native ones do from a global handle; `sample()` stands
 * for the sampler recording a sample.
 */
function countingSlot() {
  const made: { 0: SampleContext }[] = [];
  let samples = 0;
  const slot: FrameSlot = {
    key: new AsyncLocalStorage<object | undefined>(),
    holder: (value) => {
      const holder = { 0: value as SampleContext };
      made.push(holder);
      return holder;
    },
    samplesTaken: () => samples,
  };
  return { slot, made, sample: () => samples++ };
}

function setup(slot: FrameSlot) {
  const registry = new LabelRegistry();
  const manager = new AsyncContextManager().enable();
  frameLinker(registry, slot).linkContext(manager);
  context.setGlobalContextManager(manager);
  const provider = new (otelSdkTrace().TracerProvider)({ spanProcessors: [new SpanLinkProcessor(registry, 'root')] });
  const tracer = provider.getTracer('frame-context-test');
  const start = (name: string, parent: Context = context.active()) => tracer.startSpan(name, {}, parent);
  const teardown = () => {
    context.disable();
  };
  return { registry, start, teardown };
}

type Start = ReturnType<typeof setup>['start'];

/** A running profiler whose time sampler links (its frame slot), and V8's gc(). */
function realSampler(types: ProfileType[], samplingIntervalMicros: number) {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const profiler = new Profiler({
    types,
    samplingIntervalMicros,
    flushIntervalMs: 60_000,
    traceIdLabel: false,
    heap: { intervalBytes: 524_288, stackDepth: 64 },
  });
  profiler.start();
  const slot = profiler.time?.frameSlot;
  assert.ok(slot, 'AsyncContextFrame is on in this Node');
  return { gc, profiler, slot };
}

/** `count` express-shaped requests, ended; weak references to the labels and holders they made. */
function requests(count: number, registry: LabelRegistry, start: Start, slot: FrameSlot) {
  const labels: WeakRef<SpanLabels>[] = [];
  const holders: WeakRef<object>[] = [];
  for (let i = 0; i < count; i++) {
    const span = start(`GET /${i}`, ROOT_CONTEXT);
    context.with(trace.setSpan(ROOT_CONTEXT, span), () => {
      holders.push(new WeakRef(slot.key.getStore() as object));
      const child = start('child');
      context.with(trace.setSpan(context.active(), child), () => undefined);
      child.end();
    });
    labels.push(new WeakRef(registry.get(span) as SpanLabels));
    span.end();
  }
  return { labels, holders };
}

describe('frameLinker', () => {
  after(() => context.disable());

  it('an express-shaped request makes one holder: the root and its child contexts share it, and OTel sees each context', () => {
    const { slot, made } = countingSlot();
    const { registry, start, teardown } = setup(slot);
    const root = start('GET /json', ROOT_CONTEXT);
    const rootContext = trace.setSpan(ROOT_CONTEXT, root);
    const seen: { active: Context; expected: Context; store: unknown }[] = [];
    context.with(rootContext, () => {
      seen.push({ active: context.active(), expected: rootContext, store: slot.key.getStore() });
      for (const name of ['query', 'expressInit', 'request handler']) {
        const child = start(`middleware - ${name}`);
        const childContext = trace.setSpan(context.active(), child);
        context.with(childContext, () => seen.push({ active: context.active(), expected: childContext, store: slot.key.getStore() }));
        child.end();
      }
    });
    // The response's events enter the root's context again from outside it.
    context.with(rootContext, () => seen.push({ active: context.active(), expected: rootContext, store: slot.key.getStore() }));
    teardown();

    assert.equal(made.length, 1, 'one holder for the request');
    assert.equal(made[0]?.[0].labels, registry.get(root));
    for (const s of seen) {
      assert.equal(s.active, s.expected, 'context.active() is the context entered');
      assert.equal(s.store, made[0], 'the sampler finds the root’s holder');
    }
    assert.equal(slot.key.getStore(), undefined, 'nothing left in the frame after with()');
  });

  it('the sampler’s key follows the labels: another root gets its own holder, a context without a span clears it, leaving restores it', () => {
    const { slot, made } = countingSlot();
    const { start, teardown } = setup(slot);
    const a = trace.setSpan(ROOT_CONTEXT, start('a', ROOT_CONTEXT));
    const b = trace.setSpan(ROOT_CONTEXT, start('b', ROOT_CONTEXT));
    const stores: unknown[] = [];
    context.with(a, () => {
      stores.push(slot.key.getStore());
      context.with(ROOT_CONTEXT, () => stores.push(slot.key.getStore()));
      context.with(b, () => stores.push(slot.key.getStore()));
      stores.push(slot.key.getStore());
    });
    teardown();
    assert.equal(made.length, 2);
    assert.deepEqual(stores, [made[0], undefined, made[1], made[0]]);
  });

  it('a span that has ended gets no holder: what runs in its context afterwards is not its work', () => {
    const { slot, made } = countingSlot();
    const { start, teardown } = setup(slot);
    const span = start('done', ROOT_CONTEXT);
    const entered = trace.setSpan(ROOT_CONTEXT, span);
    span.end();
    let store: unknown = 'not run';
    let active: Context | undefined;
    context.with(entered, () => {
      store = slot.key.getStore();
      active = context.active();
    });
    teardown();
    assert.equal(made.length, 0);
    assert.equal(store, undefined);
    assert.equal(active, entered, 'OTel still sees the context');
  });

  it('a span’s labels let go of its holder when it ends: V8’s scavenges keep a WeakRef’s target, and the holder keeps the labels', () => {
    const { slot, made } = countingSlot();
    const { registry, start, teardown } = setup(slot);
    const span = start('GET /json', ROOT_CONTEXT);
    context.with(trace.setSpan(ROOT_CONTEXT, span), () => undefined);
    const labels = registry.get(span) as SpanLabels;
    const whileRunning = labels.frameHolder?.deref();
    span.end();
    teardown();
    assert.equal(made.length, 1);
    assert.equal(whileRunning, made[0], 'the labels find their holder while the span runs');
    assert.equal(labels.frameHolder, undefined, 'no reference to the holder once the span ended');
  });

  it('a span in which no sample was taken lets go of its labels when it ends, though its holder lives on; one with a sample keeps them for it', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { slot, made, sample } = countingSlot();
    const { registry, start, teardown } = setup(slot);
    // In a function of its own: an async function's saved registers could keep the last span.
    const request = (sampled: boolean) => {
      const span = start('GET /json', ROOT_CONTEXT);
      context.with(trace.setSpan(ROOT_CONTEXT, span), () => sampled && sample());
      const labels = new WeakRef(registry.get(span) as SpanLabels);
      span.end();
      return labels;
    };
    const unsampled = [request(false), request(false)];
    const sampled = request(true);
    teardown();
    // WeakRef targets are kept to the end of the job that made the reference.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    assert.equal(made.length, 3, 'each request made a holder, all kept by this test');
    assert.deepEqual(
      unsampled.map((labels) => labels.deref()),
      [undefined, undefined],
      'the labels of a span no sample was taken in are not kept by its holder',
    );
    assert.equal(made[2]?.[0].labels, sampled.deref(), 'a span a sample may carry keeps its labels while its holder lives');
    assert.notEqual(sampled.deref(), undefined);
  });

  it('a span that ends after the sample count moved keeps its labels, whoever the sample was for', () => {
    const { slot, made, sample } = countingSlot();
    const { start, teardown } = setup(slot);
    const a = start('a', ROOT_CONTEXT);
    context.with(trace.setSpan(ROOT_CONTEXT, a), () => undefined);
    const b = start('b', ROOT_CONTEXT);
    context.with(trace.setSpan(ROOT_CONTEXT, b), () => undefined);
    sample();
    a.end();
    b.end();
    teardown();
    assert.deepEqual(
      made.map((holder) => holder[0].labels?.spanName),
      ['a', 'b'],
    );
  });

  it('attach() sets OTel’s context and the sampler’s holder; the token restores both', () => {
    const { slot, made } = countingSlot();
    const { start, teardown } = setup(slot);
    const a = trace.setSpan(ROOT_CONTEXT, start('a', ROOT_CONTEXT));
    const b = trace.setSpan(ROOT_CONTEXT, start('b', ROOT_CONTEXT));
    const seen: [Context, unknown][] = [];
    context.with(a, () => {
      const token = context.attach(b);
      seen.push([context.active(), slot.key.getStore()]);
      token.dispose();
      seen.push([context.active(), slot.key.getStore()]);
    });
    teardown();
    assert.deepEqual(seen, [
      [b, made[1]],
      [a, made[0]],
    ]);
  });

  it('with the real sampler, a request’s labels and holder are freed once its span ended and its contexts are gone', async () => {
    const { gc, profiler, slot } = realSampler(['cpu', 'wall'], 10_000);
    const { registry, start, teardown } = setup(slot);
    // In a function of its own: an async function's saved registers could keep the last span.
    const { labels, holders } = requests(50, registry, start, slot);
    teardown();
    try {
      assert.equal(holders.filter((h) => h.deref() !== undefined).length, 50, 'holders were made');
      // A window cut drops the sampler's own references (one per sample taken in a holder's
      // frame); the sampler keeps running, as stopping it would free every holder's labels anyway.
      profiler.cut();
      // The holder goes in one collection (its weak callback drops the global handle to its
      // sample context), what that kept in a later one; WeakRef targets are also kept to the end of the job.
      for (let round = 0; round < 5 && labels.some((l) => l.deref() !== undefined); round++) {
        await new Promise((resolve) => setImmediate(resolve));
        gc();
      }
      assert.equal(holders.filter((h) => h.deref() !== undefined).length, 0, 'holders collected');
      assert.equal(labels.filter((l) => l.deref() !== undefined).length, 0, 'labels collected');
    } finally {
      profiler.cut(true);
    }
  });

  it('with the real sampler, a holder still alive keeps no labels of a span that ended with no sample taken in its life', async () => {
    // One sample a second: the requests below take a few milliseconds, so most see none.
    const { gc, profiler, slot } = realSampler(['wall'], 1_000_000);
    const { registry, start, teardown } = setup(slot);
    const kept: object[] = [];
    // Per request: its labels, and whether the sampler recorded a sample during its life.
    const request = (i: number) => {
      const before = slot.samplesTaken();
      const span = start(`GET /${i}`, ROOT_CONTEXT);
      context.with(trace.setSpan(ROOT_CONTEXT, span), () => kept.push(slot.key.getStore() as object));
      const labels = new WeakRef(registry.get(span) as SpanLabels);
      span.end();
      return { labels, sampled: slot.samplesTaken() !== before };
    };
    const made = Array.from({ length: 20 }, (_, i) => request(i));
    teardown();
    try {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
      const unsampled = made.filter((r) => !r.sampled);
      assert.equal(kept.length, 20, 'every request made a holder, all alive');
      assert.ok(unsampled.length >= 10, `${unsampled.length} of 20 requests saw no sample`);
      assert.deepEqual(unsampled.filter((r) => r.labels.deref() !== undefined).length, 0, 'their labels are collected while their holders live');
    } finally {
      profiler.cut(true);
    }
  });
});
