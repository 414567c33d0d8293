/**
 * Uploads through a real forward proxy (test/support/forward-proxy.ts, a process of its own), as
 * behind a corporate proxy: the backends are given by names only the proxy resolves
 * (`pyroscope.internal`, `otlp.internal`), so an upload that does not go through it fails with
 * ENOTFOUND. Every pipeline is covered: profiles and spans from the sender, the last window after
 * SIGTERM, and the final flush's worker at process.exit(); over absolute-form requests (http://
 * backends) and CONNECT tunnels (https://); with proxy credentials, which never reach any output.
 *
 * `direct.internal` is the one name the app resolves itself (test/fixtures/net/hosts.cjs, a
 * stand-in for an /etc/hosts entry), for NO_PROXY: it is reachable both ways, so only the proxy's
 * log tells which way an upload went.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Child, fixture, registerPath, runNode } from '../support/child.js';
import { type ForwardProxy, startProxy } from '../support/proxy-server.js';
import { type Receiver, startReceiver } from '../support/receiver.js';
import { type AppOptions, type RunningApp, post, startApp, steadyLoad, warnings, windowChain, workSpans } from '../faults/support/app.js';
import { makeCerts, opensslMissing, type TestCerts } from '../faults/support/certs.js';

const PROXIED_NAME = 'pyroscope.internal';
const TLS_NAME = 'otlp.internal';
const DIRECT_NAME = 'direct.internal';
const PROXY_HOSTS = { [PROXIED_NAME]: '127.0.0.1', [TLS_NAME]: '127.0.0.1', [DIRECT_NAME]: '127.0.0.1' };
const PROXY_USER = 'proxyuser';
const PROXY_PASSWORD = 'pr0xy-SECRET-p@ss-4242';
const SPANS_ONLY_AT_EXIT = { OTEL_BSP_SCHEDULE_DELAY: '600000', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '100000', OTEL_BSP_MAX_QUEUE_SIZE: '100000' };

const missingOpenssl = opensslMissing();
let certs: TestCerts | undefined;
before(() => {
  if (!missingOpenssl) certs = makeCerts([TLS_NAME]);
});
after(() => certs?.remove());

/** The receiver's URL under another host name. */
const named = (receiver: Receiver, name: string) => receiver.url.replace('127.0.0.1', name);
/** The app resolves `direct.internal` itself. */
const RESOLVES_DIRECT = ['--require', fixture('net/hosts.cjs')];
const RESOLVES_DIRECT_ENV = { PYRO_RUN_TEST_HOSTS: JSON.stringify({ [DIRECT_NAME]: '127.0.0.1' }) };

const proxiedTo = (proxy: ForwardProxy, path: string) => proxy.proxied.filter((p) => p.kind === 'request' && new URL(p.target).pathname === path);

function assertNoSecret(output: string): void {
  for (const secret of [PROXY_PASSWORD, encodeURIComponent(PROXY_PASSWORD), Buffer.from(`${PROXY_USER}:${PROXY_PASSWORD}`).toString('base64')]) {
    assert.ok(!output.includes(secret), `the proxy password leaked:\n${output}`);
  }
}

interface Backends {
  receiver: Receiver;
  proxy: ForwardProxy;
  /** Starts the app under test; it is killed when the test ends, should it fail before the app did. */
  app(options: AppOptions): Promise<RunningApp>;
  /** The same for a short script. */
  script(args: string[], env: Record<string, string>): Child;
}

/** `clientCertificates`: the receiver (https) asks every client for a certificate signed by the test CA. */
async function withBackends(
  run: (backends: Backends) => Promise<void>,
  options: { auth?: boolean; tls?: boolean; clientCertificates?: boolean } = {},
): Promise<void> {
  const clientCa = options.clientCertificates ? { clientCa: certs!.caPem } : {};
  const receiver = await startReceiver(options.tls ? { tls: { key: certs!.key, cert: certs!.cert, ...clientCa } } : {});
  const proxy = await startProxy({ hosts: PROXY_HOSTS, ...(options.auth ? { auth: { user: PROXY_USER, password: PROXY_PASSWORD } } : {}) });
  const children: Child[] = [];
  const track = (child: Child) => (children.push(child), child);
  try {
    await run({
      receiver,
      proxy,
      app: async (appOptions) => {
        const app = await startApp(appOptions);
        track(app.child);
        return app;
      },
      script: (args, env) => track(runNode(args, { env })),
    });
  } finally {
    for (const child of children) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
    await Promise.all([receiver.close(), proxy.close()]);
  }
}

