/**
 * `readConfig(env, facts)` as tables: the defaults, every setting's accepted values, every bad
 * value (one Problem naming the env var, the default in its place), secrets kept out of messages,
 * and the OTLP endpoint/protocol rules. The flag ↔ env table itself is checked for consistency.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ENV,
  SECRET_ENV,
  SETTINGS,
  parseHeaders,
  parseLabels,
  parseUrl,
  readConfig,
  settingByFlag,
  type Config,
  type Env,
  type Problem,
  type Setting,
} from '../../src/config/index.js';
import { FIRST_FULL_BATCH } from '../../src/util/batcher.js';

/** What an app gets when nothing is configured. Written out, not derived from the code. */
const DEFAULTS: Config = {
  // Not OTel's unknown_service:node: Pyroscope rejects ':' in a service name, and spans and
  // profiles must carry the same one.
  serviceName: 'unknown_service',
  pyroscope: {
    serverAddress: undefined,
    authToken: undefined,
    basicAuthUser: undefined,
    basicAuthPassword: undefined,
    tenantId: undefined,
    headers: {},
    labels: {},
    uploadTimeoutMs: 10_000,
    spoolDir: undefined,
  },
  // Certificates are verified unless the user explicitly opts out.
  tlsSkipVerify: false,
  // Uploads go direct unless HTTP_PROXY / HTTPS_PROXY say otherwise.
  proxy: undefined,
  profiles: ['cpu', 'wall'],
  workers: true,
  quiet: false,
  spanScope: 'root',
  // Nothing configured means local mode, where trace_id costs nothing (no Pyroscope series).
  local: { dir: 'pyro-run-data', capBytes: 200 * 1024 * 1024, totalCapBytes: 1024 * 1024 * 1024, quiet: false, forced: false },
  sourceMaps: true,
  traceIdLabel: true,
  flushIntervalMs: 15_000,
  samplingIntervalMicros: 10_000,
  maxSpanNames: 100,
  blockThresholdMs: 100,
  heap: { intervalBytes: 524_288, stackDepth: 64 },
  shutdownTimeoutMs: 5_000,
  orphanedApp: 'stop',
  skip: [],
  logLevel: 'warn',
  traces: {
    exporters: ['otlp'],
    protocol: 'http/protobuf',
    endpoint: undefined,
    headers: {},
    settingsGiven: [],
    batch: { maxQueueSize: 2048, maxExportBatchSize: 512, scheduledDelayMillis: 5000, firstFullBatch: FIRST_FULL_BATCH },
    // No files of its own: the endpoint is reached with Node's trust, without a client certificate.
    tls: {},
    gzip: false,
    timeoutMs: 10_000,
    dbStatements: 'sanitized',
  },
  resourceAttributes: {},
  profilesExport: { exporter: 'pyroscope', endpoint: 'http://localhost:4318/v1development/profiles', headers: {}, gzip: false, tls: {}, timeoutMs: 10_000 },
  sdkDisabled: false,
  metricsRequested: false,
  logsRequested: false,
  // Metrics are not asked for; were they, the OTel defaults would apply.
  metrics: {
    exporters: [],
    protocol: 'http/protobuf',
    endpoint: 'http://localhost:4318/v1/metrics',
    headers: {},
    tls: {},
    gzip: false,
    timeoutMs: 10_000,
    intervalMs: 60_000,
    collectTimeoutMs: 30_000,
    temporality: 'cumulative',
    prometheus: {},
  },
  // Logs are not asked for; were they, the OTel defaults would apply.
  logs: {
    exporters: [],
    protocol: 'http/protobuf',
    endpoint: 'http://localhost:4318/v1/logs',
    headers: {},
    batch: { maxQueueSize: 2048, maxExportBatchSize: 512, scheduledDelayMillis: 1000, firstFullBatch: FIRST_FULL_BATCH },
    tls: {},
    gzip: false,
    timeoutMs: 10_000,
  },
};

function clean(env: Env, facts?: { packageName?: string }): Config {
  const { config, problems } = readConfig(env, facts);
  assert.deepEqual(problems, [], `no problems expected for ${JSON.stringify(env)}`);
  return config;
}

describe('defaults', () => {
  it('an empty env yields the documented defaults and no problems', () => {
    assert.deepEqual(clean({}), DEFAULTS);
  });

  it('blank and whitespace-only values count as not set', () => {
    const env: Record<string, string> = {};
    for (const setting of Object.values(SETTINGS) as Setting[]) env[setting.env] = '   ';
    for (const name of Object.values(ENV)) env[name] = '';
    assert.deepEqual(clean(env), DEFAULTS);
  });

  // Each --help default must be what the app actually gets. otlpEndpoint is left out on purpose:
  // its help text shows the exporter's own default, which pyro-run leaves to the exporter (endpoint undefined).
  const defaultOf: Partial<Record<keyof typeof SETTINGS, (c: Config) => unknown>> = {
    profiles: (c) => c.profiles,
    spanScope: (c) => c.spanScope,
    quiet: (c) => c.local?.quiet,
    maxRunSize: (c) => (c.local?.capBytes ?? 0) / (1024 * 1024),
    maxTotalSize: (c) => (c.local?.totalCapBytes ?? 0) / (1024 * 1024),
    sourceMaps: (c) => c.sourceMaps,
    flushInterval: (c) => c.flushIntervalMs,
    samplingInterval: (c) => c.samplingIntervalMicros,
    blockThreshold: (c) => c.blockThresholdMs,
    uploadTimeout: (c) => c.pyroscope.uploadTimeoutMs,
    insecureSkipTlsVerify: (c) => c.tlsSkipVerify,
    shutdownTimeout: (c) => c.shutdownTimeoutMs,
    logLevel: (c) => c.logLevel,
    tracesExporter: (c) => c.traces.exporters,
    otlpProtocol: (c) => c.traces.protocol,
  };
  for (const [key, pick] of Object.entries(defaultOf) as [keyof typeof SETTINGS, (c: Config) => unknown][]) {
    it(`--help default of --${SETTINGS[key].flag} matches the real default`, () => {
      const setting = SETTINGS[key] as Setting;
      assert.ok(setting.defaultText !== undefined, 'has a default text');
      const parsed = setting.parse(setting.defaultText);
      assert.ok(parsed.ok, `default text "${setting.defaultText}" parses`);
      assert.deepEqual(parsed.value, pick(DEFAULTS));
      assert.deepEqual(pick(clean({ [setting.env]: setting.defaultText })), pick(DEFAULTS));
    });
  }
});

describe('local mode', () => {
  const cases: { name: string; env: Env; local: Config['local']; traceIdLabel: boolean }[] = [
    {
      name: 'nothing configured: record into ./pyro-run-data',
      env: {},
      local: { dir: 'pyro-run-data', capBytes: 200 * 1024 * 1024, totalCapBytes: 1024 * 1024 * 1024, quiet: false, forced: false },
      traceIdLabel: true,
    },
    { name: 'a Pyroscope server means sending', env: { PYROSCOPE_SERVER_ADDRESS: 'http://p:4040' }, local: undefined, traceIdLabel: false },
    { name: 'an OTLP endpoint means sending', env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, local: undefined, traceIdLabel: false },
    {
      name: 'an OTLP traces endpoint means sending',
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' },
      local: undefined,
      traceIdLabel: false,
    },
    { name: 'a chosen traces exporter means sending', env: { OTEL_TRACES_EXPORTER: 'console' }, local: undefined, traceIdLabel: false },
    {
      name: 'an output dir forces local mode even with endpoints',
      env: { PYRO_RUN_OUTPUT_DIR: '/tmp/rec', PYROSCOPE_SERVER_ADDRESS: 'http://p:4040', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' },
      local: { dir: '/tmp/rec', capBytes: 200 * 1024 * 1024, totalCapBytes: 1024 * 1024 * 1024, quiet: false, forced: true },
      traceIdLabel: true,
    },
    {
      name: 'cap and quiet',
      env: { PYRO_RUN_MAX_RUN_MB: '5', PYRO_RUN_QUIET: 'on' },
      local: { dir: 'pyro-run-data', capBytes: 5 * 1024 * 1024, totalCapBytes: 1024 * 1024 * 1024, quiet: true, forced: false },
      traceIdLabel: true,
    },
    {
      name: 'a total cap for the output folder, in MB like the run cap',
      env: { PYRO_RUN_MAX_TOTAL_MB: '0.5' },
      local: { dir: 'pyro-run-data', capBytes: 200 * 1024 * 1024, totalCapBytes: 512 * 1024, quiet: false, forced: false },
      traceIdLabel: true,
    },
    {
      name: 'trace_id can be turned off in local mode',
      env: { PYRO_RUN_TRACE_ID_LABEL: 'off' },
      local: { dir: 'pyro-run-data', capBytes: 200 * 1024 * 1024, totalCapBytes: 1024 * 1024 * 1024, quiet: false, forced: false },
      traceIdLabel: false,
    },
    { name: 'and on when sending', env: { PYROSCOPE_SERVER_ADDRESS: 'http://p:4040', PYRO_RUN_TRACE_ID_LABEL: 'on' }, local: undefined, traceIdLabel: true },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const config = clean(c.env);
      assert.deepEqual(config.local, c.local);
      assert.equal(config.traceIdLabel, c.traceIdLabel);
    });
  }

  it('a bad output setting falls back to the default with a problem', () => {
    const { config, problems } = readConfig({ PYRO_RUN_MAX_RUN_MB: 'lots' });
    assert.deepEqual(
      problems.map((p) => p.env),
      ['PYRO_RUN_MAX_RUN_MB'],
    );
    assert.equal(config.local?.capBytes, 200 * 1024 * 1024);
  });

  for (const raw of ['0', '-5', 'lots', '2000000']) {
    it(`a total cap of ${raw} falls back to 1024 MB with a problem`, () => {
      const { config, problems } = readConfig({ PYRO_RUN_MAX_TOTAL_MB: raw });
      assert.deepEqual(
        problems.map((p) => p.env),
        ['PYRO_RUN_MAX_TOTAL_MB'],
      );
      assert.equal(config.local?.totalCapBytes, 1024 * 1024 * 1024);
    });
  }
});

