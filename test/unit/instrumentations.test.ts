/** Which instrumentations load: the env rules of auto-instrumentations-node, plus "only what the app has installed". */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { installedFrom, loadInstrumentations, selectInstrumentations } from '../../src/tracing/instrumentations.js';

const NODE_ITSELF = ['dns', 'http', 'net', 'undici'];
const has =
  (...modules: string[]) =>
  (module: string) =>
    modules.includes(module);

describe('selectInstrumentations', () => {
  const cases: { name: string; env?: Record<string, string>; installed?: string[]; metrics?: boolean; expected: string[]; unknown?: string[] }[] = [
    { name: 'nothing installed: only what instruments Node itself', expected: NODE_ITSELF },
    { name: 'express 5 app: express and router too', installed: ['express', 'router'], expected: ['dns', 'express', 'http', 'net', 'router', 'undici'] },
    { name: 'pg via pg-pool alone', installed: ['pg-pool'], expected: ['dns', 'http', 'net', 'pg', 'undici'] },
    { name: 'redis v4 client package', installed: ['@redis/client'], expected: ['dns', 'http', 'net', 'redis', 'undici'] },
    {
      name: 'an AWS SDK v3 client of today (@smithy/core, no smithy-client)',
      installed: ['@aws-sdk/client-sqs', '@smithy/core'],
      expected: ['aws-sdk', ...NODE_ITSELF],
    },
    { name: "the AWS SDK's middleware stack alone", installed: ['@smithy/middleware-stack'], expected: ['aws-sdk', ...NODE_ITSELF] },
    { name: 'runtime metrics only when metrics are exported', metrics: true, expected: ['dns', 'http', 'net', 'runtime-node', 'undici'] },
    { name: 'aws-lambda only inside Lambda', env: { AWS_LAMBDA_FUNCTION_NAME: 'f' }, expected: ['aws-lambda', ...NODE_ITSELF] },
    { name: 'fs stays off by default, even though Node has fs', expected: NODE_ITSELF },
    { name: 'the enabled list is exact, installed or not', env: { OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'pg, fs' }, expected: ['fs', 'pg'] },
    { name: 'disabled wins', env: { OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'dns,net' }, installed: ['express'], expected: ['express', 'http', 'undici'] },
    {
      name: 'disabled wins over enabled',
      env: { OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'http,pg', OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'pg' },
      expected: ['http'],
    },
    {
      name: 'unknown names are reported',
      env: { OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'http,nope', OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'zzz' },
      expected: ['http'],
      unknown: ['nope', 'zzz'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const result = selectInstrumentations(c.env ?? {}, has(...(c.installed ?? [])), { metrics: c.metrics ?? false, logs: false });
      assert.deepEqual([...result.names].sort(), [...c.expected].sort());
      assert.deepEqual(result.unknown, c.unknown ?? []);
    });
  }
});

describe('installedFrom', () => {
  it('finds packages in any ancestor node_modules and in NODE_PATH, not elsewhere', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'pyro-run-installed-'));
    const app = path.join(root, 'apps', 'shop', 'src');
    mkdirSync(app, { recursive: true });
    for (const [dir, name] of [
      [path.join(root, 'node_modules'), 'pg'],
      [path.join(root, 'apps', 'shop', 'node_modules'), '@nestjs/core'],
      [path.join(root, 'global'), 'koa'],
    ] as const) {
      mkdirSync(path.join(dir, name), { recursive: true });
      writeFileSync(path.join(dir, name, 'package.json'), '{}');
    }
    const installed = installedFrom([app], { NODE_PATH: path.join(root, 'global') });
    assert.equal(installed('pg'), true, 'hoisted to the repo root');
    assert.equal(installed('@nestjs/core'), true, 'scoped, in the app’s own node_modules');
    assert.equal(installed('koa'), true, 'through NODE_PATH');
    assert.equal(installed('no-such-package-pyro-run-test'), false);
    assert.equal(installedFrom([app], {})('koa'), false);
  });
});

describe('loadInstrumentations', () => {
  it('instantiates each selected instrumentation from its own package', () => {
    const errors: string[] = [];
    const loaded = loadInstrumentations(['http', 'express', 'pg', 'undici'], { metrics: false, logs: false }, (name) => errors.push(name));
    assert.deepEqual(errors, []);
    assert.deepEqual(
      loaded.map((i) => i.instrumentationName),
      [
        '@opentelemetry/instrumentation-http',
        '@opentelemetry/instrumentation-express',
        '@opentelemetry/instrumentation-pg',
        '@opentelemetry/instrumentation-undici',
      ],
    );
    for (const instrumentation of loaded) instrumentation.disable();
  });

  it('the logger instrumentations send log lines as log records only when a logs pipeline is asked for; they correlate either way', () => {
    const sending = (logs: boolean) =>
      loadInstrumentations(['pino', 'bunyan', 'winston'], { metrics: false, logs }, (name) => assert.fail(name)).map((instrumentation) => {
        instrumentation.disable();
        const config = instrumentation.getConfig() as { disableLogSending?: boolean; disableLogCorrelation?: boolean };
        return [instrumentation.instrumentationName, config.disableLogSending, config.disableLogCorrelation ?? false];
      });
    assert.deepEqual(sending(false), [
      ['@opentelemetry/instrumentation-pino', true, false],
      ['@opentelemetry/instrumentation-bunyan', true, false],
      ['@opentelemetry/instrumentation-winston', true, false],
    ]);
    assert.deepEqual(
      sending(true).map(([name, disabled]) => [name, disabled]),
      [
        ['@opentelemetry/instrumentation-pino', false],
        ['@opentelemetry/instrumentation-bunyan', false],
        ['@opentelemetry/instrumentation-winston', false],
      ],
    );
  });
});
