/**
 * `signalRoutes(env)` as tables: for each signal (spans, profiles, metrics, logs), which exporters,
 * which OTLP endpoint (the signal's own, else the base URL plus the signal's path, else the
 * default), which headers (the signal's over the shared ones), and whose code sends it — pyro-run's
 * sender or the OpenTelemetry SDK's exporter — by the OTel exporter spec and sdk-node's reading of
 * OTEL_<SIGNAL>S_EXPORTER.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Env, type Problem, type SignalRoutes, signalRoutes } from '../../src/config/index.js';

const GIVEN = { uploadTimeoutMs: 10_000, recording: { dir: undefined, runMb: undefined, totalMb: undefined, quiet: false } };
/** A Pyroscope server: a destination, so nothing falls back to local mode. */
const REMOTE: Env = { PYROSCOPE_SERVER_ADDRESS: 'http://pyroscope:4040' };
const BASE = 'http://collector:4318';

function routesOf(env: Env): { routes: SignalRoutes; problems: Problem[] } {
  const problems: Problem[] = [];
  return { routes: signalRoutes(env, GIVEN, problems), problems };
}

function clean(env: Env): SignalRoutes {
  const { routes, problems } = routesOf(env);
  assert.deepEqual(problems, [], `no problems expected for ${JSON.stringify(env)}`);
  return routes;
}

type Case = { rule: string; env: Env; exporters: string[]; sender: string | undefined };

/** One test per case: the exporters a remote set-up with `env` lists for the signal, and who sends its OTLP export. */
function senderCases(pick: (routes: SignalRoutes) => { exporters: readonly string[]; sender?: string }, cases: readonly Case[]): void {
  for (const c of cases) {
    it(c.rule, () => {
      const route = pick(clean({ ...REMOTE, ...c.env }));
      assert.deepEqual(route.exporters, c.exporters);
      assert.equal(route.sender, c.sender);
    });
  }
}

describe('spans: OTEL_TRACES_EXPORTER and the protocol decide who sends them', () => {
  const cases: Case[] = [
    { rule: 'spans go through our sender when the protocol is http/protobuf (the default)', env: {}, exporters: ['otlp'], sender: 'pyro-run' },
    {
      rule: 'spans go through our sender when the protocol is http/json',
      env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
      exporters: ['otlp'],
      sender: 'pyro-run',
    },
    {
      rule: "spans go through the SDK's exporter when the protocol is grpc",
      env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      exporters: ['otlp'],
      sender: 'otel-sdk',
    },
    {
      rule: 'the traces protocol stands over the shared one',
      env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' },
      exporters: ['otlp'],
      sender: 'pyro-run',
    },
    { rule: 'console alone sends nothing over OTLP', env: { OTEL_TRACES_EXPORTER: 'console' }, exporters: ['console'], sender: undefined },
    { rule: 'none sends spans nowhere', env: { OTEL_TRACES_EXPORTER: 'none' }, exporters: [], sender: undefined },
    {
      rule: "console beside otlp over grpc: both, the OTLP leg the SDK's",
      env: { OTEL_TRACES_EXPORTER: 'console,otlp', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' },
      exporters: ['console', 'otlp'],
      sender: 'otel-sdk',
    },
  ];
  senderCases((routes) => routes.traces, cases);

  it('prometheus is no span exporter: a problem, and otlp stands in', () => {
    const { routes, problems } = routesOf({ ...REMOTE, OTEL_TRACES_EXPORTER: 'prometheus' });
    assert.deepEqual(
      problems.map((p) => p.env),
      ['OTEL_TRACES_EXPORTER'],
    );
    assert.deepEqual(routes.traces.exporters, ['otlp']);
    assert.equal(routes.traces.sender, 'pyro-run');
  });

  it('in local mode nobody sends spans over OTLP: the recording takes them', () => {
    const routes = clean({});
    assert.notEqual(routes.local, undefined);
    assert.equal(routes.traces.sender, undefined);
  });
});

describe('spans: the endpoint is the signal’s own, else the base URL plus /v1/traces, else the exporter’s default', () => {
  const cases: { rule: string; env: Env; endpoint: string | undefined }[] = [
    {
      rule: 'the signal endpoint is used as given, over the base URL',
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:4318/custom', OTEL_EXPORTER_OTLP_ENDPOINT: BASE },
      endpoint: 'http://t:4318/custom',
    },
    { rule: 'the base URL gets /v1/traces over OTLP/HTTP', env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE }, endpoint: `${BASE}/v1/traces` },
    {
      rule: 'the base URL is used as it is over grpc',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      endpoint: 'http://collector:4317',
    },
    { rule: 'neither set: none, for the exporter’s default', env: {}, endpoint: undefined },
  ];
  for (const c of cases) {
    it(c.rule, () => assert.equal(clean({ ...REMOTE, ...c.env }).traces.endpoint, c.endpoint));
  }
});