describe('service name fallback chain', () => {
  const all = {
    OTEL_SERVICE_NAME: 'from-otel',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=from%20resource,team=core',
    PYROSCOPE_APPLICATION_NAME: 'from-pyroscope',
  };
  const cases: { name: string; env: Env; packageName?: string; expected: string }[] = [
    { name: 'OTEL_SERVICE_NAME wins over everything', env: all, packageName: 'pkg', expected: 'from-otel' },
    { name: 'OTEL_SERVICE_NAME is trimmed', env: { OTEL_SERVICE_NAME: '  padded  ' }, expected: 'padded' },
    {
      name: 'service.name in OTEL_RESOURCE_ATTRIBUTES, URL-decoded',
      env: { ...all, OTEL_SERVICE_NAME: undefined },
      packageName: 'pkg',
      expected: 'from resource',
    },
    {
      name: 'service.name among other attributes with spaces around',
      env: { OTEL_RESOURCE_ATTRIBUTES: 'a=1, service.name = checkout%2Fapi ,b=2' },
      expected: 'checkout/api',
    },
    {
      name: 'blank OTEL_SERVICE_NAME falls through to resource attributes',
      env: { OTEL_SERVICE_NAME: '  ', OTEL_RESOURCE_ATTRIBUTES: 'service.name=res' },
      expected: 'res',
    },
    {
      name: 'resource attributes without service.name fall through',
      env: { OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod', PYROSCOPE_APPLICATION_NAME: 'from-pyroscope' },
      packageName: 'pkg',
      expected: 'from-pyroscope',
    },
    {
      name: 'an empty service.name falls through',
      env: { OTEL_RESOURCE_ATTRIBUTES: 'service.name=', PYROSCOPE_APPLICATION_NAME: 'from-pyroscope' },
      expected: 'from-pyroscope',
    },
    {
      name: 'a badly encoded service.name falls through',
      env: { OTEL_RESOURCE_ATTRIBUTES: 'service.name=%zz', PYROSCOPE_APPLICATION_NAME: 'from-pyroscope' },
      expected: 'from-pyroscope',
    },
    {
      name: 'a key that only ends in service.name is not service.name',
      env: { OTEL_RESOURCE_ATTRIBUTES: 'my.service.name=nope' },
      packageName: 'pkg',
      expected: 'pkg',
    },
    { name: 'PYROSCOPE_APPLICATION_NAME before package.json', env: { PYROSCOPE_APPLICATION_NAME: ' app ' }, packageName: 'pkg', expected: 'app' },
    { name: 'package.json name', env: {}, packageName: '@scope/pkg', expected: '@scope/pkg' },
    { name: 'nothing at all', env: {}, expected: 'unknown_service' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(clean(c.env, c.packageName === undefined ? {} : { packageName: c.packageName }).serviceName, c.expected);
    });
  }
});

