/**
 * HTTPS backends: certificates are verified by default, on both delivery paths (the steady-state
 * sender on the main thread and the final flush worker at exit); a private CA is trusted through
 * NODE_EXTRA_CA_CERTS; the explicit opt-out (--insecure-skip-tls-verify /
 * PYRO_RUN_INSECURE_SKIP_TLS_VERIFY) delivers with one warning at start. Credentials in the
 * server URL (`https://user:pass@host`) are sent as Basic auth and never printed. An OTLP
 * collector's own CA and a client certificate come from the OTel variables (the last tests).
 *
 * Each run sends profile windows every second (the sender) and holds spans back until exit
 * (OTEL_BSP_SCHEDULE_DELAY is longer than the run), so the spans can only arrive through the
 * final flush worker, started by the app's own process.exit().
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixture, runCli } from '../support/child.js';
import { type Receiver, startReceiver } from '../support/receiver.js';
import { post, startApp, stderrMatch, steadyLoad, uploadWarnings, warnings, windowChain, workSpans } from './support/app.js';
import { makeCerts, opensslMissing, type TestCerts } from './support/certs.js';

const PASSWORD = 'pw-TLS-SECRET-9911';
const OTLP_TOKEN = 'otlp-TLS-SECRET-5151';
const missing = opensslMissing();
let certs: TestCerts | undefined;

before(() => {
  if (!missing) certs = makeCerts();
});
after(() => certs?.remove());

const SPANS_ONLY_AT_EXIT = { OTEL_BSP_SCHEDULE_DELAY: '600000', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '100000', OTEL_BSP_MAX_QUEUE_SIZE: '100000' };

async function httpsReceiver(): Promise<Receiver> {
  return startReceiver({
    tls: { key: certs!.key, cert: certs!.cert },
    requireAuthorization: { ingest: `Basic ${Buffer.from(`user:${PASSWORD}`).toString('base64')}`, traces: `Bearer ${OTLP_TOKEN}` },
  });
}

/** The server URL with credentials in it, as some users configure Pyroscope. */
const withUserinfo = (url: string) => url.replace('https://', `https://user:${PASSWORD}@`);

function assertNoSecret(output: string): void {
  for (const secret of [PASSWORD, OTLP_TOKEN, encodeURIComponent(PASSWORD)]) assert.ok(!output.includes(secret), `a secret leaked:\n${output}`);
}

/** Everything promised arrived: windows while running (sender), every request's span and the last window at exit (worker). */
async function assertDelivered(receiver: Receiver, seqs: number[], exitAt: number): Promise<void> {
  const spans = workSpans(receiver.spans);
  const lost = seqs.filter((seq) => !spans.has(seq));
  assert.deepEqual(lost, [], 'every request has its span (sent by the final flush worker)');
  const chain = windowChain(receiver.ingests);
  assert.equal(chain.gap, undefined, 'no profile window is missing');
  assert.ok(chain.windows >= 2, `windows arrived: ${JSON.stringify(chain)}`);
  assert.ok(chain.until >= exitAt, `the last window, cut at exit, arrived (through the worker): ${JSON.stringify(chain)}, exit at ${exitAt}`);
}

test('default: a certificate nobody trusts is refused on both paths, with one clear warning; the app is unaffected', { skip: missing }, async () => {
  const receiver = await httpsReceiver();
  try {
    const app = await startApp({
      env: {
        PYROSCOPE_SERVER_ADDRESS: withUserinfo(receiver.url),
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${OTLP_TOKEN}`,
        ...SPANS_ONLY_AT_EXIT,
      },
    });
    await steadyLoad(app.base, { durationMs: 1500 });
    const [line] = await stderrMatch(app.child, /pyro-run: warning: profiles upload.*\n/);
    await post(app.base, '/exit/3');
    const exit = await app.child.exit(15_000);
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 3, signal: null }, app.child.stderr);

    assert.match(line, /certificate/i, 'the warning says it is about the certificate');
    assert.ok(line.includes(`${receiver.url}/ingest`), `names the endpoint without credentials: ${line}`);
    assert.match(line, /NODE_EXTRA_CA_CERTS/, 'and what to do about it');
    assert.equal(warnings(app.child.stderr).filter((l) => /^pyro-run: warning: (profiles|spans) upload/.test(l)).length, 1, app.child.stderr);
    // The final flush worker verifies too: the spans it carried were refused as well.
    assert.match(app.child.stderr, /final flush: \d+ of \d+ uploads to .* not delivered/);
    assert.equal(receiver.requests.length, 0, 'no HTTP request got through the failed handshakes');
    assertNoSecret(app.child.stderr + app.child.stdout);
  } finally {
    await receiver.close();
  }
});

test('NODE_EXTRA_CA_CERTS: the private CA is trusted on both paths, nothing to warn about', { skip: missing }, async () => {
  const receiver = await httpsReceiver();
  try {
    const app = await startApp({
      env: {
        NODE_EXTRA_CA_CERTS: certs!.caPath,
        PYROSCOPE_SERVER_ADDRESS: withUserinfo(receiver.url),
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${OTLP_TOKEN}`,
        ...SPANS_ONLY_AT_EXIT,
      },
    });
    const load = await steadyLoad(app.base, { durationMs: 1500 });
    await receiver.waitFor(() => receiver.ingests.length > 0, { timeoutMs: 10_000, description: 'profiles through the sender' });
    const exitAt = Date.now();
    await post(app.base, '/exit/0');
    const exit = await app.child.exit(15_000);
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, app.child.stderr);
    await assertDelivered(receiver, load.seqs, exitAt);
    assert.deepEqual(warnings(app.child.stderr), []);
    assertNoSecret(app.child.stderr + app.child.stdout);
  } finally {
    await receiver.close();
  }
});