test('HTTP_PROXY: profiles and spans go through the proxy, and so does the last window, after SIGTERM', async () => {
  await withBackends(async ({ receiver, proxy, app: start }) => {
    const backend = named(receiver, PROXIED_NAME);
    const app = await start({ env: { PYROSCOPE_SERVER_ADDRESS: backend, OTEL_EXPORTER_OTLP_ENDPOINT: backend, HTTP_PROXY: proxy.url } });
    const load = await steadyLoad(app.base, { durationMs: 1500 });
    await proxy.waitFor(() => proxiedTo(proxy, '/ingest').length > 0 && proxiedTo(proxy, '/v1/traces').length > 0, { timeoutMs: 15_000 });
    const stoppedAt = Date.now();
    app.child.process.kill('SIGTERM');
    const exit = await app.child.exit(15_000);
    assert.equal(exit.signal, 'SIGTERM', app.child.stderr);

    assert.deepEqual(warnings(app.child.stderr), [], 'nothing to warn about');
    const lost = load.seqs.filter((seq) => !workSpans(receiver.spans).has(seq));
    assert.deepEqual(lost, [], 'every request has its span');
    const chain = windowChain(receiver.ingests);
    assert.equal(chain.gap, undefined, 'no profile window is missing');
    assert.ok(chain.until >= stoppedAt, `the last window, cut at SIGTERM, arrived: ${JSON.stringify(chain)}`);
    // Everything the receiver got came through the proxy (nothing else can reach the name), as
    // absolute-form requests, the last window's after SIGTERM. (The proxy's lines come on a pipe
    // of their own: waited for, not assumed to be there already.)
    await proxy.waitFor(() => proxiedTo(proxy, '/ingest').length + proxiedTo(proxy, '/v1/traces').length === receiver.requests.length, {
      description: "every request the receiver got is in the proxy's log",
    });
    assert.ok(
      proxy.proxied.every((p) => p.kind === 'request' && p.status === 200 && p.target.startsWith(`${backend}/`)),
      JSON.stringify(proxy.proxied),
    );
    assert.ok(
      proxiedTo(proxy, '/ingest').some((p) => p.at >= stoppedAt),
      'the last window went through the proxy',
    );
  });
});

test('HTTPS_PROXY with credentials: https:// uploads through a CONNECT tunnel, the final flush worker at process.exit() too; the password never shows', {
  skip: missingOpenssl,
}, async () => {
  await withBackends(
    async ({ receiver, proxy, app: start }) => {
      const backend = named(receiver, TLS_NAME);
      const app = await start({
        env: {
          PYROSCOPE_SERVER_ADDRESS: backend,
          OTEL_EXPORTER_OTLP_ENDPOINT: backend,
          HTTPS_PROXY: proxy.url.replace('http://', `http://${PROXY_USER}:${encodeURIComponent(PROXY_PASSWORD)}@`),
          NODE_EXTRA_CA_CERTS: certs!.caPath,
          PYRO_RUN_LOG_LEVEL: 'debug',
          ...SPANS_ONLY_AT_EXIT,
        },
      });
      const load = await steadyLoad(app.base, { durationMs: 1500 });
      await receiver.waitFor(() => receiver.ingests.length > 0, { timeoutMs: 15_000 });
      const exitAt = Date.now();
      await post(app.base, '/exit/3');
      const exit = await app.child.exit(15_000);
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 3, signal: null }, app.child.stderr);

      assert.deepEqual(warnings(app.child.stderr), [], 'nothing to warn about');
      // Spans were held until exit: they can only have come from the final flush's worker.
      const lost = load.seqs.filter((seq) => !workSpans(receiver.spans).has(seq));
      assert.deepEqual(lost, [], 'every request has its span, sent by the worker');
      assert.ok(windowChain(receiver.ingests).until >= exitAt, 'the last window too');
      const tunnels = proxy.proxied.filter((p) => p.kind === 'tunnel');
      assert.ok(
        tunnels.length > 0 && tunnels.every((t) => t.target === `${TLS_NAME}:${new URL(backend).port}` && t.status === 200 && t.credential),
        JSON.stringify(proxy.proxied),
      );
      assert.ok(
        tunnels.some((t) => t.at >= exitAt),
        'the worker opened a tunnel of its own',
      );
      assert.ok(
        receiver.requests.every((r) => r.headers['proxy-authorization'] === undefined),
        'the proxy credentials never reach the backend',
      );
      assertNoSecret(app.child.stderr + app.child.stdout);
    },
    { auth: true, tls: true },
  );
});