describe('valid values of every setting', () => {
  const cases: { env: Env; pick: (c: Config) => unknown; expected: unknown }[] = [
    { env: { PYRO_RUN_SKIP: ' jest-worker , scripts/migrate.js,' }, pick: (c) => c.skip, expected: ['jest-worker', 'scripts/migrate.js'] },
    { env: { PYROSCOPE_SERVER_ADDRESS: 'http://pyroscope:4040' }, pick: (c) => c.pyroscope.serverAddress, expected: 'http://pyroscope:4040' },
    {
      env: { PYROSCOPE_SERVER_ADDRESS: ' https://pyro.example.com/base/ ' },
      pick: (c) => c.pyroscope.serverAddress,
      expected: 'https://pyro.example.com/base',
    },
    { env: { PYROSCOPE_SERVER_ADDRESS: 'HTTP://Pyro.Example:4040' }, pick: (c) => c.pyroscope.serverAddress, expected: 'http://pyro.example:4040' },
    { env: { PYROSCOPE_SERVER_ADDRESS: 'https://pyro.example.com' }, pick: (c) => c.pyroscope.serverAddress, expected: 'https://pyro.example.com' },
    { env: { PYROSCOPE_AUTH_TOKEN: 'glc_token' }, pick: (c) => c.pyroscope.authToken, expected: 'glc_token' },
    {
      env: { PYROSCOPE_BASIC_AUTH_USER: '123456', PYROSCOPE_BASIC_AUTH_PASSWORD: 'pass:word' },
      pick: (c) => [c.pyroscope.basicAuthUser, c.pyroscope.basicAuthPassword, c.pyroscope.authToken],
      expected: ['123456', 'pass:word', undefined],
    },
    { env: { PYROSCOPE_TENANT_ID: 'tenant-a' }, pick: (c) => c.pyroscope.tenantId, expected: 'tenant-a' },
    {
      env: { PYRO_RUN_PYROSCOPE_HEADERS: 'X-Custom=a%20b, Other-Header = c=d ,' },
      pick: (c) => c.pyroscope.headers,
      expected: { 'x-custom': 'a b', 'other-header': 'c=d' },
    },
    {
      env: { PYROSCOPE_LABELS: 'env=prod, region = eu-west-1 ,a.b_c=1,_x=y,' },
      pick: (c) => c.pyroscope.labels,
      expected: { env: 'prod', region: 'eu-west-1', 'a.b_c': '1', _x: 'y' },
    },
    { env: { PYROSCOPE_LABELS: 'expr=a=b' }, pick: (c) => c.pyroscope.labels, expected: { expr: 'a=b' } },
    { env: { PYRO_RUN_PROFILES: 'cpu' }, pick: (c) => c.profiles, expected: ['cpu'] },
    { env: { PYRO_RUN_PROFILES: 'wall' }, pick: (c) => c.profiles, expected: ['wall'] },
    { env: { PYRO_RUN_PROFILES: ' WALL , cpu ' }, pick: (c) => c.profiles, expected: ['wall', 'cpu'] },
    { env: { PYRO_RUN_PROFILES: 'cpu,cpu,wall' }, pick: (c) => c.profiles, expected: ['cpu', 'wall'] },
    { env: { PYRO_RUN_PROFILES: 'none' }, pick: (c) => c.profiles, expected: [] },
    { env: { PYRO_RUN_PROFILES: ' None ' }, pick: (c) => c.profiles, expected: [] },
    { env: { PYRO_RUN_PROFILES: 'cpu,wall,heap' }, pick: (c) => c.profiles, expected: ['cpu', 'wall', 'heap'] },
    {
      env: { PYRO_RUN_PROFILES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' },
      pick: (c) => c.profilesExport.endpoint,
      expected: 'http://collector:4318/v1development/profiles',
    },
    {
      env: {
        PYRO_RUN_PROFILES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT: 'http://pyroscope:4040/v1development/profiles',
      },
      pick: (c) => c.profilesExport.endpoint,
      expected: 'http://pyroscope:4040/v1development/profiles',
    },
    {
      env: { PYRO_RUN_PROFILES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_HEADERS: 'a=1,b=2', OTEL_EXPORTER_OTLP_PROFILES_HEADERS: 'b=3' },
      pick: (c) => c.profilesExport.headers,
      expected: { a: '1', b: '3' },
    },
    { env: { OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' }, pick: (c) => c.profilesExport.gzip, expected: true },
    // Spans as OTel's exporter sends them: the signal's own variable over the shared one.
    { env: { OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' }, pick: (c) => c.traces.gzip, expected: true },
    {
      env: { OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip', OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'none' },
      pick: (c) => [c.traces.gzip, c.profilesExport.gzip],
      expected: [false, true],
    },
    { env: { OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'gzip' }, pick: (c) => [c.traces.gzip, c.profilesExport.gzip], expected: [true, false] },
    // TLS files as the OTel exporters read them: the signal's own variable over the shared one, per file.
    {
      env: { OTEL_EXPORTER_OTLP_CERTIFICATE: 'ca.pem' },
      pick: (c) => c.traces.tls,
      expected: { ca: { env: 'OTEL_EXPORTER_OTLP_CERTIFICATE', path: 'ca.pem' } },
    },
    {
      env: { OTEL_EXPORTER_OTLP_CERTIFICATE: 'ca.pem', OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: ' traces-ca.pem ' },
      pick: (c) => c.traces.tls,
      expected: { ca: { env: 'OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE', path: 'traces-ca.pem' } },
    },
    {
      env: { PYRO_RUN_PROFILES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_CERTIFICATE: 'ca.pem', OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: 'traces-ca.pem' },
      pick: (c) => c.profilesExport.tls,
      expected: { ca: { env: 'OTEL_EXPORTER_OTLP_CERTIFICATE', path: 'ca.pem' } },
    },
    // Profiles sent to Pyroscope's /ingest take none of them.
    { env: { OTEL_EXPORTER_OTLP_CERTIFICATE: 'ca.pem' }, pick: (c) => c.profilesExport.tls, expected: {} },
    {
      env: {
        PYRO_RUN_PROFILES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: 'client.pem',
        OTEL_EXPORTER_OTLP_CLIENT_KEY: 'client.key',
        OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY: 'profiles.key',
      },
      pick: (c) => [c.profilesExport.tls, c.traces.tls],
      expected: [
        {
          cert: { env: 'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE', path: 'client.pem' },
          key: { env: 'OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY', path: 'profiles.key' },
        },
        { cert: { env: 'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE', path: 'client.pem' }, key: { env: 'OTEL_EXPORTER_OTLP_CLIENT_KEY', path: 'client.key' } },
      ],
    },
    { env: { OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip', OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION: 'none' }, pick: (c) => c.profilesExport.gzip, expected: false },
    {
      env: { PYRO_RUN_PROFILES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', PYRO_RUN_TRACE_ID_LABEL: 'off' },
      pick: (c) => c.traceIdLabel,
      expected: true,
    },
    { env: { PYRO_RUN_PROFILES_EXPORTER: 'otlp' }, pick: (c) => c.local, expected: undefined },
    {
      env: { PYROSCOPE_HEAP_SAMPLING_INTERVAL_BYTES: '1048576', PYROSCOPE_HEAP_STACK_DEPTH: '32' },
      pick: (c) => c.heap,
      expected: { intervalBytes: 1_048_576, stackDepth: 32 },
    },
    { env: { PYRO_RUN_SPAN_SCOPE: 'root' }, pick: (c) => c.spanScope, expected: 'root' },
    { env: { PYRO_RUN_SPAN_SCOPE: 'all' }, pick: (c) => c.spanScope, expected: 'all' },
    { env: { PYRO_RUN_SPAN_SCOPE: ' ALL ' }, pick: (c) => c.spanScope, expected: 'all' },
    ...['on', 'true', '1', 'yes', 'ON', ' True '].map((v) => ({ env: { PYRO_RUN_TRACE_ID_LABEL: v }, pick: (c: Config) => c.traceIdLabel, expected: true })),
    ...['off', 'false', '0', 'no', 'OFF'].map((v) => ({ env: { PYRO_RUN_TRACE_ID_LABEL: v }, pick: (c: Config) => c.traceIdLabel, expected: false })),
    { env: { PYROSCOPE_FLUSH_INTERVAL_MS: '1000' }, pick: (c) => c.flushIntervalMs, expected: 1000 },
    { env: { PYROSCOPE_FLUSH_INTERVAL_MS: ' 60000 ' }, pick: (c) => c.flushIntervalMs, expected: 60_000 },
    { env: { PYROSCOPE_FLUSH_INTERVAL_MS: '3600000' }, pick: (c) => c.flushIntervalMs, expected: 3_600_000 },
    { env: { PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '100' }, pick: (c) => c.samplingIntervalMicros, expected: 100 },
    { env: { PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS: '1000000' }, pick: (c) => c.samplingIntervalMicros, expected: 1_000_000 },
    // The block threshold: milliseconds, or off (0) for no watch at all.
    ...[
      { raw: '20', expected: 20 },
      { raw: ' 250 ', expected: 250 },
      { raw: '600000', expected: 600_000 },
      { raw: 'off', expected: 0 },
      { raw: ' OFF ', expected: 0 },
      { raw: 'false', expected: 0 },
      { raw: 'no', expected: 0 },
      { raw: '0', expected: 0 },
      { raw: '000', expected: 0 },
    ].map(({ raw, expected }) => ({ env: { PYRO_RUN_BLOCK_THRESHOLD_MS: raw }, pick: (c: Config) => c.blockThresholdMs, expected })),
    { env: { PYRO_RUN_UPLOAD_TIMEOUT_MS: '100' }, pick: (c) => c.pyroscope.uploadTimeoutMs, expected: 100 },
    { env: { PYRO_RUN_UPLOAD_TIMEOUT_MS: '600000' }, pick: (c) => c.pyroscope.uploadTimeoutMs, expected: 600_000 },
    // Every upload takes pyro-run's timeout; an OTLP one the OTel exporter's where set: the signal's own over the shared one.
    {
      env: { PYRO_RUN_UPLOAD_TIMEOUT_MS: '2500' },
      pick: (c) => [c.pyroscope.uploadTimeoutMs, c.traces.timeoutMs, c.profilesExport.timeoutMs],
      expected: [2500, 2500, 2500],
    },
    {
      env: { OTEL_EXPORTER_OTLP_TIMEOUT: '30000', PYRO_RUN_UPLOAD_TIMEOUT_MS: '2500' },
      pick: (c) => [c.pyroscope.uploadTimeoutMs, c.traces.timeoutMs, c.profilesExport.timeoutMs],
      expected: [2500, 30_000, 30_000],
    },
    {
      env: { OTEL_EXPORTER_OTLP_TIMEOUT: '30000', OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: ' 500 ' },
      pick: (c) => [c.traces.timeoutMs, c.profilesExport.timeoutMs],
      expected: [500, 30_000],
    },
    {
      env: { OTEL_EXPORTER_OTLP_TIMEOUT: '30000', OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT: '700' },
      pick: (c) => [c.traces.timeoutMs, c.profilesExport.timeoutMs],
      expected: [30_000, 700],
    },
    { env: { OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '500' }, pick: (c) => [c.pyroscope.uploadTimeoutMs, c.profilesExport.timeoutMs], expected: [10_000, 10_000] },
    ...['on', 'true', '1', 'yes', ' ON '].map((v) => ({ env: { PYRO_RUN_INSECURE_SKIP_TLS_VERIFY: v }, pick: (c: Config) => c.tlsSkipVerify, expected: true })),
    ...['off', 'false', '0', 'no'].map((v) => ({ env: { PYRO_RUN_INSECURE_SKIP_TLS_VERIFY: v }, pick: (c: Config) => c.tlsSkipVerify, expected: false })),
    { env: { PYRO_RUN_SHUTDOWN_TIMEOUT_MS: '0' }, pick: (c) => c.shutdownTimeoutMs, expected: 0 },
    { env: { PYRO_RUN_SHUTDOWN_TIMEOUT_MS: '600000' }, pick: (c) => c.shutdownTimeoutMs, expected: 600_000 },
    ...(['silent', 'error', 'warn', 'info', 'debug'] as const).map((v) => ({ env: { PYRO_RUN_LOG_LEVEL: v }, pick: (c: Config) => c.logLevel, expected: v })),
    { env: { PYRO_RUN_LOG_LEVEL: 'DEBUG' }, pick: (c) => c.logLevel, expected: 'debug' },
    { env: { OTEL_TRACES_EXPORTER: 'otlp' }, pick: (c) => c.traces.exporters, expected: ['otlp'] },
    { env: { OTEL_TRACES_EXPORTER: 'console' }, pick: (c) => c.traces.exporters, expected: ['console'] },
    { env: { OTEL_TRACES_EXPORTER: 'none' }, pick: (c) => c.traces.exporters, expected: [] },
    // A list, as sdk-node reads it: each exporter once, in the order given.
    { env: { OTEL_TRACES_EXPORTER: 'console, OTLP' }, pick: (c) => c.traces.exporters, expected: ['console', 'otlp'] },
    { env: { OTEL_TRACES_EXPORTER: 'otlp,console,otlp,' }, pick: (c) => c.traces.exporters, expected: ['otlp', 'console'] },
    { env: { OTEL_TRACES_EXPORTER: ' None ' }, pick: (c) => c.traces.exporters, expected: [] },
    ...(['http/protobuf', 'http/json', 'grpc'] as const).map((v) => ({
      env: { OTEL_EXPORTER_OTLP_PROTOCOL: v },
      pick: (c: Config) => c.traces.protocol,
      expected: v,
    })),
    ...(['http/protobuf', 'http/json', 'grpc'] as const).map((v) => ({
      env: { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: v },
      pick: (c: Config) => c.traces.protocol,
      expected: v,
    })),
    {
      env: { OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20abc,x-tenant=t1' },
      pick: (c) => c.traces.headers,
      expected: { authorization: 'Bearer abc', 'x-tenant': 't1' },
    },
    {
      env: { OTEL_EXPORTER_OTLP_HEADERS: 'a=1,b=2', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'B=3,c=4' },
      pick: (c) => c.traces.headers,
      expected: { a: '1', b: '3', c: '4' },
    },
    {
      env: { OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '10', OTEL_BSP_SCHEDULE_DELAY: '250' },
      pick: (c) => c.traces.batch,
      expected: { maxQueueSize: 100, maxExportBatchSize: 10, scheduledDelayMillis: 250, firstFullBatch: 10 },
    },
    {
      env: { OTEL_BSP_MAX_QUEUE_SIZE: '1', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1', OTEL_BSP_SCHEDULE_DELAY: '0' },
      pick: (c) => c.traces.batch,
      expected: { maxQueueSize: 1, maxExportBatchSize: 1, scheduledDelayMillis: 0, firstFullBatch: 1 },
    },
    {
      env: { OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_SCHEDULE_DELAY: '250' },
      pick: (c) => c.traces.batch,
      expected: { maxQueueSize: 100, maxExportBatchSize: 512, scheduledDelayMillis: 250, firstFullBatch: FIRST_FULL_BATCH },
    },
  ];
  for (const c of cases) {
    it(JSON.stringify(c.env), () => {
      assert.deepEqual(c.pick(clean(c.env)), c.expected);
    });
  }
});

describe('a destination set but wrong: a remote set-up with a mistake, that signal not sent, nothing recorded locally', () => {
  const cases: { env: Env; message: RegExp; instead: string; profiles: boolean; spans: boolean }[] = [
    {
      env: { PYROSCOPE_SERVER_ADDRESS: 'ftp://pyroscope:4040' },
      message: /http:\/\/ or https:\/\//,
      instead: 'profiles are not sent',
      profiles: false,
      spans: true,
    },
    {
      env: { PYROSCOPE_SERVER_ADDRESS: 'not a url' },
      message: /absolute http:\/\/ or https:\/\//,
      instead: 'profiles are not sent',
      profiles: false,
      spans: true,
    },
    { env: { PYROSCOPE_SERVER_ADDRESS: '//pyroscope:4040' }, message: /absolute/, instead: 'profiles are not sent', profiles: false, spans: true },
    { env: { PYROSCOPE_SERVER_ADDRESS: 'pyroscope:4040' }, message: /http:\/\/ or https:\/\//, instead: 'profiles are not sent', profiles: false, spans: true },
    { env: { PYROSCOPE_SERVER_ADDRESS: 'http://' }, message: /absolute/, instead: 'profiles are not sent', profiles: false, spans: true },
    { env: { PYROSCOPE_SERVER_ADDRESS: 'file:///tmp/x' }, message: /http:\/\/ or https:\/\//, instead: 'profiles are not sent', profiles: false, spans: true },
    {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://collector:4318' },
      message: /http:\/\/ or https:\/\//,
      instead: 'spans are not sent',
      profiles: true,
      spans: false,
    },
    { env: { OTEL_EXPORTER_OTLP_ENDPOINT: '%%garbage%%' }, message: /absolute/, instead: 'spans are not sent', profiles: true, spans: false },
    { env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector' }, message: /absolute/, instead: 'spans are not sent', profiles: true, spans: false },
    {
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ws://collector:4318/v1/traces' },
      message: /http:\/\/ or https:\/\//,
      instead: 'spans are not sent',
      profiles: true,
      spans: false,
    },
  ];
  for (const c of cases) {
    it(`${JSON.stringify(c.env)}: ${c.instead}`, () => {
      const { config, problems } = readConfig(c.env);
      assert.equal(problems.length, 1, JSON.stringify(problems));
      const [problem] = problems as [Problem];
      assert.equal(problem.env, Object.keys(c.env)[0]);
      assert.match(problem.message, c.message);
      assert.equal(problem.instead, c.instead);
      assert.equal(config.local, undefined, 'no local recording in the app folder');
      assert.equal(config.pyroscope.serverAddress, undefined);
      assert.deepEqual(config.traces.exporters, c.spans ? ['otlp'] : []);
    });
  }

  it('a wrong signal URL next to a right base URL: spans go to the base one, as the default', () => {
    const { config, problems } = readConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' });
    assert.equal(config.traces.endpoint, 'http://c:4318/v1/traces');
    assert.deepEqual(config.traces.exporters, ['otlp']);
    assert.equal(problems[0]?.instead, undefined);
  });
});

describe('the logs export, by the OTel exporter spec for the logs signal and OTEL_LOGS_EXPORTER as the NodeSDK reads it', () => {
  const cases: { name: string; env: Env; pick: (logs: Config['logs']) => unknown; expected: unknown }[] = [
    {
      name: 'the exporters listed, each once, in a fixed order',
      env: { OTEL_LOGS_EXPORTER: ' Console , otlp,otlp' },
      pick: (l) => l.exporters,
      expected: ['otlp', 'console'],
    },
    { name: '`none` anywhere in the list: none', env: { OTEL_LOGS_EXPORTER: 'otlp,none' }, pick: (l) => l.exporters, expected: [] },
    {
      name: 'the base URL plus /v1/logs',
      env: { OTEL_LOGS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' },
      pick: (l) => l.endpoint,
      expected: 'http://collector:4318/v1/logs',
    },
    {
      name: 'the signal endpoint as given',
      env: {
        OTEL_LOGS_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: 'https://logs.example/otlp/v1/logs',
      },
      pick: (l) => l.endpoint,
      expected: 'https://logs.example/otlp/v1/logs',
    },
    {
      name: 'headers: the signal’s over the shared ones',
      env: { OTEL_LOGS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_HEADERS: 'a=1,b=2', OTEL_EXPORTER_OTLP_LOGS_HEADERS: 'b=3' },
      pick: (l) => l.headers,
      expected: { a: '1', b: '3' },
    },
    {
      name: 'protocol: the signal’s over the shared one',
      env: { OTEL_LOGS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'http/json' },
      pick: (l) => l.protocol,
      expected: 'http/json',
    },
    { name: 'protocol: the shared one', env: { OTEL_LOGS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, pick: (l) => l.protocol, expected: 'grpc' },
    {
      name: 'compression: the signal’s over the shared one',
      env: { OTEL_LOGS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip', OTEL_EXPORTER_OTLP_LOGS_COMPRESSION: 'none' },
      pick: (l) => l.gzip,
      expected: false,
    },
    {
      name: 'timeout: the signal’s over the shared one',
      env: { OTEL_LOGS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TIMEOUT: '3000', OTEL_EXPORTER_OTLP_LOGS_TIMEOUT: '2000' },
      pick: (l) => l.timeoutMs,
      expected: 2000,
    },
    {
      name: 'TLS files: the signal’s over the shared ones, per file',
      env: { OTEL_LOGS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_CERTIFICATE: 'ca.pem', OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE: 'logs-ca.pem' },
      pick: (l) => l.tls,
      expected: { ca: { env: 'OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE', path: 'logs-ca.pem' } },
    },
    {
      name: 'TLS files are the gRPC exporter’s own business',
      env: { OTEL_LOGS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_CERTIFICATE: 'ca.pem' },
      pick: (l) => l.tls,
      expected: {},
    },
    {
      name: 'OTEL_BLRP_* batching',
      env: { OTEL_LOGS_EXPORTER: 'otlp', OTEL_BLRP_MAX_QUEUE_SIZE: '100', OTEL_BLRP_MAX_EXPORT_BATCH_SIZE: '10', OTEL_BLRP_SCHEDULE_DELAY: '250' },
      pick: (l) => l.batch,
      expected: { maxQueueSize: 100, maxExportBatchSize: 10, scheduledDelayMillis: 250, firstFullBatch: 10 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(c.pick(clean(c.env).logs), c.expected));
  }

  it('an exporter the NodeSDK does not know: a problem, and the others stand', () => {
    const { config, problems } = readConfig({ OTEL_LOGS_EXPORTER: 'otlp,loki' });
    assert.deepEqual(config.logs.exporters, ['otlp']);
    assert.deepEqual(
      problems.map((p) => [p.env, p.message, p.instead]),
      [['OTEL_LOGS_EXPORTER', 'OTEL_LOGS_EXPORTER lists "loki", not one of otlp, console, none', 'ignored']],
    );
  });

  it('behind a proxy that cannot be used, logs are not sent, and the problem says so', () => {
    const { config, problems } = readConfig({
      OTEL_LOGS_EXPORTER: 'otlp',
      OTEL_TRACES_EXPORTER: 'console',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example:4318',
      HTTP_PROXY: 'ftp://proxy.corp',
    });
    assert.equal(config.logs.endpoint, undefined);
    assert.deepEqual(
      problems.map((p) => [p.env, p.instead]),
      [['HTTP_PROXY', 'logs are not sent (not around the proxy either)']],
    );
  });
});

describe('the metrics export, by the OTel exporter spec for the metrics signal and OTEL_METRICS_EXPORTER as the NodeSDK reads it', () => {
  const cases: { name: string; env: Env; pick: (metrics: Config['metrics']) => unknown; expected: unknown }[] = [
    {
      name: 'the exporters listed, each once, in a fixed order',
      env: { OTEL_METRICS_EXPORTER: ' Console , prometheus,otlp,otlp' },
      pick: (m) => m.exporters,
      expected: ['otlp', 'prometheus', 'console'],
    },
    { name: '`none` anywhere in the list: none', env: { OTEL_METRICS_EXPORTER: 'otlp,none' }, pick: (m) => m.exporters, expected: [] },
    {
      name: 'the base URL plus /v1/metrics',
      env: { OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' },
      pick: (m) => m.endpoint,
      expected: 'http://collector:4318/v1/metrics',
    },
    {
      name: 'the signal’s endpoint as given, over the base URL',
      env: {
        OTEL_METRICS_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'https://mimir.example/otlp/v1/metrics',
      },
      pick: (m) => m.endpoint,
      expected: 'https://mimir.example/otlp/v1/metrics',
    },
    {
      name: 'headers: the signal’s over the shared ones',
      env: { OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_HEADERS: 'a=1,b=2', OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'b=3' },
      pick: (m) => m.headers,
      expected: { a: '1', b: '3' },
    },
    {
      name: 'protocol: the signal’s over the shared one',
      env: { OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json' },
      pick: (m) => m.protocol,
      expected: 'http/json',
    },
    {
      name: 'compression and timeout: the signal’s over the shared ones',
      env: {
        OTEL_METRICS_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_COMPRESSION: 'none',
        OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: 'gzip',
        OTEL_EXPORTER_OTLP_TIMEOUT: '3000',
        OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: '2000',
      },
      pick: (m) => [m.gzip, m.timeoutMs],
      expected: [true, 2000],
    },
    {
      name: 'TLS files: the signal’s over the shared ones',
      env: { OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_CERTIFICATE: 'ca.pem', OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE: 'metrics-ca.pem' },
      pick: (m) => m.tls,
      expected: { ca: { env: 'OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE', path: 'metrics-ca.pem' } },
    },
    {
      name: 'the interval and the collection timeout',
      env: { OTEL_METRICS_EXPORTER: 'otlp', OTEL_METRIC_EXPORT_INTERVAL: '5000', OTEL_METRIC_EXPORT_TIMEOUT: '2500' },
      pick: (m) => [m.intervalMs, m.collectTimeoutMs],
      expected: [5000, 2500],
    },
    {
      name: 'the timeout clamped to the interval, as the NodeSDK does',
      env: { OTEL_METRICS_EXPORTER: 'otlp', OTEL_METRIC_EXPORT_INTERVAL: '1000' },
      pick: (m) => [m.intervalMs, m.collectTimeoutMs],
      expected: [1000, 1000],
    },
    {
      name: 'the temporality preference, in any case',
      env: { OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'Delta' },
      pick: (m) => m.temporality,
      expected: 'delta',
    },
    {
      name: 'where the prometheus exporter listens',
      env: { OTEL_METRICS_EXPORTER: 'prometheus', OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1', OTEL_EXPORTER_PROMETHEUS_PORT: '9465' },
      pick: (m) => m.prometheus,
      expected: { host: '127.0.0.1', port: 9465 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(c.pick(clean(c.env).metrics), c.expected));
  }

  it('a temporality the exporters do not know: a problem, and cumulative stands', () => {
    const { config, problems } = readConfig({ OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'sometimes' });
    assert.equal(config.metrics.temporality, 'cumulative');
    assert.deepEqual(
      problems.map((p) => p.env),
      ['OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE'],
    );
  });

  it('behind a proxy that cannot be used, metrics and logs are not sent, and one problem says so', () => {
    const { config, problems } = readConfig({
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_LOGS_EXPORTER: 'otlp',
      OTEL_TRACES_EXPORTER: 'console',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example:4318',
      HTTP_PROXY: 'ftp://proxy.corp',
    });
    assert.equal(config.metrics.endpoint, undefined);
    assert.deepEqual(
      problems.map((p) => [p.env, p.instead]),
      [['HTTP_PROXY', 'metrics and logs are not sent (not around the proxy either)']],
    );
  });
});

describe('proxies: HTTP_PROXY, HTTPS_PROXY, NO_PROXY (the rules themselves: proxy-rules.test.ts)', () => {
  const PYRO = 'https://pyroscope.example';
  const OTLP = 'http://collector.example:4318';

  it('spans listed for the console and OTLP, behind a proxy that cannot be used: the console keeps them', () => {
    const { config, problems } = readConfig({ OTEL_TRACES_EXPORTER: 'console,otlp', OTEL_EXPORTER_OTLP_ENDPOINT: OTLP, HTTP_PROXY: 'ftp://proxy.corp' });
    assert.deepEqual(
      problems.map((p) => [p.env, p.instead]),
      [['HTTP_PROXY', 'spans are not sent (not around the proxy either)']],
    );
    assert.deepEqual(config.traces.exporters, ['console']);
  });

  it('none set: every upload goes direct', () => {
    assert.equal(clean({ PYROSCOPE_SERVER_ADDRESS: PYRO }).proxy, undefined);
  });

  it('blank proxy variables count as not set', () => {
    assert.equal(clean({ PYROSCOPE_SERVER_ADDRESS: PYRO, HTTP_PROXY: ' ', https_proxy: '', NO_PROXY: ' ' }).proxy, undefined);
  });

  it('read whatever NODE_USE_ENV_PROXY says, as curl and Go read them', () => {
    const config = clean({ PYROSCOPE_SERVER_ADDRESS: PYRO, HTTPS_PROXY: 'http://user:pw@proxy.corp:3128', NO_PROXY: '.internal', NODE_USE_ENV_PROXY: '0' });
    assert.deepEqual(config.proxy, {
      http: undefined,
      https: { url: 'http://proxy.corp:3128', env: 'HTTPS_PROXY', credential: Buffer.from('user:pw').toString('base64') },
      noProxy: [{ kind: 'domain', suffix: '.internal', exact: false, port: '' }],
    });
  });

  // A proxy set but unusable stops what would go through it, rather than sending around it.
  const unusable: { name: string; env: Env; problem: string | undefined; instead?: string; profiles: boolean; spans: boolean }[] = [
    {
      name: 'the proxy of https:// profiles',
      env: { PYROSCOPE_SERVER_ADDRESS: PYRO, OTEL_EXPORTER_OTLP_ENDPOINT: OTLP, HTTPS_PROXY: 'socks5://user:hunter2-pw@proxy.corp:1080' },
      problem: 'HTTPS_PROXY',
      instead: 'profiles are not sent (not around the proxy either)',
      profiles: false,
      spans: true,
    },
    {
      name: 'the proxy of http:// spans',
      env: { PYROSCOPE_SERVER_ADDRESS: PYRO, OTEL_EXPORTER_OTLP_ENDPOINT: OTLP, http_proxy: 'http://proxy.corp:99999' },
      problem: 'http_proxy',
      instead: 'spans are not sent (not around the proxy either)',
      profiles: true,
      spans: false,
    },
    {
      name: 'the proxy of both',
      env: { PYROSCOPE_SERVER_ADDRESS: 'http://pyroscope.example', OTEL_EXPORTER_OTLP_ENDPOINT: OTLP, HTTP_PROXY: 'ftp://proxy.corp' },
      problem: 'HTTP_PROXY',
      instead: 'profiles and spans are not sent (not around the proxy either)',
      profiles: false,
      spans: false,
    },
    {
      name: 'a proxy no upload would use: not our problem',
      env: { PYROSCOPE_SERVER_ADDRESS: PYRO, HTTP_PROXY: 'ftp://proxy.corp' },
      problem: undefined,
      profiles: true,
      spans: true,
    },
    {
      name: 'a proxy NO_PROXY exempts the backend from',
      env: { PYROSCOPE_SERVER_ADDRESS: PYRO, HTTPS_PROXY: 'ftp://proxy.corp', NO_PROXY: 'pyroscope.example' },
      problem: undefined,
      profiles: true,
      spans: true,
    },
    {
      name: 'a proxy for a loopback backend, which never goes through one',
      env: { PYROSCOPE_SERVER_ADDRESS: 'http://127.0.0.1:4040', HTTP_PROXY: 'ftp://proxy.corp' },
      problem: undefined,
      profiles: true,
      spans: true,
    },
  ];
  for (const c of unusable) {
    it(`unusable: ${c.name}`, () => {
      const { config, problems } = readConfig(c.env);
      assert.deepEqual(
        problems.map((p) => [p.env, p.instead]),
        c.problem === undefined ? [] : [[c.problem, c.instead]],
      );
      for (const problem of problems) assert.ok(!/proxy\.corp|hunter2/.test(problem.message), `the value stays out of the message: ${problem.message}`);
      assert.equal(config.pyroscope.serverAddress !== undefined, c.profiles);
      assert.equal(config.traces.exporters.includes('otlp'), c.spans);
      assert.equal(config.local, undefined, 'a destination stopped this way is still a remote set-up');
    });
  }

  it('NO_PROXY entries that match nothing: one problem listing them, the others used', () => {
    const { config, problems } = readConfig({
      PYROSCOPE_SERVER_ADDRESS: PYRO,
      HTTPS_PROXY: 'http://proxy.corp:3128',
      no_proxy: 'http://pyroscope.example, 10.0.0.0/33, .internal',
    });
    assert.deepEqual(problems, [
      {
        env: 'no_proxy',
        message: 'no_proxy entries "http://pyroscope.example", "10.0.0.0/33" are no host name, domain, IP address or CIDR range',
        instead: 'they are ignored',
      },
    ]);
    assert.equal(config.proxy?.noProxy.length, 1);
  });
});

describe('bad values: one Problem naming the env var, the default used instead', () => {
  const cases: { env: string; raw: string; message: RegExp }[] = [
    { env: 'PYROSCOPE_LABELS', raw: 'a', message: /"a" is not key=value/ },
    { env: 'PYROSCOPE_LABELS', raw: '=b', message: /"=b" is not key=value/ },
    { env: 'PYROSCOPE_LABELS', raw: 'a=', message: /label "a" has an empty value/ },
    { env: 'PYROSCOPE_LABELS', raw: '1a=b', message: /label key "1a" .*must not start with a digit/ },
    { env: 'PYROSCOPE_LABELS', raw: '__x=y', message: /label key "__x" starts with __/ },
    { env: 'PYROSCOPE_LABELS', raw: 'a-b=c', message: /label key "a-b" may only hold letters, digits, _ and \./ },
    { env: 'PYROSCOPE_FLUSH_INTERVAL_MS', raw: 'abc', message: /whole number of milliseconds/ },
    { env: 'PYROSCOPE_FLUSH_INTERVAL_MS', raw: '-5000', message: /whole number/ },
    { env: 'PYROSCOPE_FLUSH_INTERVAL_MS', raw: '1.5', message: /whole number/ },
    { env: 'PYROSCOPE_FLUSH_INTERVAL_MS', raw: '15s', message: /whole number/ },
    { env: 'PYROSCOPE_FLUSH_INTERVAL_MS', raw: '1e4', message: /whole number/ },
    { env: 'PYROSCOPE_FLUSH_INTERVAL_MS', raw: '999', message: /between 1000 and 3600000 milliseconds/ },
    { env: 'PYROSCOPE_FLUSH_INTERVAL_MS', raw: '3600001', message: /between 1000 and 3600000/ },
    { env: 'PYROSCOPE_FLUSH_INTERVAL_MS', raw: '99999999999999999999999', message: /between/ },
    { env: 'PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS', raw: 'fast', message: /whole number of microseconds/ },
    { env: 'PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS', raw: '99', message: /between 100 and 1000000 microseconds/ },
    { env: 'PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS', raw: '1000001', message: /between 100 and 1000000/ },
    { env: 'PYRO_RUN_BLOCK_THRESHOLD_MS', raw: '19', message: /between 20 and 600000 milliseconds, or off/ },
    { env: 'PYRO_RUN_BLOCK_THRESHOLD_MS', raw: '600001', message: /between 20 and 600000 milliseconds, or off/ },
    { env: 'PYRO_RUN_BLOCK_THRESHOLD_MS', raw: '100ms', message: /whole number of milliseconds, or off/ },
    { env: 'PYRO_RUN_BLOCK_THRESHOLD_MS', raw: 'on', message: /whole number of milliseconds, or off/ },
    { env: 'PYRO_RUN_BLOCK_THRESHOLD_MS', raw: '-1', message: /whole number/ },
    { env: 'PYRO_RUN_UPLOAD_TIMEOUT_MS', raw: '99', message: /between 100 and 600000/ },
    { env: 'PYRO_RUN_UPLOAD_TIMEOUT_MS', raw: '600001', message: /between 100 and 600000/ },
    { env: 'PYRO_RUN_UPLOAD_TIMEOUT_MS', raw: '-1', message: /whole number/ },
    { env: 'PYRO_RUN_INSECURE_SKIP_TLS_VERIFY', raw: 'please', message: /must be on or off/ },
    { env: 'PYRO_RUN_INSECURE_SKIP_TLS_VERIFY', raw: '2', message: /must be on or off/ },
    { env: 'PYRO_RUN_SHUTDOWN_TIMEOUT_MS', raw: '-1', message: /whole number/ },
    { env: 'PYRO_RUN_SHUTDOWN_TIMEOUT_MS', raw: '600001', message: /between 0 and 600000/ },
    { env: 'PYRO_RUN_SPAN_SCOPE', raw: 'local', message: /must be one of root, all/ },
    { env: 'PYRO_RUN_SPAN_SCOPE', raw: 'root,all', message: /must be one of root, all/ },
    { env: 'PYRO_RUN_SKIP', raw: ' , ,', message: /must name at least one package or script/ },
    { env: 'PYRO_RUN_SKIP', raw: 'jest-worker, my script.js', message: /"my script.js" holds white space/ },
    { env: 'PYRO_RUN_LOG_LEVEL', raw: 'verbose', message: /must be one of silent, error, warn, info, debug/ },
    { env: 'PYRO_RUN_LOG_LEVEL', raw: 'trace', message: /must be one of/ },
    { env: 'OTEL_TRACES_EXPORTER', raw: 'zipkin', message: /names "zipkin", which is not one of otlp, console, none/ },
    { env: 'OTEL_TRACES_EXPORTER', raw: 'otlp,jaeger', message: /names "jaeger"/ },
    { env: 'OTEL_TRACES_EXPORTER', raw: 'console,none', message: /lists none with other exporters/ },
    { env: 'OTEL_TRACES_EXPORTER', raw: ' , ', message: /must list exporters \(otlp, console\) or be none/ },
    // Read once for both signals: one problem, not one per signal.
    { env: 'OTEL_EXPORTER_OTLP_COMPRESSION', raw: 'brotli', message: /must be one of gzip, none/ },
    { env: 'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION', raw: 'zstd', message: /must be one of gzip, none/ },
    { env: 'OTEL_EXPORTER_OTLP_TIMEOUT', raw: '10s', message: /whole number of milliseconds/ },
    { env: 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', raw: '0', message: /between 100 and 600000/ },
    { env: 'OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT', raw: '-5', message: /whole number/ },
    { env: 'OTEL_TRACES_EXPORTER', raw: 'jaeger', message: /not one of otlp, console, none/ },
    { env: 'OTEL_EXPORTER_OTLP_PROTOCOL', raw: 'http', message: /must be one of http\/protobuf, http\/json, grpc/ },
    { env: 'OTEL_EXPORTER_OTLP_PROTOCOL', raw: 'grpc/protobuf', message: /must be one of/ },
    { env: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', raw: 'thrift', message: /must be one of http\/protobuf, http\/json, grpc/ },
    { env: 'PYRO_RUN_PROFILES', raw: 'mutex', message: /unknown profile type "mutex" \(known: cpu, wall, heap, alloc, or none\)/ },
    { env: 'PYRO_RUN_PROFILES', raw: 'cpu,mutex', message: /unknown profile type "mutex"/ },
    { env: 'PYRO_RUN_PROFILES', raw: 'heap,alloc', message: /heap and alloc cannot be on together/ },
    { env: 'PYROSCOPE_HEAP_SAMPLING_INTERVAL_BYTES', raw: '100', message: /between 1024 and \d+ bytes/ },
    { env: 'PYROSCOPE_HEAP_STACK_DEPTH', raw: '0', message: /between 1 and 1024 frames/ },
    { env: 'PYRO_RUN_PROFILES', raw: 'none,cpu', message: /unknown profile type "none"/ },
    { env: 'PYRO_RUN_PROFILES', raw: ',', message: /must list profile types/ },
    { env: 'PYRO_RUN_TRACE_ID_LABEL', raw: 'maybe', message: /must be on or off/ },
    { env: 'PYRO_RUN_TRACE_ID_LABEL', raw: '2', message: /must be on or off/ },
    { env: 'PYRO_RUN_PYROSCOPE_HEADERS', raw: 'novalue', message: /name=value with a valid header name/ },
    { env: 'PYRO_RUN_PYROSCOPE_HEADERS', raw: '=v', message: /valid header name/ },
    { env: 'PYRO_RUN_PYROSCOPE_HEADERS', raw: 'bad name=v', message: /valid header name/ },
    { env: 'PYRO_RUN_PYROSCOPE_HEADERS', raw: 'x-a=%zz', message: /header "x-a" is not valid URL encoding/ },
    { env: 'OTEL_EXPORTER_OTLP_HEADERS', raw: 'a:b', message: /valid header name/ },
    { env: 'OTEL_EXPORTER_OTLP_HEADERS', raw: 'a=1,b=%E0%A4%A', message: /header "b" is not valid URL encoding/ },
    { env: 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', raw: 'a=%', message: /not valid URL encoding/ },
    { env: 'OTEL_BSP_MAX_QUEUE_SIZE', raw: '0', message: /between 1 and 1000000 spans/ },
    { env: 'OTEL_BSP_MAX_QUEUE_SIZE', raw: 'lots', message: /whole number of spans/ },
    { env: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', raw: '1000001', message: /between 1 and 1000000/ },
    { env: 'OTEL_BSP_SCHEDULE_DELAY', raw: '-1', message: /whole number of milliseconds/ },
    { env: 'OTEL_BSP_SCHEDULE_DELAY', raw: '3600001', message: /between 0 and 3600000/ },
  ];
  for (const c of cases) {
    it(`${c.env}=${JSON.stringify(c.raw)}`, () => {
      const { config, problems } = readConfig({ [c.env]: c.raw });
      assert.equal(problems.length, 1, JSON.stringify(problems));
      const [problem] = problems as [Problem];
      assert.equal(problem.env, c.env);
      assert.ok(problem.message.startsWith(`${c.env} `), `message names the var: ${problem.message}`);
      assert.match(problem.message, c.message);
      assert.deepEqual(config, DEFAULTS, 'the default is used in place of the bad value');
    });
  }

  it('a bad value does not hide the good ones around it', () => {
    const { config, problems } = readConfig({
      PYROSCOPE_SERVER_ADDRESS: 'http://pyro:4040',
      PYROSCOPE_FLUSH_INTERVAL_MS: 'soon',
      PYRO_RUN_SPAN_SCOPE: 'all',
      PYROSCOPE_LABELS: 'x',
    });
    assert.deepEqual(problems.map((p) => p.env).sort(), ['PYROSCOPE_FLUSH_INTERVAL_MS', 'PYROSCOPE_LABELS']);
    assert.equal(config.pyroscope.serverAddress, 'http://pyro:4040');
    assert.equal(config.spanScope, 'all');
    assert.equal(config.flushIntervalMs, DEFAULTS.flushIntervalMs);
    assert.deepEqual(config.pyroscope.labels, {});
  });

  it('PYROSCOPE_LABELS: the right labels are kept when some are wrong, and the join keys are refused', () => {
    const { config, problems } = readConfig({ PYROSCOPE_LABELS: 'env=prod,region=eu-1,bad-key=x,span_name=checkout,service_name=shop' });
    assert.deepEqual(config.pyroscope.labels, { env: 'prod', region: 'eu-1' });
    assert.equal(problems.length, 1);
    assert.match(problems[0]!.message, /label key "bad-key" may only hold.*label key "span_name" is one pyro-run sends itself.*label key "service_name"/);
    assert.equal(problems[0]!.instead, 'the other labels are used');
    for (const key of ['span_id', 'trace_id', 'thread_name']) assert.deepEqual(readConfig({ PYROSCOPE_LABELS: `${key}=x` }).config.pyroscope.labels, {});
    assert.deepEqual(readConfig({ PYROSCOPE_LABELS: 'ok=1,bad key=2' }).config.pyroscope.labels, { ok: '1' });
    assert.deepEqual(readConfig({ PYROSCOPE_LABELS: 'env=prod,a' }).config.pyroscope.labels, { env: 'prod' });
    assert.equal(parseLabels('env=prod,span_id=x').ok, false, 'the CLI rejects the list');
    // Pyroscope's series bounds: 30 label names (6 are pyro-run's), names of 1024 bytes at most.
    const many = readConfig({ PYROSCOPE_LABELS: Array.from({ length: 26 }, (_, i) => `k${i}=v`).join(',') });
    assert.deepEqual(
      Object.keys(many.config.pyroscope.labels),
      Array.from({ length: 24 }, (_, i) => `k${i}`),
    );
    assert.match(many.problems[0]!.message, /label "k24" is past the 24 static labels.*label "k25"/);
    assert.deepEqual(readConfig({ PYROSCOPE_LABELS: `${'k'.repeat(1025)}=v,ok=1` }).config.pyroscope.labels, { ok: '1' });
  });

  it('a bad OTEL_EXPORTER_OTLP_TRACES_PROTOCOL falls back to OTEL_EXPORTER_OTLP_PROTOCOL', () => {
    const { config, problems } = readConfig({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'thrift', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    assert.deepEqual(
      problems.map((p) => p.env),
      ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'],
    );
    assert.equal(config.traces.protocol, 'grpc');
  });

  it('a client certificate without its key (or a key without its certificate) is one problem per signal, and neither is used', () => {
    const { config, problems } = readConfig({
      PYRO_RUN_PROFILES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: 'client.pem',
      OTEL_EXPORTER_OTLP_CERTIFICATE: 'ca.pem',
    });
    assert.deepEqual(
      problems.map((p) => [p.env, p.instead]),
      [
        ['OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE', 'no client certificate is sent'],
        ['OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE', 'no client certificate is sent'],
      ],
    );
    assert.match(problems[0]!.message, /OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY or OTEL_EXPORTER_OTLP_CLIENT_KEY is not/);
    assert.deepEqual(config.traces.tls, { ca: { env: 'OTEL_EXPORTER_OTLP_CERTIFICATE', path: 'ca.pem' } }, 'the CA still counts');
    const keyOnly = readConfig({ OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: 'k.pem' });
    assert.deepEqual(
      keyOnly.problems.map((p) => p.env),
      ['OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY'],
    );
    assert.match(keyOnly.problems[0]!.message, /OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE or OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is not/);
    // A key set for another signal only is no pair for this one.
    const otherSignal = readConfig({
      PYRO_RUN_PROFILES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: 'client.pem',
      OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY: 'profiles.key',
    });
    assert.deepEqual(otherSignal.config.traces.tls, {});
    assert.deepEqual(
      otherSignal.problems.map((p) => p.env),
      ['OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE'],
    );
  });
});

describe('Pyroscope auth', () => {
  const cases: {
    name: string;
    env: Env;
    expected: Pick<Config['pyroscope'], 'authToken' | 'basicAuthUser' | 'basicAuthPassword'>;
    problemEnvs: string[];
  }[] = [
    {
      name: 'token only',
      env: { PYROSCOPE_AUTH_TOKEN: 'tok-1234' },
      expected: { authToken: 'tok-1234', basicAuthUser: undefined, basicAuthPassword: undefined },
      problemEnvs: [],
    },
    {
      name: 'user and password',
      env: { PYROSCOPE_BASIC_AUTH_USER: 'u', PYROSCOPE_BASIC_AUTH_PASSWORD: 'p4ssword' },
      expected: { authToken: undefined, basicAuthUser: 'u', basicAuthPassword: 'p4ssword' },
      problemEnvs: [],
    },
    {
      name: 'user without password: basic auth is dropped, the missing var is named',
      env: { PYROSCOPE_BASIC_AUTH_USER: 'u' },
      expected: { authToken: undefined, basicAuthUser: undefined, basicAuthPassword: undefined },
      problemEnvs: ['PYROSCOPE_BASIC_AUTH_PASSWORD'],
    },
    {
      name: 'password without user: basic auth is dropped, the missing var is named',
      env: { PYROSCOPE_BASIC_AUTH_PASSWORD: 'p4ssword' },
      expected: { authToken: undefined, basicAuthUser: undefined, basicAuthPassword: undefined },
      problemEnvs: ['PYROSCOPE_BASIC_AUTH_USER'],
    },
    {
      name: 'token and basic auth: the token wins, with a problem',
      env: { PYROSCOPE_AUTH_TOKEN: 'tok-1234', PYROSCOPE_BASIC_AUTH_USER: 'u', PYROSCOPE_BASIC_AUTH_PASSWORD: 'p4ssword' },
      expected: { authToken: 'tok-1234', basicAuthUser: undefined, basicAuthPassword: undefined },
      problemEnvs: ['PYROSCOPE_AUTH_TOKEN'],
    },
    {
      name: 'token and half of basic auth: the token is used, the missing half is named',
      env: { PYROSCOPE_AUTH_TOKEN: 'tok-1234', PYROSCOPE_BASIC_AUTH_USER: 'u' },
      expected: { authToken: 'tok-1234', basicAuthUser: undefined, basicAuthPassword: undefined },
      problemEnvs: ['PYROSCOPE_BASIC_AUTH_PASSWORD'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { config, problems } = readConfig(c.env);
      const { authToken, basicAuthUser, basicAuthPassword } = config.pyroscope;
      assert.deepEqual({ authToken, basicAuthUser, basicAuthPassword }, c.expected);
      assert.deepEqual(
        problems.map((p) => p.env),
        c.problemEnvs,
      );
      for (const p of problems) assert.ok(p.message.includes(p.env), p.message);
    });
  }
});

describe('secret values never appear in problem messages', () => {
  const SECRET = 'Zebra7788Secret';
  it('SECRET_ENV lists the credential-bearing vars', () => {
    for (const name of [
      'PYROSCOPE_AUTH_TOKEN',
      'PYROSCOPE_BASIC_AUTH_PASSWORD',
      'PYRO_RUN_PYROSCOPE_HEADERS',
      'OTEL_EXPORTER_OTLP_HEADERS',
      'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
      'OTEL_EXPORTER_OTLP_PROFILES_HEADERS',
      'OTEL_EXPORTER_OTLP_LOGS_HEADERS',
      'OTEL_EXPORTER_OTLP_METRICS_HEADERS',
    ]) {
      assert.ok(SECRET_ENV.has(name), name);
    }
    assert.ok(!SECRET_ENV.has('OTEL_SERVICE_NAME'), 'plain settings stay printable');
  });

  const badValues = [
    SECRET,
    `authorization=Bearer%20${SECRET}%`,
    `authorization=%zz${SECRET}`,
    `x-key=${SECRET}%E0%A4%A`,
    `bad name=${SECRET}`,
    `Authorization: Bearer ${SECRET}`,
    `=${SECRET}`,
  ];
  for (const name of SECRET_ENV) {
    for (const raw of badValues) {
      it(`${name}=${JSON.stringify(raw.replace(SECRET, '<secret>'))}`, () => {
        const { problems } = readConfig({ [name]: raw });
        for (const p of problems) assert.ok(!p.message.includes(SECRET), `leaks the secret: ${p.message}`);
        if (name.endsWith('HEADERS'))
          assert.deepEqual(
            problems.map((p) => p.env),
            [name],
            'a bad header list is reported',
          );
      });
    }
  }

  it('auth conflicts name the vars, not the credentials', () => {
    for (const env of [
      { PYROSCOPE_AUTH_TOKEN: SECRET, PYROSCOPE_BASIC_AUTH_USER: 'u', PYROSCOPE_BASIC_AUTH_PASSWORD: `${SECRET}pw` },
      { PYROSCOPE_BASIC_AUTH_PASSWORD: SECRET },
    ]) {
      const { problems } = readConfig(env);
      assert.ok(problems.length > 0);
      for (const p of problems) assert.ok(!p.message.includes(SECRET), `leaks the secret: ${p.message}`);
    }
  });
});

describe("pyro-run's span export settings given", () => {
  const cases: { env: Env; given: string[] }[] = [
    { env: {}, given: [] },
    {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'shop', PYROSCOPE_SERVER_ADDRESS: 'http://p:4040' },
      given: ['OTEL_EXPORTER_OTLP_ENDPOINT'],
    },
    {
      env: {
        OTEL_TRACES_EXPORTER: 'console',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c/v1/traces',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: 'a=b',
      },
      given: ['OTEL_TRACES_EXPORTER', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_HEADERS'],
    },
    { env: { OTEL_EXPORTER_OTLP_PROTOCOL: ' ', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x=y' }, given: ['OTEL_EXPORTER_OTLP_TRACES_HEADERS'] },
    { env: { OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://collector:4318' }, given: [] },
    {
      env: { OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: 'ca.pem', OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY: 'p.key' },
      given: ['OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE'],
    },
    // A key without its certificate is a problem, not a setting in effect.
    { env: { OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: 'k.pem', OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' }, given: ['OTEL_EXPORTER_OTLP_COMPRESSION'] },
    {
      env: { OTEL_EXPORTER_OTLP_TIMEOUT: '30000', OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: 'soon', OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT: '500' },
      given: ['OTEL_EXPORTER_OTLP_TIMEOUT'],
    },
  ];
  for (const c of cases) {
    it(`${JSON.stringify(c.env)} → ${c.given.join(', ') || 'none'}`, () => {
      assert.deepEqual(readConfig(c.env).config.traces.settingsGiven, c.given);
    });
  }
});

describe('OTLP traces endpoint and protocol', () => {
  const cases: { name: string; env: Env; protocol: string; endpoint: string | undefined }[] = [
    { name: 'nothing set: the exporter picks its default', env: {}, protocol: 'http/protobuf', endpoint: undefined },
    {
      name: 'signal endpoint used as given',
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom/traces' },
      protocol: 'http/protobuf',
      endpoint: 'http://collector:4318/custom/traces',
    },
    {
      name: 'signal endpoint beats the base endpoint',
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://a:4318/v1/traces', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://b:4318' },
      protocol: 'http/protobuf',
      endpoint: 'http://a:4318/v1/traces',
    },
    {
      name: 'base endpoint + /v1/traces',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' },
      protocol: 'http/protobuf',
      endpoint: 'http://collector:4318/v1/traces',
    },
    {
      name: 'base endpoint with trailing slash',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' },
      protocol: 'http/protobuf',
      endpoint: 'http://collector:4318/v1/traces',
    },
    {
      name: 'base endpoint with a path prefix and trailing slashes',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://gw.example/otlp//' },
      protocol: 'http/protobuf',
      endpoint: 'https://gw.example/otlp/v1/traces',
    },
    {
      name: 'http/json also appends the path',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
      protocol: 'http/json',
      endpoint: 'http://collector:4318/v1/traces',
    },
    {
      name: 'grpc keeps the base endpoint',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      protocol: 'grpc',
      endpoint: 'http://collector:4317',
    },
    {
      name: 'grpc with a signal endpoint uses it as given',
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      protocol: 'grpc',
      endpoint: 'http://collector:4317',
    },
    {
      name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL overrides OTEL_EXPORTER_OTLP_PROTOCOL (grpc wins)',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' },
      protocol: 'grpc',
      endpoint: 'http://collector:4317',
    },
    {
      name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL overrides OTEL_EXPORTER_OTLP_PROTOCOL (http wins)',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'HTTP/JSON' },
      protocol: 'http/json',
      endpoint: 'http://collector:4318/v1/traces',
    },
    {
      name: 'a bad base endpoint leaves the endpoint to the exporter',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'nope' },
      protocol: 'http/protobuf',
      endpoint: undefined,
    },
    {
      name: 'grpc takes host:port without a scheme, as a compose file writes a collector (OTEL_EXPORTER_OTLP_INSECURE picks TLS)',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'otel-collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_INSECURE: 'true' },
      protocol: 'grpc',
      endpoint: 'otel-collector:4317',
    },
    {
      name: 'grpc takes [v6]:port',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: ' [::1]:4317 ', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      protocol: 'grpc',
      endpoint: '[::1]:4317',
    },
    {
      name: 'grpc takes a host:port signal endpoint too',
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4317', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' },
      protocol: 'grpc',
      endpoint: 'collector:4317',
    },
    {
      name: 'host:port over HTTP is no URL: the exporter default',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'otel-collector:4318' },
      protocol: 'http/protobuf',
      endpoint: undefined,
    },
    {
      name: 'grpc and a host with a path but no scheme: no URL',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317/otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      protocol: 'grpc',
      endpoint: undefined,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { config } = readConfig(c.env);
      assert.equal(config.traces.protocol, c.protocol);
      assert.equal(config.traces.endpoint, c.endpoint);
    });
  }

  it('a host:port gRPC endpoint is no problem, and profiles over OTLP/HTTP keep their default URL', () => {
    const { config, problems } = readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'otel-collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    assert.deepEqual(problems, []);
    assert.equal(config.profilesExport.endpoint, 'http://localhost:4318/v1development/profiles');
  });

  it('a signal endpoint with a trailing slash is used as given (OTel spec: "MUST be used as-is")', () => {
    assert.equal(
      readConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces/' }).config.traces.endpoint,
      'http://collector:4318/v1/traces/',
    );
  });
});

describe('switches read outside the table', () => {
  for (const raw of ['true', 'TRUE', ' 1 ', 'yes', 'on']) {
    it(`OTEL_SDK_DISABLED=${JSON.stringify(raw)} disables`, () => assert.equal(clean({ OTEL_SDK_DISABLED: raw }).sdkDisabled, true));
  }
  for (const raw of ['false', '0', 'no', 'off', '', 'banana']) {
    it(`OTEL_SDK_DISABLED=${JSON.stringify(raw)} does not disable`, () => assert.equal(readConfig({ OTEL_SDK_DISABLED: raw }).config.sdkDisabled, false));
  }

  const requested: { env: Env; metrics: boolean; logs: boolean }[] = [
    { env: {}, metrics: false, logs: false },
    { env: { OTEL_METRICS_EXPORTER: 'otlp' }, metrics: true, logs: false },
    { env: { OTEL_LOGS_EXPORTER: 'otlp' }, metrics: false, logs: true },
    { env: { OTEL_METRICS_EXPORTER: 'prometheus', OTEL_LOGS_EXPORTER: 'console' }, metrics: true, logs: true },
    { env: { OTEL_METRICS_EXPORTER: '  ', OTEL_LOGS_EXPORTER: '' }, metrics: false, logs: false },
    { env: { OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' }, metrics: false, logs: false },
    { env: { OTEL_METRICS_EXPORTER: ' None ', OTEL_LOGS_EXPORTER: 'NONE' }, metrics: false, logs: false },
    { env: { OTEL_METRICS_EXPORTER: 'otlp,none', OTEL_LOGS_EXPORTER: ',' }, metrics: false, logs: false },
    { env: { OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'otlp' }, metrics: false, logs: true },
    { env: { OTEL_METRICS_EXPORTER: 'otlp, prometheus' }, metrics: true, logs: false },
  ];
  for (const c of requested) {
    it(`metrics/logs requested for ${JSON.stringify(c.env)}`, () => {
      const config = clean(c.env);
      assert.equal(config.metricsRequested, c.metrics);
      assert.equal(config.logsRequested, c.logs);
    });
  }
});

describe('the parsers on their own', () => {
  it('parseUrl normalises and strips trailing slashes', () => {
    assert.deepEqual(parseUrl(' https://Host.Example:443/a/b/ '), { ok: true, value: 'https://host.example/a/b' });
    assert.deepEqual(parseUrl('http://h:4040'), { ok: true, value: 'http://h:4040' });
    assert.equal(parseUrl('ftp://h').ok, false);
    assert.equal(parseUrl('garbage').ok, false);
    assert.equal(parseUrl('').ok, false);
  });

  it('parseLabels', () => {
    assert.deepEqual(parseLabels('a=1,b=two'), { ok: true, value: { a: '1', b: 'two' } });
    assert.deepEqual(parseLabels(',,'), { ok: true, value: {} });
    assert.deepEqual(parseLabels('a=1,a=2'), { ok: true, value: { a: '2' } });
    for (const raw of ['a', '=b', 'a=', '1a=b', '__x=y', 'a-b=c', 'a b=c', 'é=1']) assert.equal(parseLabels(raw).ok, false, raw);
  });

  it('parseHeaders lower-cases names and URL-decodes values', () => {
    assert.deepEqual(parseHeaders('X-Scope-OrgID=t%2C1,Authorization=Basic%20dTpw'), {
      ok: true,
      value: { 'x-scope-orgid': 't,1', authorization: 'Basic dTpw' },
    });
    assert.deepEqual(parseHeaders('empty='), { ok: true, value: { empty: '' } });
    for (const raw of ['novalue', '=v', 'a b=c', 'a=%zz', 'a=%']) assert.equal(parseHeaders(raw).ok, false, raw);
  });
});

describe('the flag ↔ env table', () => {
  const settings = Object.entries(SETTINGS) as [keyof typeof SETTINGS, Setting][];

  it('every flag and every env var is unique', () => {
    const flags = settings.map(([, s]) => s.flag);
    const envs = settings.map(([, s]) => s.env);
    assert.equal(new Set(flags).size, flags.length, `duplicate flag in ${flags.join(' ')}`);
    assert.equal(new Set(envs).size, envs.length, `duplicate env in ${envs.join(' ')}`);
    for (const name of Object.values(ENV)) assert.ok(!envs.includes(name), `${name} is both in the table and outside it`);
  });

  for (const [key, setting] of settings) {
    it(`${key}: --${setting.flag} ↔ ${setting.env}`, () => {
      assert.match(setting.flag, /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/, 'flag is kebab-case');
      assert.match(setting.env, /^[A-Z][A-Z0-9_]*$/, 'env is upper snake case');
      assert.ok(setting.description.trim().length > 10, 'has a description');
      if (setting.arg !== '') assert.match(setting.arg, /^<.+>$/, 'has an argument placeholder');
      else assert.ok(setting.parse('on').ok, 'a switch sets its env var to on');
      assert.deepEqual(settingByFlag(setting.flag), [key, setting]);
      assert.equal(SECRET_ENV.has(setting.env), setting.secret === true);
    });
  }

  it('settingByFlag does not know unknown flags', () => {
    assert.equal(settingByFlag('no-such-flag'), undefined);
  });
});
