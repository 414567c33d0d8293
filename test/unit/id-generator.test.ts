import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { idGenerator } from '../../src/tracing/id-generator.js';
import { randomFraction } from '../../src/util/random.js';

describe('span and trace ids', () => {
  it('are lowercase hex of W3C length, never all zeros, and do not repeat over 20,000 draws (the pool refilled many times)', () => {
    const traces = new Set<string>();
    const spans = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      const trace = idGenerator.generateTraceId();
      const span = idGenerator.generateSpanId();
      assert.match(trace, /^[0-9a-f]{32}$/);
      assert.match(span, /^[0-9a-f]{16}$/);
      assert.doesNotMatch(trace, /^0+$/);
      traces.add(trace);
      spans.add(span);
    }
    assert.equal(traces.size, 10_000);
    assert.equal(spans.size, 10_000);
  });

  it('random fractions lie in [0, 1) and spread over it', () => {
    const draws = Array.from({ length: 4000 }, randomFraction);
    assert.ok(draws.every((x) => x >= 0 && x < 1));
    const quarters = [0, 1, 2, 3].map((q) => draws.filter((x) => Math.floor(x * 4) === q).length);
    for (const count of quarters) assert.ok(count > 800 && count < 1200, quarters.join());
  });
});