test("through a CONNECT tunnel the backend's certificate is verified as on a direct connection, and the opt-out applies there too", {
  skip: missingOpenssl,
}, async () => {
  await withBackends(
    async ({ receiver, proxy, script }) => {
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: named(receiver, TLS_NAME), HTTPS_PROXY: proxy.url, PYRO_RUN_SHUTDOWN_TIMEOUT_MS: '1000' };
      const hello = ['--import', registerPath, fixture('apps/hello-span.cjs')];
      // No NODE_EXTRA_CA_CERTS: nothing vouches for the receiver's certificate.
      const refused = script(hello, env);
      assert.equal((await refused.exit(30_000)).code, 0, refused.stderr);
      const [warning] = warnings(refused.stderr).filter((line) => line.startsWith('pyro-run: warning: spans upload'));
      assert.ok(
        warning?.startsWith(
          `pyro-run: warning: spans upload to ${env.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces through proxy ${proxy.url} (HTTPS_PROXY) failed: `,
        ),
        refused.stderr,
      );
      assert.match(warning!, /certificate.*NODE_EXTRA_CA_CERTS/);
      assert.equal(receiver.requests.length, 0, 'nothing got through the refused handshakes');
      assert.ok(
        proxy.proxied.some((p) => p.kind === 'tunnel' && p.status === 200),
        'the tunnel itself was open',
      );

      const insecure = script(hello, { ...env, PYRO_RUN_INSECURE_SKIP_TLS_VERIFY: 'on' });
      assert.equal((await insecure.exit(30_000)).code, 0, insecure.stderr);
      assert.ok(
        receiver.spans.some((span) => span.name === 'say hello'),
        insecure.stderr,
      );
    },
    { tls: true },
  );
});

test('through a CONNECT tunnel, the OTLP collector’s own CA and a client certificate from the OTel variables apply inside it', {
  skip: missingOpenssl,
}, async () => {
  await withBackends(
    async ({ receiver, proxy, script }) => {
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: named(receiver, TLS_NAME),
        HTTPS_PROXY: proxy.url,
        PYRO_RUN_SHUTDOWN_TIMEOUT_MS: '1000',
        OTEL_EXPORTER_OTLP_CERTIFICATE: certs!.caPath,
      };
      const hello = ['--import', registerPath, fixture('apps/hello-span.cjs')];
      const refused = script(hello, env);
      assert.equal((await refused.exit(30_000)).code, 0, refused.stderr);
      assert.equal(warnings(refused.stderr).filter((line) => line.startsWith('pyro-run: warning: spans upload')).length, 1, refused.stderr);
      assert.equal(receiver.spans.length, 0, 'without a client certificate the collector takes nothing');

      const mutual = script(hello, {
        ...env,
        OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: certs!.clientCertPath,
        OTEL_EXPORTER_OTLP_CLIENT_KEY: certs!.clientKeyPath,
      });
      assert.equal((await mutual.exit(30_000)).code, 0, mutual.stderr);
      assert.deepEqual(warnings(mutual.stderr), []);
      assert.ok(
        receiver.spans.some((span) => span.name === 'say hello'),
        mutual.stderr,
      );
      assert.ok(proxy.proxied.filter((p) => p.kind === 'tunnel' && p.status === 200).length >= 2, 'both went through the tunnel');
    },
    { tls: true, clientCertificates: true },
  );
});

