/**
 * A part that fails to load, and bad input with nobody to reject it (the preload reads env; there
 * is no CLI in between): one warning each, the app's behaviour and exit code unchanged, and what
 * can still work keeps working. Hostile service names and labels reach Pyroscope sanitised, in a
 * form its ingest name parser (the receiver's faithful copy) accepts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture } from '../support/child.js';
import { startReceiver } from '../support/receiver.js';
import { post, startApp, steadyLoad, stop, warnings, workSpans } from './support/app.js';

test('the profiler native module fails to load: one warning, spans still flow, the app is unaffected', async () => {
  const receiver = await startReceiver();
  try {
    const app = await startApp({
      nodeArgs: ['--require', fixture('faults/no-pprof.cjs')],
      env: { PYROSCOPE_SERVER_ADDRESS: receiver.url, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '200' },
    });
    const load = await steadyLoad(app.base, { durationMs: 1500 });
    await receiver.waitFor(() => load.seqs.every((seq) => workSpans(receiver.spans).has(seq)), {
      timeoutMs: 10_000,
      description: 'every request has its span',
    });
    const exit = await stop(app);
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: null, signal: 'SIGTERM' });
    const lines = warnings(app.child.stderr);
    assert.equal(lines.length, 1, app.child.stderr);
    assert.match(lines[0]!, /profiler unavailable \(No native build was found .*\); tracing continues without profiles/);
    assert.equal(receiver.ingests.length, 0, 'no profiles without a profiler');
    // Spans are exported without the profile link attribute: there is nothing to link to.
    assert.ok([...workSpans(receiver.spans).values()].every((span) => span.attributes['pyroscope.profile.id'] === undefined));
  } finally {
    await receiver.close();
  }
});

/** Each bad value, and the text its one warning must carry (the variable's name). */
const BAD_ENV: Record<string, [value: string, names: RegExp]> = {
  PYROSCOPE_SERVER_ADDRESS: ['pyroscope:4040', /PYROSCOPE_SERVER_ADDRESS must be an http/],
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: ['ftp://collector/v1/traces', /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http/],
  PYROSCOPE_LABELS: ['env=prod,team', /PYROSCOPE_LABELS "team" is not key=value/],
  PYROSCOPE_FLUSH_INTERVAL_MS: ['5', /PYROSCOPE_FLUSH_INTERVAL_MS must be between 1000/],
  PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: ['99999999', /PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS must be between/],
  PYRO_RUN_UPLOAD_TIMEOUT_MS: ['-3', /PYRO_RUN_UPLOAD_TIMEOUT_MS must be a whole number/],
  PYRO_RUN_SHUTDOWN_TIMEOUT_MS: ['soon', /PYRO_RUN_SHUTDOWN_TIMEOUT_MS must be a whole number/],
  PYRO_RUN_PROFILES: ['cpu,mutex', /PYRO_RUN_PROFILES unknown profile type "mutex"/],
  PYRO_RUN_SPAN_SCOPE: ['everything', /PYRO_RUN_SPAN_SCOPE must be one of/],
  PYRO_RUN_LOG_LEVEL: ['loud', /PYRO_RUN_LOG_LEVEL must be one of/],
  PYRO_RUN_INSECURE_SKIP_TLS_VERIFY: ['please', /PYRO_RUN_INSECURE_SKIP_TLS_VERIFY must be on or off/],
  OTEL_EXPORTER_OTLP_PROTOCOL: ['smoke', /OTEL_EXPORTER_OTLP_PROTOCOL must be one of/],
  OTEL_BSP_SCHEDULE_DELAY: ['-1', /OTEL_BSP_SCHEDULE_DELAY must be a whole number/],
  OTEL_TRACES_SAMPLER: ['sometimes', /unknown OTEL_TRACES_SAMPLER "sometimes"/],
  OTEL_PROPAGATORS: ['tracecontext,carrier-pigeon', /propagator "carrier-pigeon" in OTEL_PROPAGATORS/],
};

