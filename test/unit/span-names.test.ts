/**
 * span_name stays a bounded set whatever the app names its spans: IDs in a name fold into
 * placeholders (spanNameShape), and past a cap per window the rest share one overflow value
 * (SpanNameCap). Pyroscope makes each value a series, and refuses a tenant's profiles past its
 * active-series limit.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SPAN_NAME_OVERFLOW, SpanNameCap } from '../../src/span-link/span-name-cap.js';
import { spanNameShape } from '../../src/span-link/span-name-shape.js';

const SHAPES: readonly [rule: string, name: string, shape: string][] = [
  ['a number standing alone is an id', 'process order 81234', 'process order {id}'],
  ['so is one between slashes, dashes or underscores', 'GET /users/42/orders/7', 'GET /users/{id}/orders/{id}'],
  ['after an underscore or a dash too', 'job_123 task-77', 'job_{id} task-{id}'],
  ['a number with a decimal part is one id', 'price 12.50 EUR', 'price {id} EUR'],
  ['a digit glued to letters is part of a word (versions, codecs)', 'GET /api/v2/h264', 'GET /api/v2/h264'],
  ['a version after v keeps its minor number', 'client v1.2 call', 'client v1.2 call'],
  ['a UUID', 'load 550e8400-e29b-41d4-a716-446655440000 now', 'load {uuid} now'],
  ['an upper-case UUID', 'load 550E8400-E29B-41D4-A716-446655440000', 'load {uuid}'],
  ['a hash or an object id (hex with digits and letters)', 'commit a3714473 and 507f1f77bcf86cd799439011', 'commit {hex} and {hex}'],
  ['a hex-looking word without digits is a word', 'deadbeefcafe', 'deadbeefcafe'],
  ['a long token of letters and digits (nanoid, base64url)', 'session V1StGXR8Z5jdHi6BmyT', 'session {id}'],
  ['a long word with one digit is a word', 'processOrdersForCustomer2', 'processOrdersForCustomer2'],
  ['an e-mail address', 'notify jane.doe+news@example.co.uk', 'notify {email}'],
  ['an at sign that is no address', 'user @home', 'user @home'],
  ['a name without IDs is itself', 'GET /users/:id', 'GET /users/:id'],
  ['digits in other scripts are digits', 'commande ٤٢', 'commande {id}'],
  ['letters of other scripts make words', 'заказ 17', 'заказ {id}'],
  ['an empty name', '', ''],
];

describe('spanNameShape', () => {
  for (const [rule, name, shape] of SHAPES) {
    it(rule, () => {
      assert.equal(spanNameShape(name), shape);
      assert.equal(spanNameShape(shape), shape, 'a shape is its own shape');
    });
  }

  it('80 000 names "process order <n>" have one shape', () => {
    const shapes = new Set<string>();
    for (let n = 0; n < 80_000; n++) shapes.add(spanNameShape(`process order ${n}`));
    assert.deepEqual([...shapes], ['process order {id}']);
  });

  it('a huge name is cut, at a code point, and marked', () => {
    const shape = spanNameShape(`${'a'.repeat(4095)}😀 ${'7'.repeat(10_000)}`);
    assert.ok(shape.endsWith('…'));
    assert.ok(shape.length <= 4097);
    assert.ok(!/[\uD800-\uDBFF]…$/.test(shape), 'no half of a surrogate pair before the mark');
  });
});

const labelsOf = (...names: string[]) => names.map((name) => ({ span_id: '0000000000000001', span_name: name }));
const namesOf = (labelSets: readonly Record<string, string>[]) => new Set(labelSets.map((labels) => labels.span_name));

describe('SpanNameCap', () => {
  it('leaves a window within the cap as it is, and warns nothing', () => {
    const warnings: string[][] = [];
    const cap = new SpanNameCap(3, (names) => warnings.push([...names]));
    const window = labelsOf('a', 'b', 'c', 'a');
    cap.bound(window);
    assert.deepEqual(
      window.map((labels) => labels.span_name),
      ['a', 'b', 'c', 'a'],
    );
    assert.deepEqual(warnings, []);
  });

  it('past the cap, the names with the most spans stay and the rest share the overflow value, the cap counting it', () => {
    const warnings: string[][] = [];
    const cap = new SpanNameCap(3, (names) => warnings.push([...names]));
    const window = labelsOf('rare', 'busy', 'busy', 'busy', 'mid', 'mid', 'other');
    cap.bound(window);
    assert.deepEqual(namesOf(window), new Set(['busy', 'mid', SPAN_NAME_OVERFLOW]));
    assert.equal(window[0]!.span_id, '0000000000000001', 'other labels are left alone');
    assert.deepEqual(warnings, [['other', 'rare']], 'one warning, naming the names past the cap');
  });

  it('names kept in the window before keep their place over busier new ones', () => {
    const cap = new SpanNameCap(3, () => undefined);
    cap.bound(labelsOf('a', 'b'));
    const window = labelsOf('new', 'new', 'new', 'newer', 'newer', 'a', 'b');
    cap.bound(window);
    assert.deepEqual(namesOf(window), new Set(['a', 'b', SPAN_NAME_OVERFLOW]));
  });

  it('warns once per process, however many windows go over', () => {
    let warnings = 0;
    const cap = new SpanNameCap(2, () => warnings++);
    for (let w = 0; w < 5; w++) cap.bound(labelsOf(`x${w}`, `y${w}`, `z${w}`));
    assert.equal(warnings, 1);
  });
});