test('--insecure-skip-tls-verify: delivered on both paths, one warning at start naming the risk', { skip: missing }, async () => {
  const receiver = await httpsReceiver();
  try {
    const child = runCli(
      [
        '--insecure-skip-tls-verify',
        '--server',
        withUserinfo(receiver.url),
        '--otlp-endpoint',
        receiver.url,
        '--otlp-headers',
        `authorization=Bearer%20${OTLP_TOKEN}`,
        '--flush-interval',
        '1000',
        '--service-name',
        'tls-app',
        '--',
        fixture('apps/server.cjs'),
      ],
      { env: SPANS_ONLY_AT_EXIT },
    );
    const base = `http://127.0.0.1:${(await child.line(/listening (\d+)/))[1]}`;
    const load = await steadyLoad(base, { durationMs: 1500 });
    await receiver.waitFor(() => receiver.ingests.length > 0, { timeoutMs: 10_000, description: 'profiles through the sender' });
    const exitAt = Date.now();
    await post(base, '/exit/0');
    const exit = await child.exit(15_000);
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, child.stderr);
    await assertDelivered(receiver, load.seqs, exitAt);
    const lines = warnings(child.stderr);
    assert.equal(lines.length, 1, child.stderr);
    assert.match(lines[0]!, /TLS certificate verification is off .*impersonate/);
    assertNoSecret(child.stderr + child.stdout);
  } finally {
    await receiver.close();
  }
});

/**
 * An OTLP collector behind a private CA, as OTel's docs set it up: the CA and, for mutual TLS, the
 * client certificate named by OTEL_EXPORTER_OTLP_CERTIFICATE, _CLIENT_CERTIFICATE and _CLIENT_KEY,
 * with nothing in NODE_EXTRA_CA_CERTS. Spans go every 200 ms (the sender) and the rest at exit
 * (the final flush worker); no Pyroscope, so every request the receiver sees is a span batch.
 */
async function collectorAskingForClientCertificates(): Promise<Receiver> {
  return startReceiver({ tls: { key: certs!.key, cert: certs!.cert, clientCa: certs!.caPem } });
}

const SPANS_WHILE_RUNNING = { OTEL_BSP_SCHEDULE_DELAY: '200', PYRO_RUN_PROFILES: 'none' };

async function runAgainstCollector(receiver: Receiver, env: Record<string, string>): Promise<{ seqs: number[]; stderr: string; sentWhileRunning: number }> {
  const app = await startApp({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...SPANS_WHILE_RUNNING, ...env } });
  const load = await steadyLoad(app.base, { durationMs: 1500 });
  const sentWhileRunning = receiver.traceExports.length;
  await post(app.base, '/exit/0');
  const exit = await app.child.exit(15_000);
  assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, app.child.stderr);
  return { seqs: load.seqs, stderr: app.child.stderr, sentWhileRunning };
}

test('OTEL_EXPORTER_OTLP_CERTIFICATE and a client certificate: spans reach a collector that asks for one, on both paths, nothing to warn about', {
  skip: missing,
}, async () => {
  const receiver = await collectorAskingForClientCertificates();
  try {
    const run = await runAgainstCollector(receiver, {
      OTEL_EXPORTER_OTLP_CERTIFICATE: certs!.caPath,
      OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: certs!.clientCertPath,
      OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: certs!.clientKeyPath,
    });
    assert.deepEqual(warnings(run.stderr), []);
    assert.ok(run.sentWhileRunning > 0, 'span batches arrived while the app ran (the sender)');
    const spans = workSpans(receiver.spans);
    assert.deepEqual(
      run.seqs.filter((seq) => !spans.has(seq)),
      [],
      'every request has its span, the last ones through the final flush worker',
    );
  } finally {
    await receiver.close();
  }
});

test('without the client certificate the collector refuses the handshake: one warning, the app unaffected', { skip: missing }, async () => {
  const receiver = await collectorAskingForClientCertificates();
  try {
    const run = await runAgainstCollector(receiver, { OTEL_EXPORTER_OTLP_CERTIFICATE: certs!.caPath });
    assert.equal(receiver.traceExports.length, 0, 'no span batch got through');
    assert.equal(uploadWarnings(run.stderr, 'spans').length, 1, run.stderr);
  } finally {
    await receiver.close();
  }
});

test('an OTLP TLS file that cannot be read: one warning naming the variable and the path, and the spans go with Node’s trust', { skip: missing }, async () => {
  const receiver = await startReceiver({ tls: { key: certs!.key, cert: certs!.cert } });
  try {
    const run = await runAgainstCollector(receiver, { OTEL_EXPORTER_OTLP_CERTIFICATE: '/nonexistent/collector-ca.pem', NODE_EXTRA_CA_CERTS: certs!.caPath });
    assert.deepEqual(warnings(run.stderr), [
      'pyro-run: warning: could not read OTEL_EXPORTER_OTLP_CERTIFICATE (/nonexistent/collector-ca.pem: ENOENT): not used',
    ]);
    const spans = workSpans(receiver.spans);
    assert.deepEqual(
      run.seqs.filter((seq) => !spans.has(seq)),
      [],
    );
  } finally {
    await receiver.close();
  }
});
