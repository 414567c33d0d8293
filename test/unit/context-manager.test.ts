/**
 * AsyncContextManager (src/tracing/context-manager.ts) binds functions its own, cheaper way: what an
 * instrumentation sees must be exactly what OTel's own manager gives it — the bound context while
 * the target runs, the call's `this` and arguments, the return value or the exception, the
 * target's `length` — and event emitters behave as OTel's binding makes them behave (Node's HTTP
 * requests and responses bound through their class's methods, with nothing set on them).
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import type { Context, ContextManager } from '@opentelemetry/api';
import { AsyncContextManager } from '../../src/tracing/context-manager.js';
import { otelApi, otelContextAsyncHooks } from '../../src/vendor.js';

const { ROOT_CONTEXT, createContextKey } = otelApi();
const KEY = createContextKey('context-manager-test');
const bound = ROOT_CONTEXT.setValue(KEY, 'bound');
const outer = ROOT_CONTEXT.setValue(KEY, 'outer');

const managers: [string, () => ContextManager][] = [
  ['ours', () => new AsyncContextManager().enable()],
  ['OTel’s', () => new (otelContextAsyncHooks().AsyncLocalStorageContextManager)().enable()],
];

/** What a bound function observes when called as a method with arguments, from another context. */
function observe(manager: ContextManager) {
  const seen: { value: unknown; self: unknown; args: unknown[] }[] = [];
  const target = function (this: unknown, ...args: unknown[]) {
    seen.push({ value: manager.active().getValue(KEY), self: this, args });
    return `returned ${args.length}`;
  };
  const wrapper = manager.bind(bound, target);
  const self = { wrapper };
  const result = manager.with(outer, () => self.wrapper(1, 'two', undefined));
  const thrower = manager.bind(bound, () => {
    throw new Error(`thrown in ${String(manager.active().getValue(KEY))}`);
  });
  let error: unknown;
  try {
    manager.with(outer, thrower);
  } catch (caught) {
    error = caught;
  }
  return {
    seen: seen.map(({ value, args }) => ({ value, args })),
    selfIsObject: seen[0]?.self === self,
    name: wrapper.name,
    result,
    error: (error as Error).message,
    after: manager.active().getValue(KEY),
  };
}

