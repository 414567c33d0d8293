/**
 * Profiles over the OTLP profiles signal (PYRO_RUN_PROFILES_EXPORTER=otlp): the attribution
 * workload (each request burns CPU in functions of its own) sends its windows to
 * /v1development/profiles of a receiver that reads them as Pyroscope's OTLP ingest does. Every
 * request is accepted, nothing goes to /ingest, the CPU lands as process_cpu, and ≥ 99% of the
 * hot functions' CPU carries, through the link table, the local root of the request that ran it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { attribution, linkedEnv, serverSpans } from '../support/linking.js';
import { serveThenTerminate } from '../support/load.js';
import { startReceiver } from '../support/receiver.js';

const SERVICE = 'otlp-shop';
const REQUESTS = 160;
const IN_FLIGHT = 24;

for (const gzip of [false, true]) {
  test(`the attribution workload over OTLP${gzip ? ', gzipped' : ''}: every span's CPU through its link, nothing to /ingest, nothing refused`, async (t) => {
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const app = runCli([fixture('apps/server.cjs')], {
      env: {
        OTEL_SERVICE_NAME: SERVICE,
        ...linkedEnv(receiver),
        PYRO_RUN_PROFILES_EXPORTER: 'otlp',
        ...(gzip ? { OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' } : {}),
        OTEL_EXPORTER_OTLP_PROFILES_HEADERS: 'x-scope-orgid=tenant-a',
        // Each hot function burns 3 ms of the app's CPU, not of the clock: 160 × 6 × 3 ms ≈ 1,440
        // CPU periods of 2 ms however little of a CPU a loaded machine gives the app (a wall-time
        // burn gave 278 once, under the 300 needed to judge).
        BURN_CLOCK: 'cpu',
      },
    });
    await serveThenTerminate(app, (i) => `/work/${i}`, REQUESTS, IN_FLIGHT);

    const profileRequests = receiver.requests.filter((request) => request.endpoint === 'profiles');
    assert.ok(profileRequests.length >= 2, `OTLP profile requests: ${profileRequests.length}`);
    assert.deepEqual(
      profileRequests.map((request) => request.status),
      profileRequests.map(() => 200),
      'the receiver refused nothing',
    );
    for (const request of profileRequests) {
      assert.equal(request.headers['content-encoding'], gzip ? 'gzip' : undefined);
      assert.equal(request.headers['x-scope-orgid'], 'tenant-a');
    }
    assert.equal(receiver.requests.filter((request) => request.endpoint === 'ingest').length, 0, 'nothing reaches /ingest');
    assert.equal(serverSpans(receiver).length, REQUESTS);

    const cpu = receiver.otlpProfiles.filter((series) => series.metricName === 'process_cpu');
    assert.ok(cpu.length > 0);
    for (const series of cpu) {
      assert.equal(series.profileTypeId, 'process_cpu:cpu:nanoseconds:cpu:nanoseconds');
      assert.equal(series.seriesLabels.service_name, SERVICE);
    }
    assert.ok(
      receiver.otlpProfiles.some((series) => series.profileTypeId === 'wall:wall:nanoseconds:wall:nanoseconds'),
      'the wall profile arrives as /ingest files it',
    );
    const share = attribution(receiver, cpu, undefined, (sample) => Math.round((sample.values.cpu ?? 0) / (cpu[0]?.period ?? 1)));
    t.diagnostic(
      `attribution ${(share.share * 100).toFixed(2)}%: ${share.right}/${share.total} hot-function CPU periods carry their request's span through the link`,
    );
    assert.ok(share.total >= 300, `too few hot-function CPU samples to judge: ${share.total}`);
    assert.ok(share.share >= 0.99, `attribution ${(share.share * 100).toFixed(2)}% (${share.wrong} of ${share.total} wrong)`);
    const linked = cpu.flatMap((series) => series.samples).filter((sample) => sample.labels.span_id !== undefined);
    assert.ok(linked.length > 0);
    assert.ok(
      linked.every((sample) => sample.traceId !== undefined && sample.labels.span_name !== undefined),
      'a linked sample carries its trace ID and its span_name',
    );
  });
}
