/**
 * One huge span takes no innocent span down (issue 16): 30 spans with a 1 MB attribute among 210
 * ordinary ones leave in one batch at exit, to an OTLP endpoint behind a proxy that refuses bodies
 * over 1 MiB (nginx's default). Every ordinary span arrives; and with the attribute value limit
 * of OTel's env set, every span does, its attribute cut to the limit.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, registerPath, runNode } from '../support/child.js';
import { startReceiver } from '../support/receiver.js';

const MIB = 1024 * 1024;

async function run(env: Record<string, string>) {
  const receiver = await startReceiver({ maxTracesBodyBytes: MIB });
  const app = runNode(['--import', registerPath, fixture('apps/huge-spans.cjs')], {
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, PYROSCOPE_SERVER_ADDRESS: receiver.url, ...env },
  });
  const exit = await app.exit();
  await receiver.close();
  assert.equal(exit.code, 0, app.stderr);
  const names = receiver.spans.map((span) => span.name);
  return {
    receiver,
    stderr: app.stderr,
    ordinary: names.filter((name) => name.startsWith('ordinary')),
    huge: receiver.spans.filter((span) => span.name.startsWith('huge')),
  };
}

test('spans with 1 MB attributes are refused alone: every ordinary span of their batch arrives', async () => {
  const { receiver, stderr, ordinary, huge } = await run({});
  assert.equal(ordinary.length, 210, 'every ordinary span');
  assert.equal(huge.length, 0, 'each huge span is over the proxy limit on its own');
  const refused = receiver.requests.filter((request) => request.endpoint === 'traces' && request.status === 413);
  assert.equal(refused.length, 30, 'one refusal per huge span');
  const warnings = stderr.split('\n').filter((line) => line.includes('warning'));
  assert.equal(warnings.length, 1, stderr);
  assert.match(warnings[0]!, /spans upload rejected \(.*answered 413: .*413 Request Entity Too Large.*\); dropping 1 span \(1\.0 MB\)/);
});

test('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT and OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT cut attribute values: every span arrives', async () => {
  for (const name of ['OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT', 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT']) {
    const { stderr, ordinary, huge } = await run({ [name]: '1000' });
    assert.equal(ordinary.length, 210, name);
    assert.equal(huge.length, 30, name);
    assert.ok(
      huge.every((span) => span.attributes['http.request.body'] === 'b'.repeat(1000)),
      `${name}: values cut to 1000 characters`,
    );
    assert.doesNotMatch(stderr, /warning/);
  }
});
