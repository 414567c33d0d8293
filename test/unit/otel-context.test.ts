/**
 * The contexts of the OpenTelemetry API pyro-run bundles: build/instrumentation-patches.ts moves
 * BaseContext's three methods from closures on each context to its prototype (docs/performance.md,
 * "What survives a scavenge"). What instrumentations and apps read must stay exactly what
 * OpenTelemetry's own API gives them: checked here against the unpatched package, side by side.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import type { Context } from '@opentelemetry/api';
import { otelApi } from '../../src/vendor.js';

const require = createRequire(import.meta.url);
const theirs = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
const ours = otelApi();

const apis = [
  ['bundled', ours],
  ['OpenTelemetry’s own', theirs],
] as const;

/** What a sequence of context operations reads, as plain values. */
function readings(api: typeof theirs): unknown[] {
  const a = api.createContextKey('otel-context-test a');
  const b = api.createContextKey('otel-context-test b');
  const root = api.ROOT_CONTEXT;
  const one = root.setValue(a, 1);
  const two = one.setValue(b, 'two');
  const replaced = two.setValue(a, { three: 3 });
  const deleted = replaced.deleteValue(b);
  const missing = root.deleteValue(a);
  const read = (context: Context) => [context.getValue(a), context.getValue(b)];
  return [read(root), read(one), read(two), read(replaced), read(deleted), read(missing), deleted === replaced, missing === root];
}

describe('the bundled API’s contexts', () => {
  it('read what OpenTelemetry’s own contexts read: inherited values, replaced and deleted keys, each change a new context', () => {
    assert.deepEqual(readings(ours), readings(theirs));
    assert.deepEqual(readings(ours), [
      [undefined, undefined],
      [1, undefined],
      [1, 'two'],
      [{ three: 3 }, 'two'],
      [{ three: 3 }, undefined],
      [undefined, undefined],
      false,
      false,
    ]);
  });

  it('leave the context they derive from unchanged', () => {
    for (const [name, api] of apis) {
      const key = api.createContextKey('otel-context-test parent');
      const parent = api.ROOT_CONTEXT.setValue(key, 'parent');
      parent.setValue(key, 'child');
      parent.deleteValue(key);
      assert.equal(parent.getValue(key), 'parent', name);
      assert.equal(api.ROOT_CONTEXT.getValue(key), undefined, name);
    }
  });

  it('share their keys with every other copy of the API (Symbol.for), so values set through one read through the other', () => {
    const key = ours.createContextKey('otel-context-test shared');
    assert.equal(key, theirs.createContextKey('otel-context-test shared'));
    assert.equal(
      theirs.trace.getSpanContext(ours.trace.setSpanContext(ours.ROOT_CONTEXT, { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 }))?.spanId,
      'b'.repeat(16),
    );
  });

  it('carry no functions of their own: a context per request holds no closures over itself', () => {
    const context = ours.ROOT_CONTEXT.setValue(ours.createContextKey('otel-context-test own'), 1);
    const own = Object.entries(Object.getOwnPropertyDescriptors(context)).filter(([, d]) => typeof d.value === 'function');
    assert.deepEqual(own, []);
  });
});
