import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diagText } from '../../src/tracing/otel-diag.js';

describe('diagText: one line from an OpenTelemetry diag call', () => {
  const flattened = JSON.stringify({ stack: 'Error: export failed\n    at run (x.js:1:1)', message: 'export failed', name: 'Error' });
  const cases: { message: unknown; args: unknown[]; expected: string }[] = [
    { message: 'plain text', args: [], expected: 'plain text' },
    { message: new Error('an error object'), args: [], expected: 'an error object' },
    { message: flattened, args: [], expected: 'export failed' },
    { message: 'failed:', args: [new TypeError('bad type'), { code: 14 }], expected: 'failed: bad type {"code":14}' },
    { message: 'nothing more', args: [undefined], expected: 'nothing more' },
    { message: '{not json', args: [], expected: '{not json' },
    { message: '{"no":"message"}', args: [], expected: '{"no":"message"}' },
    { message: 'a number', args: [42n], expected: 'a number 42' },
  ];
  for (const c of cases) {
    it(c.expected, () => {
      assert.equal(diagText(c.message, c.args), c.expected);
    });
  }
});