/** The app's answers and exit, as its users and its parent see them. */
async function observe(
  options: Parameters<typeof startApp>[0],
): Promise<{ answers: number; code: number | null; signal: NodeJS.Signals | null; stderr: string; seqs: number[] }> {
  const app = await startApp(options);
  const load = await steadyLoad(app.base, { durationMs: 1000 });
  await post(app.base, '/exit/5');
  const exit = await app.child.exit(15_000);
  return { answers: load.requests, code: exit.code, signal: exit.signal, stderr: app.child.stderr, seqs: load.seqs };
}

test('bad values in env (no CLI to reject them): one warning each, naming the variable; the app behaves and exits the same', async () => {
  const receiver = await startReceiver();
  try {
    const bare = await observe({ bare: true });
    const env: Record<string, string> = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    for (const [name, [value]] of Object.entries(BAD_ENV)) env[name] = value;
    const bad = await observe({ env });

    assert.deepEqual({ code: bad.code, signal: bad.signal }, { code: bare.code, signal: bare.signal }, 'the same exit as without pyro-run');
    assert.equal(bare.code, 5);
    assert.ok(bad.answers > 0, 'every answer was right (steadyLoad checks each)');
    const lines = warnings(bad.stderr);
    for (const [name, [, pattern]] of Object.entries(BAD_ENV)) {
      const mine = lines.filter((line) => line.includes(name));
      assert.equal(mine.length, 1, `one warning for ${name}:\n${bad.stderr}`);
      assert.match(mine[0]!, pattern);
    }
    assert.equal(lines.length, Object.keys(BAD_ENV).length, `nothing else to warn about:\n${bad.stderr}`);
    // What was left valid still works: spans reach the base OTLP endpoint over the default protocol.
    const spans = workSpans(receiver.spans);
    assert.deepEqual(
      bad.seqs.filter((seq) => !spans.has(seq)),
      [],
      'every request has its span',
    );
    assert.ok(
      receiver.traceExports.every((e) => e.encoding === 'protobuf'),
      'http/protobuf, the default, replaced "smoke"',
    );
  } finally {
    await receiver.close();
  }
});

test('service names and labels that would break the ingest name syntax arrive sanitised and accepted', async () => {
  const receiver = await startReceiver();
  try {
    const longValue = 'v'.repeat(300);
    const serviceName = `shop {checkout}, a=b ✓ ${'n'.repeat(300)}`;
    const app = await startApp({
      env: {
        OTEL_SERVICE_NAME: serviceName,
        PYROSCOPE_SERVER_ADDRESS: receiver.url,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        PYROSCOPE_LABELS: `expr=a=b, braces={x}, uni=héllo→世界 🚀, quote="q", long=${longValue}, spaced=a b`,
      },
    });
    await steadyLoad(app.base, { durationMs: 1000 });
    await receiver.waitFor(() => receiver.ingests.length >= 2, { timeoutMs: 10_000, description: 'profiles accepted by the ingest parser' });
    await stop(app);

    const rejected = receiver.requests.filter((r) => r.endpoint === 'ingest' && r.outcome !== 'stored' && r.outcome !== 'ignored');
    assert.deepEqual(
      rejected.map((r) => `${r.status} ${r.error}`),
      [],
      'no upload was refused',
    );
    // [A-Za-z0-9_./-] only, at most 256 code points (grafana/pyroscope labelset/validate.go).
    const expectedService = `shop__checkout___a_b___${'n'.repeat(300)}`.slice(0, 256);
    for (const ingest of receiver.ingests) {
      assert.equal(ingest.serviceName, expectedService);
      assert.deepEqual(ingest.labels, {
        braces: '_x_',
        expr: 'a_b',
        long: 'v'.repeat(256),
        quote: '_q_',
        spaced: 'a_b',
        uni: 'héllo→世界_🚀',
      });
    }
    // Spans keep the name as given: only Pyroscope restricts it, and the warning says so.
    assert.ok(receiver.spans.every((span) => span.resource['service.name'] === serviceName));
    const lines = warnings(app.child.stderr);
    assert.equal(lines.length, 1, app.child.stderr);
    assert.match(lines[0]!, /service name .* has characters Pyroscope does not allow; profiles are filed as "shop__checkout/);
  } finally {
    await receiver.close();
  }
});