describe('AsyncContextManager', () => {
  const used: ContextManager[] = [];
  const make = (factory: () => ContextManager) => {
    const manager = factory();
    used.push(manager);
    return manager;
  };
  after(() => {
    for (const m of used) m.disable();
  });

  it('a bound function runs in the bound context with the call’s this and arguments, as with OTel’s manager', () => {
    const [ours, theirs] = managers.map(([, factory]) => observe(make(factory)));
    assert.deepEqual(ours, theirs);
    assert.equal(ours?.seen[0]?.value, 'bound');
    assert.deepEqual(ours?.seen[0]?.args, [1, 'two', undefined]);
    assert.equal(ours?.selfIsObject, true);
    assert.equal(ours?.result, 'returned 3');
    assert.equal(ours?.error, 'thrown in bound');
    assert.equal(ours?.after, undefined, 'nothing left active afterwards');
  });

  it('a bound function keeps the target’s length (express tells error handlers by it), beyond the prepared arities too', () => {
    const manager = make(managers[0]![1]);
    for (let arity = 0; arity <= 9; arity++) {
      const target = new Function(...Array.from({ length: arity }, (_, i) => `p${i}`), 'return arguments.length;') as (...args: unknown[]) => number;
      const wrapper = manager.bind(bound, target);
      assert.equal(wrapper.length, arity, `arity ${arity}`);
      assert.equal(wrapper(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 10, 'every argument passed, not only the declared ones');
    }
  });

  it('event emitters are bound as OTel binds them: listeners run in the bound context, and the original listener removes them', () => {
    for (const [name, factory] of managers) {
      const manager = make(factory);
      const emitter = manager.bind(bound, new EventEmitter());
      const values: unknown[] = [];
      const listener = () => values.push(manager.active().getValue(KEY));
      emitter.on('data', listener);
      emitter.once('end', listener);
      manager.with(outer, () => {
        emitter.emit('data');
        emitter.emit('end');
        emitter.emit('end');
      });
      emitter.removeListener('data', listener);
      emitter.emit('data');
      assert.deepEqual(values, ['bound', 'bound'], name);
      assert.equal(emitter.listenerCount('data'), 0, name);
    }
  });

  /** Node's request and response, as an HTTP server makes them (no connection needed). */
  const requestAndResponse = () => {
    const request = new http.IncomingMessage(new net.Socket());
    return [request, new http.ServerResponse(request)] as const;
  };

  it("Node's HTTP request and response are bound as OTel binds them: every way of adding and removing a listener", () => {
    for (const [name, factory] of managers) {
      const manager = make(factory);
      for (const emitter of requestAndResponse()) {
        manager.bind(bound, emitter);
        manager.bind(outer, emitter); // bound once: the first context stays
        const values: string[] = [];
        const listener = (tag: string) => values.push(`${tag}:${String(manager.active().getValue(KEY))}`);
        emitter.on('a', listener);
        emitter.addListener('a', listener);
        emitter.prependListener('a', listener);
        emitter.once('b', listener);
        emitter.prependOnceListener('b', listener);
        emitter.on('c', listener);
        emitter.on('d', listener);
        manager.with(outer, () => {
          for (const event of ['a', 'b', 'b', 'c', 'd']) emitter.emit(event, event);
        });
        assert.deepEqual(values, ['a:bound', 'a:bound', 'a:bound', 'b:bound', 'b:bound', 'c:bound', 'd:bound'], name);
        emitter.once('e', listener);
        emitter.removeListener('e', listener); // a once-listener, removed by the app's own function
        emitter.off('a', listener);
        emitter.removeAllListeners('c');
        assert.deepEqual(
          ['a', 'c', 'd', 'e'].map((event) => emitter.listenerCount(event)),
          [2, 0, 1, 0],
          name,
        );
        emitter.removeAllListeners();
        assert.equal(emitter.listenerCount('d'), 0, name);
      }
    }
  });

  it("binds Node's HTTP request and response without setting anything on them, through their class's methods", () => {
    const manager = make(managers[0]![1]);
    const [plain, withBound] = [requestAndResponse(), requestAndResponse()];
    for (const [i, emitter] of withBound.entries()) {
      manager.bind(bound, emitter);
      emitter.on('x', () => {});
      plain[i]!.on('x', () => {});
      assert.deepEqual(Reflect.ownKeys(emitter), Reflect.ownKeys(plain[i]!));
    }
    // A listener that is no function gets Node's own error (OTel's binding throws its WeakMap's).
    assert.throws(() => withBound[0].on('f', 'not a function' as never), { code: 'ERR_INVALID_ARG_TYPE' });
    // An unbound one is left alone: its listener is the app's own function.
    const [request] = requestAndResponse();
    const listener = () => {};
    request.on('data', listener);
    assert.equal(request.listeners('data')[0], listener);
    // express gives the request a prototype of its own, under IncomingMessage's: still bound.
    const [later] = requestAndResponse();
    manager.bind(bound, later);
    Object.setPrototypeOf(later, Object.create(http.IncomingMessage.prototype));
    let seen: unknown;
    later.on('y', () => (seen = manager.active().getValue(KEY)));
    manager.with(outer, () => later.emit('y'));
    assert.equal(seen, 'bound');
    assert.deepEqual(
      ['on', 'once', 'removeListener', 'removeAllListeners'].map((name) => {
        const method = (http.IncomingMessage.prototype as unknown as Record<string, (...args: unknown[]) => unknown>)[name]!;
        return [method.name, method.length];
      }),
      [
        ['on', 2],
        ['once', 2],
        ['removeListener', 2],
        ['removeAllListeners', 1],
      ],
    );
  });

  it('anything else is returned as it is', () => {
    const manager = make(managers[0]![1]);
    const plain = { a: 1 };
    assert.equal(manager.bind(bound, plain), plain);
    assert.equal(manager.bind(bound, 7 as unknown as Context), 7);
  });
});