/**
 * The app with profiles for PROXIED_NAME and spans for DIRECT_NAME (which it resolves itself),
 * under `proxyEnv`; loaded until both arrived, then stopped with SIGTERM, with nothing to warn
 * about. Which way each went is for the caller to read off the proxies.
 */
async function profilesAndSpansThenStop({ receiver, app: start }: Backends, proxyEnv: Record<string, string>): Promise<void> {
  const app = await start({
    nodeArgs: RESOLVES_DIRECT,
    env: {
      ...RESOLVES_DIRECT_ENV,
      PYROSCOPE_SERVER_ADDRESS: named(receiver, PROXIED_NAME),
      OTEL_EXPORTER_OTLP_ENDPOINT: named(receiver, DIRECT_NAME),
      ...proxyEnv,
    },
  });
  await steadyLoad(app.base, { durationMs: 1000 });
  await receiver.waitFor(() => receiver.ingests.length > 0 && receiver.spans.length > 0, { timeoutMs: 15_000 });
  app.child.process.kill('SIGTERM');
  await app.child.exit(15_000);
  assert.deepEqual(warnings(app.child.stderr), [], 'nothing to warn about');
}

test('NO_PROXY: a backend it names goes direct, the other one through the proxy', async () => {
  await withBackends(async (backends) => {
    const { proxy } = backends;
    await profilesAndSpansThenStop(backends, { HTTP_PROXY: proxy.url, NO_PROXY: `localhost,.example.com,${DIRECT_NAME}` });
    await proxy.waitFor(() => proxiedTo(proxy, '/ingest').length > 0, { description: 'profiles went through the proxy' });
    assert.deepEqual(proxiedTo(proxy, '/v1/traces'), [], 'spans did not');
    assert.ok(
      proxy.proxied.every((p) => !p.target.includes(DIRECT_NAME)),
      JSON.stringify(proxy.proxied),
    );
  });
});

test('lower case wins: http_proxy over HTTP_PROXY, no_proxy over NO_PROXY', async () => {
  await withBackends(async (backends) => {
    const lower = backends.proxy;
    const upper = await startProxy({ hosts: PROXY_HOSTS });
    try {
      await profilesAndSpansThenStop(backends, { http_proxy: lower.url, HTTP_PROXY: upper.url, no_proxy: DIRECT_NAME, NO_PROXY: PROXIED_NAME });
      await lower.waitFor(() => proxiedTo(lower, '/ingest').length > 0, { description: 'profiles went through http_proxy, not exempted by NO_PROXY' });
      assert.deepEqual(proxiedTo(lower, '/v1/traces'), [], 'spans went direct, as no_proxy says');
      assert.deepEqual(upper.proxied, [], 'HTTP_PROXY was not used');
    } finally {
      await upper.close();
    }
  });
});

test('wrong proxy credentials: one warning naming the backend and the proxy, never the password', async () => {
  await withBackends(
    async ({ receiver, proxy, app: start }) => {
      const backend = named(receiver, PROXIED_NAME);
      const wrongPassword = `${PROXY_PASSWORD}-old`;
      const app = await start({
        env: {
          PYROSCOPE_SERVER_ADDRESS: backend,
          OTEL_TRACES_EXPORTER: 'none',
          HTTP_PROXY: proxy.url.replace('http://', `http://${PROXY_USER}:${encodeURIComponent(wrongPassword)}@`),
        },
      });
      await proxy.waitFor(() => proxy.proxied.some((p) => p.status === 407), { timeoutMs: 15_000 });
      app.child.process.kill('SIGTERM');
      await app.child.exit(15_000);

      const upload = warnings(app.child.stderr).filter((line) => line.startsWith('pyro-run: warning: profiles upload'));
      assert.equal(upload.length, 1, app.child.stderr);
      assert.ok(
        upload[0]!.startsWith(
          `pyro-run: warning: profiles upload to ${backend}/ingest through proxy ${proxy.url} (HTTP_PROXY) failed: Proxy Authentication Required (407)`,
        ),
        upload[0],
      );
      assert.ok(
        warnings(app.child.stderr).some(
          (line) =>
            /^pyro-run: warning: final flush: \d+ of \d+ uploads to /.test(line) && line.includes(` through proxy ${proxy.url} (HTTP_PROXY) not delivered`),
        ),
        app.child.stderr,
      );
      assert.equal(receiver.requests.length, 0);
      for (const secret of [wrongPassword, encodeURIComponent(wrongPassword), Buffer.from(`${PROXY_USER}:${wrongPassword}`).toString('base64')]) {
        assert.ok(!(app.child.stderr + app.child.stdout).includes(secret), `the proxy password leaked:\n${app.child.stderr}`);
      }
    },
    { auth: true },
  );
});

