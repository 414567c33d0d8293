/**
 * encodeWithinLimits: a profile past Pyroscope's samples or size limit (ValidateProfile refuses it
 * whole) goes as pieces that each fit and that together hold every sample, with its stack, labels
 * and values, and the window's time; each piece carries only the tables its samples use.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeWithinLimits, type IngestLimits } from '../../src/export/profile-limits.js';
import { encodeInSteps } from '../../src/profiling/pprof-encode.js';
import { buildTimeProfiles } from '../../src/profiling/time-profile.js';
import { SpanLabels } from '../../src/span-link/labels.js';
import { runNow } from '../../src/util/slices.js';
import { sampleViewsOf } from '../support/pprof-helpers.js';
import { decodePprof } from '../support/pprof-wire.js';
import { leafWindow } from '../support/raw-window.js';

const spans = Array.from(
  { length: 7 },
  (_, i) => new SpanLabels(`00f067aa0ba902b${i}`, '4bf92f3577b34da6a3ce929d0e0e4736', { name: `GET /r${String.fromCharCode(97 + i)}` }),
);

/** The CPU profile of a window of `n` leaf functions, most run in one of a few spans. */
function cpuProfile(n: number) {
  const raw = leafWindow(n, (i) => ({ context: i % 8 === 7 ? undefined : spans[i % 8], timestamp: 0n, cpuTime: 1_000_000 + i }));
  const spanOf = ({ context }: { context?: unknown }) => (context instanceof SpanLabels ? context : undefined);
  return runNow(buildTimeProfiles([raw], 1_700_000_000_000, { intervalMicros: 10_000, types: ['cpu'], spanOf, traceIdLabel: true })).get('cpu')!;
}

const key = (view: ReturnType<typeof sampleViewsOf>[number]) => JSON.stringify([view.stack, Object.entries(view.labels).sort(), view.values]);

function assertPiecesHoldTheWhole(pieces: readonly Uint8Array[], whole: ReturnType<typeof cpuProfile>, limits: IngestLimits): void {
  const decoded = pieces.map((body) => decodePprof(body));
  for (const { profile, rawSize } of decoded) {
    assert.ok(rawSize <= limits.bytes, `piece of ${rawSize} bytes`);
    assert.ok(profile.sample.length <= limits.samples, `piece of ${profile.sample.length} samples`);
    assert.equal(BigInt(profile.timeNanos), BigInt(whole.timeNanos), "the window's time");
    assert.equal(BigInt(profile.durationNanos), BigInt(whole.durationNanos));
    assert.equal(BigInt(profile.period), BigInt(whole.period));
    const used = new Set(profile.sample.flatMap((sample) => sample.locationId.map(Number)));
    assert.equal(profile.location.length, used.size, 'only the locations its samples use');
  }
  const got = decoded
    .flatMap(({ profile }) => sampleViewsOf(profile))
    .map(key)
    .sort();
  assert.deepEqual(got, sampleViewsOf(decodePprof(whole.encode()).profile).map(key).sort(), 'every sample once, as it was');
}

describe('encodeWithinLimits', () => {
  it('a profile within the limits goes whole, the bytes encode() writes', () => {
    const whole = cpuProfile(100);
    const { pieces, droppedSamples } = runNow(encodeWithinLimits(whole, { samples: 100, bytes: 1 << 20 }));
    assert.equal(pieces.length, 1);
    assert.deepEqual(pieces[0], whole.encode());
    assert.equal(droppedSamples, 0);
  });

  it('past the samples limit: pieces of at most that many samples', () => {
    const whole = cpuProfile(1000);
    const limits = { samples: 300, bytes: 1 << 20 };
    const { pieces } = runNow(encodeWithinLimits(whole, limits));
    assert.equal(pieces.length, 4);
    assertPiecesHoldTheWhole(pieces, whole, limits);
  });

  it('past the size limit: pieces halved until each fits', () => {
    const whole = cpuProfile(1000);
    const size = runNow(encodeInSteps(whole)).length;
    const limits = { samples: 16_000, bytes: Math.floor(size / 5) };
    const { pieces, droppedSamples } = runNow(encodeWithinLimits(whole, limits));
    assert.ok(pieces.length >= 5, `${pieces.length} pieces`);
    assert.equal(droppedSamples, 0);
    assertPiecesHoldTheWhole(pieces, whole, limits);
  });

  it('a sample too big on its own is left out and counted, the rest go', () => {
    const whole = cpuProfile(10);
    const { pieces, droppedSamples } = runNow(encodeWithinLimits(whole, { samples: 16_000, bytes: 10 }));
    assert.deepEqual([pieces.length, droppedSamples], [0, 10]);
  });
});
