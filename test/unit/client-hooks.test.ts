/**
 * The parts the client hooks are made of (src/clients/requests.ts, and the SampleOwner of both
 * linkers): a read runs for the labels of the request whose reply it is and switches at each reply
 * boundary, never outside a read; nothing of it leaks into the code that runs after the read; an
 * ended request gets none of the samples; the socket's other events are left alone.
 */
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { labelsOf, ownReads, tagCommand } from '../../src/clients/requests.js';
import { wrapMethod } from '../../src/tracing/package-hooks.js';
import type { FrameSlot } from '../../src/profiling/sampler.js';
import { frameLinker } from '../../src/span-link/frame-context.js';
import { LabelRegistry, type SampleContext, SpanLabels } from '../../src/span-link/labels.js';
import { type Linking, NO_OWNER } from '../../src/span-link/linking.js';
import { slotLinker } from '../../src/span-link/slot-context.js';

const labels = (name: string) => new SpanLabels(name.padEnd(16, '0'), '0'.repeat(32), { name });

/** Each linker with a stand-in for the sampler, and a way to read what a sample taken now would carry. */
const linkers: [string, () => { linking: Linking; sampled: () => SpanLabels | undefined }][] = [
  [
    'frames (AsyncContextFrame)',
    () => {
      const key = new AsyncLocalStorage<object | undefined>();
      const slot: FrameSlot = { key, holder: (l) => ({ 0: l as SampleContext }), samplesTaken: () => 0 };
      return { linking: frameLinker(new LabelRegistry(), slot), sampled: () => (key.getStore() as { 0: SampleContext } | undefined)?.[0].labels };
    },
  ],
  [
    'global slot (no AsyncContextFrame)',
    () => {
      let slotValue: SampleContext | undefined;
      const slot = { set: (l: object | undefined) => (slotValue = l as SampleContext | undefined), samplesTaken: () => 0 };
      return { linking: slotLinker(new LabelRegistry(), slot), sampled: () => slotValue?.labels };
    },
  ],
];

for (const [name, make] of linkers) {
  describe(`SampleOwner, ${name}`, () => {
    it('runs a read for the given labels, switches at each reply, and leaves nothing behind', () => {
      const { linking, sampled } = make();
      const [a, b] = [labels('a'), labels('b')];
      const seen: (string | undefined)[] = [];
      linking.owner.run(
        a,
        () => {
          seen.push(sampled()?.spanName);
          linking.owner.switchTo(b);
          seen.push(sampled()?.spanName);
          linking.owner.switchTo(undefined);
          seen.push(sampled()?.spanName);
        },
        undefined,
        [],
      );
      assert.deepEqual(seen, ['a', 'b', 'b'], 'a switch to nobody leaves the samples as they are');
      assert.equal(sampled(), undefined, 'after the read, the samples are as before it');
    });

    it('does not switch outside a read, and runs a read for nobody as it is', () => {
      const { linking, sampled } = make();
      linking.owner.switchTo(labels('a'));
      assert.equal(sampled(), undefined);
      assert.equal(
        linking.owner.run(undefined, (x: number) => x * 2, undefined, [21]),
        42,
      );
      assert.equal(sampled(), undefined);
    });

    it('passes this and the arguments through, and returns what the read returns', () => {
      const { linking } = make();
      const target = { factor: 3 };
      const result = linking.owner.run(
        labels('a'),
        function (this: typeof target, x: number, y: number) {
          return (x + y) * this.factor;
        },
        target,
        [1, 2],
      );
      assert.equal(result, 9);
    });
  });
}

it('with AsyncContextFrame, an ended request gets no samples: its reply is read for nobody', () => {
  const key = new AsyncLocalStorage<object | undefined>();
  const { owner } = frameLinker(new LabelRegistry(), { key, holder: (l) => ({ 0: l }), samplesTaken: () => 0 });
  const ended = labels('ended');
  ended.ended('ended', 1);
  let store: unknown = 'not run';
  owner.run(ended, () => (store = key.getStore()), undefined, []);
  assert.equal(store, undefined);
});

describe('ownReads', () => {
  const owner = () => {
    const runs: (SpanLabels | undefined)[] = [];
    return {
      runs,
      owner: {
        current: () => undefined,
        run: <R>(l: SpanLabels | undefined, fn: (...args: never[]) => R, thisArg: unknown, args: ArrayLike<unknown>) => {
          runs.push(l);
          return (fn as (...a: unknown[]) => R).apply(thisArg, Array.from(args));
        },
        switchTo: () => undefined,
        sampled: () => undefined,
        enter: () => undefined,
      },
    };
  };

  it("runs each read event for whoever's reply comes next, asked at that event, and other events as they are", () => {
    const socket = new EventEmitter();
    const { runs, owner: sampleOwner } = owner();
    let next: SpanLabels | undefined = labels('first');
    ownReads(socket, () => next, sampleOwner);
    const got: unknown[] = [];
    socket.on('data', (chunk) => got.push(chunk));
    socket.on('end', () => got.push('end'));
    socket.emit('data', 'one');
    next = labels('second');
    socket.emit('data', 'two');
    socket.emit('end');
    assert.deepEqual(got, ['one', 'two', 'end']);
    assert.deepEqual(
      runs.map((l) => l?.spanName),
      ['first', 'second'],
    );
  });

  it("owns a socket once, and 'readable' for a client that pulls", () => {
    const socket = new EventEmitter();
    const { runs, owner: sampleOwner } = owner();
    ownReads(socket, () => labels('r'), sampleOwner, 'readable');
    ownReads(socket, () => labels('again'), sampleOwner, 'readable');
    socket.emit('data', 'x');
    socket.emit('readable');
    assert.deepEqual(
      runs.map((l) => l?.spanName),
      ['r'],
    );
  });
});

describe('commands and methods', () => {
  it('a command keeps the labels of the code that made it, from the first tag on', () => {
    const [a, b] = [labels('a'), labels('b')];
    const command = {};
    tagCommand(command, { ...NO_OWNER, current: () => a });
    tagCommand(command, { ...NO_OWNER, current: () => b });
    assert.equal(labelsOf(command), a);
    assert.equal(labelsOf(undefined), undefined);
  });

  it('wraps a method once, keeping what it returns', () => {
    class Client {
      query(x: number) {
        return x + 1;
      }
    }
    const calls: number[] = [];
    const wrap = (original: (this: Client, x: number) => number) =>
      function (this: Client, x: number) {
        calls.push(x);
        return original.call(this, x);
      };
    assert.equal(wrapMethod(Client.prototype, 'query', wrap), true);
    assert.equal(wrapMethod(Client.prototype, 'query', wrap), true);
    assert.equal(wrapMethod(Client.prototype, 'missing', wrap), false);
    assert.equal(new Client().query(1), 2);
    assert.deepEqual(calls, [1], 'wrapped once');
  });
});
