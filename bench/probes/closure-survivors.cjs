'use strict';
// Objects that die at once, made in a loop, in one of three shapes (CLOSURE_SURVIVORS_SHAPE), for
// bench/scavenge-survivors.mjs to read V8's minor collections over (--trace-gc-nvp): the same
// fields, with the methods on the prototype, or as closures over the object stored on it — the
// shape of OpenTelemetry API's BaseContext before build/instrumentation-patches.ts changes it. No
// OpenTelemetry here: what differs is the shape alone.
const SHAPE = process.env.CLOSURE_SURVIVORS_SHAPE ?? 'prototype';
const RUN_MS = Number(process.env.CLOSURE_SURVIVORS_MS ?? 4000);

class Fields {
  constructor(parent) {
    this.values = parent ? new Map(parent.values) : new Map();
  }
}

class Prototype {
  constructor(parent) {
    this.values = parent ? new Map(parent.values) : new Map();
  }
  get(key) {
    return this.values.get(key);
  }
  set(key, value) {
    const next = new Prototype(this);
    next.values.set(key, value);
    return next;
  }
}

class OwnClosures {
  constructor(parent) {
    // biome-ignore lint/complexity/noUselessThisAlias: the closures hold `self`, the shape this probe measures.
    const self = this;
    self.values = parent ? new Map(parent.values) : new Map();
    self.get = (key) => self.values.get(key);
    self.set = (key, value) => {
      const next = new OwnClosures(self);
      next.values.set(key, value);
      return next;
    };
  }
}

const KEY = Symbol('key');
const make = {
  fields: (i) => {
    const made = new Fields(new Fields());
    made.values.set(KEY, { i });
    return { read: () => made.values.get(KEY).i };
  },
  prototype: (i) => {
    const made = new Prototype().set(KEY, { i });
    return { read: () => made.get(KEY).i };
  },
  'own closures': (i) => {
    const made = new OwnClosures().set(KEY, { i });
    return { read: () => made.get(KEY).i };
  },
}[SHAPE];
if (!make) throw new Error(`unknown CLOSURE_SURVIVORS_SHAPE ${SHAPE}`);

/** A few objects in flight at a time, as requests are; every other one dead as soon as it is read. */
const inFlight = new Array(8);
let made = 0;
let sum = 0;
function work() {
  let x = 0;
  for (let k = 0; k < 2000; k++) x += Math.sqrt(k);
  return x;
}
const until = Date.now() + RUN_MS;
(function turn() {
  for (let j = 0; j < 20; j++) {
    const object = make(made);
    inFlight[made++ % inFlight.length] = object;
    sum += object.read() + work();
  }
  if (Date.now() < until) setImmediate(turn);
  else process.stdout.write(`made ${made} ${sum > 0}\n`);
})();