test('a short script through the proxy: its span arrives when its loop runs dry', async () => {
  await withBackends(async ({ receiver, proxy, script }) => {
    const backend = named(receiver, PROXIED_NAME);
    const app = script(['--import', registerPath, fixture('apps/hello-span.cjs')], {
      PYROSCOPE_SERVER_ADDRESS: backend,
      OTEL_EXPORTER_OTLP_ENDPOINT: backend,
      HTTP_PROXY: proxy.url,
    });
    const exit = await app.exit(30_000);
    assert.deepEqual({ code: exit.code, signal: exit.signal, stdout: app.stdout, stderr: app.stderr }, { code: 0, signal: null, stdout: 'hi\n', stderr: '' });
    assert.ok(
      receiver.spans.some((span) => span.name === 'say hello'),
      'its span arrived',
    );
    await proxy.waitFor(() => proxiedTo(proxy, '/v1/traces').length > 0, { description: 'through the proxy' });
  });
});

for (const through of [
  { what: 'an absolute-form request', tls: false, variable: 'HTTP_PROXY', name: PROXIED_NAME },
  { what: 'a CONNECT tunnel', tls: true, variable: 'HTTPS_PROXY', name: TLS_NAME },
] as const) {
  test(`an upload stuck behind the proxy (${through.what}) does not keep the app alive once its own work is done`, {
    skip: through.tls && missingOpenssl,
  }, async (t) => {
    await withBackends(
      async ({ receiver, proxy, app: start }) => {
        receiver.setBehaviour('ingest', { hang: true });
        const backend = named(receiver, through.name);
        // An upload may take a minute; the flush at exit one second.
        const env = {
          PYROSCOPE_SERVER_ADDRESS: backend,
          OTEL_TRACES_EXPORTER: 'none',
          [through.variable]: proxy.url,
          PYRO_RUN_UPLOAD_TIMEOUT_MS: '60000',
          PYRO_RUN_SHUTDOWN_TIMEOUT_MS: '1000',
        };
        const app = await start({ env: through.tls ? { ...env, NODE_EXTRA_CA_CERTS: certs!.caPath } : env });
        await receiver.waitFor(() => receiver.requests.some((r) => r.outcome === 'hung'), { timeoutMs: 15_000, description: 'a profile upload hangs' });
        const closedAt = Date.now();
        await post(app.base, '/close');
        const exit = await app.child.exit(90_000);
        const ms = Date.now() - closedAt;
        t.diagnostic(`exit ${ms} ms after the app closed its server`);
        assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, app.child.stderr);
        const [undelivered] = warnings(app.child.stderr).filter((line) => line.includes('final flush'));
        assert.match(undelivered ?? '', /^pyro-run: warning: final flush: \d+ of \d+ uploads to /);
        assert.ok(
          undelivered!.endsWith(
            `uploads to ${backend}/ingest through proxy ${proxy.url} (${through.variable}) not delivered within the 1000 ms shutdown deadline`,
          ),
          undelivered,
        );
        // Its connection to the proxy, busy with the upload, would otherwise hold the loop open for the upload's 60 s.
        assert.ok(ms < 15_000, `exit ${ms} ms after the app closed its server`);
      },
      { tls: through.tls },
    );
  });
}