describe('metrics: OTEL_METRICS_EXPORTER and the protocol decide who sends them', () => {
  const cases: Case[] = [
    {
      rule: 'metrics go through our sender when the protocol is http/protobuf',
      env: { OTEL_METRICS_EXPORTER: 'otlp' },
      exporters: ['otlp'],
      sender: 'pyro-run',
    },
    {
      rule: 'metrics go through our sender when the protocol is http/json',
      env: { OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json' },
      exporters: ['otlp'],
      sender: 'pyro-run',
    },
    {
      rule: "metrics go through the SDK's exporter when the protocol is grpc",
      env: { OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      exporters: ['otlp'],
      sender: 'otel-sdk',
    },
    { rule: 'prometheus alone is no OTLP export', env: { OTEL_METRICS_EXPORTER: 'prometheus' }, exporters: ['prometheus'], sender: undefined },
    { rule: 'console alone is no OTLP export', env: { OTEL_METRICS_EXPORTER: 'console' }, exporters: ['console'], sender: undefined },
    {
      rule: 'prometheus beside otlp leaves the OTLP leg ours',
      env: { OTEL_METRICS_EXPORTER: 'prometheus,otlp' },
      exporters: ['otlp', 'prometheus'],
      sender: 'pyro-run',
    },
    { rule: 'none lists no metrics exporter', env: { OTEL_METRICS_EXPORTER: 'none' }, exporters: [], sender: undefined },
    { rule: 'none anywhere in the list wins', env: { OTEL_METRICS_EXPORTER: 'otlp,none' }, exporters: [], sender: undefined },
    { rule: 'unset: no metrics', env: {}, exporters: [], sender: undefined },
  ];
  senderCases((routes) => routes.metrics, cases);

  it("in local mode, which records no metrics, the OTLP leg is the SDK's", () => {
    const routes = clean({ OTEL_METRICS_EXPORTER: 'otlp' });
    assert.notEqual(routes.local, undefined);
    assert.equal(routes.metrics.sender, 'otel-sdk');
  });
});

describe('logs: OTEL_LOGS_EXPORTER and the protocol decide who sends them', () => {
  const cases: Case[] = [
    { rule: 'logs go through our sender when the protocol is http/protobuf', env: { OTEL_LOGS_EXPORTER: 'otlp' }, exporters: ['otlp'], sender: 'pyro-run' },
    {
      rule: 'logs go through our sender when the protocol is http/json',
      env: { OTEL_LOGS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
      exporters: ['otlp'],
      sender: 'pyro-run',
    },
    {
      rule: "logs go through the SDK's exporter when the protocol is grpc",
      env: { OTEL_LOGS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'grpc' },
      exporters: ['otlp'],
      sender: 'otel-sdk',
    },
    { rule: 'console alone is no OTLP export', env: { OTEL_LOGS_EXPORTER: 'console' }, exporters: ['console'], sender: undefined },
    { rule: 'console beside otlp leaves the OTLP leg ours', env: { OTEL_LOGS_EXPORTER: 'console,otlp' }, exporters: ['otlp', 'console'], sender: 'pyro-run' },
    { rule: 'none lists no logs exporter', env: { OTEL_LOGS_EXPORTER: 'none' }, exporters: [], sender: undefined },
  ];
  senderCases((routes) => routes.logs, cases);

  it('prometheus is no logs exporter: a problem, and the others stand', () => {
    const { routes, problems } = routesOf({ ...REMOTE, OTEL_LOGS_EXPORTER: 'prometheus,otlp' });
    assert.deepEqual(
      problems.map((p) => [p.env, p.instead]),
      [['OTEL_LOGS_EXPORTER', 'ignored']],
    );
    assert.deepEqual(routes.logs.exporters, ['otlp']);
    assert.equal(routes.logs.sender, 'pyro-run');
  });
});

describe('profiles: PYRO_RUN_PROFILES_EXPORTER decides where; pyro-run always sends them', () => {
  it('profiles go through our sender to Pyroscope when it has an address', () => {
    const routes = clean(REMOTE);
    assert.equal(routes.profiles.exporter, 'pyroscope');
    assert.equal(routes.profiles.sender, 'pyro-run');
    assert.equal(routes.pyroscopeServer, 'http://pyroscope:4040');
  });

  it('profiles to Pyroscope without an address are not sent', () => {
    const routes = clean({ OTEL_EXPORTER_OTLP_ENDPOINT: BASE });
    assert.equal(routes.profiles.sender, undefined);
  });

  it('profiles over OTLP go through our sender, over OTLP/HTTP whatever the protocol spans use', () => {
    const routes = clean({ PYRO_RUN_PROFILES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    assert.equal(routes.profiles.sender, 'pyro-run');
    assert.equal(routes.profiles.endpoint, 'http://localhost:4318/v1development/profiles');
  });
});

/** The OTLP endpoint rules of the signals that always have one: profiles, metrics, logs. */
const SIGNALS = [
  {
    name: 'profiles',
    pick: (r: SignalRoutes) => r.profiles,
    env: { PYRO_RUN_PROFILES_EXPORTER: 'otlp' },
    own: 'OTEL_EXPORTER_OTLP_PROFILES',
    path: '/v1development/profiles',
  },
  { name: 'metrics', pick: (r: SignalRoutes) => r.metrics, env: { OTEL_METRICS_EXPORTER: 'otlp' }, own: 'OTEL_EXPORTER_OTLP_METRICS', path: '/v1/metrics' },
  { name: 'logs', pick: (r: SignalRoutes) => r.logs, env: { OTEL_LOGS_EXPORTER: 'otlp' }, own: 'OTEL_EXPORTER_OTLP_LOGS', path: '/v1/logs' },
] as const;

for (const signal of SIGNALS) {
  describe(`${signal.name}: the endpoint is the signal’s own, else the base URL plus ${signal.path}, else the default`, () => {
    const endpoint = (env: Env) => signal.pick(clean({ ...REMOTE, ...signal.env, ...env })).endpoint;
    it(`the ${signal.own}_ENDPOINT is used as given, over the base URL`, () => {
      assert.equal(endpoint({ [`${signal.own}_ENDPOINT`]: 'https://own.example/x/', OTEL_EXPORTER_OTLP_ENDPOINT: BASE }), 'https://own.example/x/');
    });
    it(`the base URL gets ${signal.path}`, () => assert.equal(endpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: `${BASE}/` }), `${BASE}${signal.path}`));
    it(`neither set: http://localhost:4318${signal.path}`, () => assert.equal(endpoint({}), `http://localhost:4318${signal.path}`));
  });
}

describe('headers: the signal’s own over the shared ones, for every signal', () => {
  const shared = { OTEL_EXPORTER_OTLP_HEADERS: 'a=1,b=2' };
  const cases = [
    { name: 'spans', env: {}, own: 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', pick: (r: SignalRoutes) => r.traces.headers },
    {
      name: 'profiles',
      env: { PYRO_RUN_PROFILES_EXPORTER: 'otlp' },
      own: 'OTEL_EXPORTER_OTLP_PROFILES_HEADERS',
      pick: (r: SignalRoutes) => r.profiles.headers,
    },
    { name: 'metrics', env: { OTEL_METRICS_EXPORTER: 'otlp' }, own: 'OTEL_EXPORTER_OTLP_METRICS_HEADERS', pick: (r: SignalRoutes) => r.metrics.headers },
    { name: 'logs', env: { OTEL_LOGS_EXPORTER: 'otlp' }, own: 'OTEL_EXPORTER_OTLP_LOGS_HEADERS', pick: (r: SignalRoutes) => r.logs.headers },
  ];
  for (const c of cases) {
    it(`${c.name} keep the shared headers and take their own where both name one`, () => {
      assert.deepEqual(c.pick(clean({ ...REMOTE, ...shared, ...c.env, [c.own]: 'B=3' })), { a: '1', b: '3' });
    });
    it(`${c.name} take the shared headers when they have none of their own`, () => {
      assert.deepEqual(c.pick(clean({ ...REMOTE, ...shared, ...c.env })), { a: '1', b: '2' });
    });
  }
});

describe('compression, timeout and TLS files: the signal’s own over the shared ones, for every signal', () => {
  const shared = { OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip', OTEL_EXPORTER_OTLP_TIMEOUT: '3000', OTEL_EXPORTER_OTLP_CERTIFICATE: 'ca.pem' };
  const cases = [
    { name: 'spans', env: {}, own: 'OTEL_EXPORTER_OTLP_TRACES', pick: (r: SignalRoutes) => r.traces },
    { name: 'profiles', env: { PYRO_RUN_PROFILES_EXPORTER: 'otlp' }, own: 'OTEL_EXPORTER_OTLP_PROFILES', pick: (r: SignalRoutes) => r.profiles },
    { name: 'metrics', env: { OTEL_METRICS_EXPORTER: 'otlp' }, own: 'OTEL_EXPORTER_OTLP_METRICS', pick: (r: SignalRoutes) => r.metrics },
    { name: 'logs', env: { OTEL_LOGS_EXPORTER: 'otlp' }, own: 'OTEL_EXPORTER_OTLP_LOGS', pick: (r: SignalRoutes) => r.logs },
  ];
  for (const c of cases) {
    it(`${c.name} take the shared ones when they have none of their own`, () => {
      const { gzip, timeoutMs, tls } = c.pick(clean({ ...REMOTE, ...shared, ...c.env }));
      assert.deepEqual({ gzip, timeoutMs, tls }, { gzip: true, timeoutMs: 3000, tls: { ca: { env: 'OTEL_EXPORTER_OTLP_CERTIFICATE', path: 'ca.pem' } } });
    });
    it(`${c.name} take their own where set`, () => {
      const own = { [`${c.own}_COMPRESSION`]: 'none', [`${c.own}_TIMEOUT`]: '2000', [`${c.own}_CERTIFICATE`]: 'own.pem' };
      const { gzip, timeoutMs, tls } = c.pick(clean({ ...REMOTE, ...shared, ...c.env, ...own }));
      assert.deepEqual({ gzip, timeoutMs, tls }, { gzip: false, timeoutMs: 2000, tls: { ca: { env: `${c.own}_CERTIFICATE`, path: 'own.pem' } } });
    });
  }

  it("metrics and logs sent by the SDK's gRPC exporter take no TLS files from us: it reads its own", () => {
    const routes = clean({ ...REMOTE, ...shared, OTEL_METRICS_EXPORTER: 'otlp', OTEL_LOGS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    assert.deepEqual([routes.metrics.tls, routes.logs.tls], [{}, {}]);
  });
});

describe('a destination nobody can reach is no route', () => {
  it('behind a proxy that cannot be used, the uploads it would carry have no sender', () => {
    const { routes, problems } = routesOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example:4318',
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_LOGS_EXPORTER: 'otlp',
      HTTP_PROXY: 'ftp://proxy.corp',
    });
    assert.deepEqual(
      problems.map((p) => p.instead),
      ['spans and metrics and logs are not sent (not around the proxy either)'],
    );
    assert.deepEqual(routes.traces.exporters, []);
    assert.equal(routes.traces.sender, undefined);
    assert.equal(routes.metrics.sender, undefined);
    assert.equal(routes.logs.endpoint, undefined);
    assert.equal(routes.local, undefined, 'still a remote set-up');
  });

  it('a wrong endpoint sends no spans, with the problem saying so', () => {
    const { routes, problems } = routesOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://collector:4318' });
    assert.deepEqual(
      problems.map((p) => [p.env, p.instead]),
      [['OTEL_EXPORTER_OTLP_ENDPOINT', 'spans are not sent']],
    );
    assert.deepEqual(routes.traces.exporters, []);
    assert.equal(routes.traces.sender, undefined);
  });
});
