/**
 * The parts that attach pyro-run to an app's own OpenTelemetry set-up (src/app-otel/), with the
 * SDK's real TracerProvider: pyro-run's span processor joins a provider the app already built (and
 * the tracers it already handed out), the tracers pyro-run hands out follow the provider in charge,
 * and a provider that cannot take a processor gets one warning naming the line to add.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { AppOtel } from '../../src/app-otel/attach.js';
import { addSpanProcessor, serviceNameOf, untestedSdk } from '../../src/app-otel/provider.js';
import { loadedVersions } from '../../src/app-otel/sdk-versions.js';
import { globalState } from '../../src/util/global-state.js';
import { TracerSwitch } from '../../src/app-otel/tracer-switch.js';
import { Logger } from '../../src/log.js';
import { pyroscopeSpanProcessor, publishSpanHooks, type SpanHooks } from '../../src/span-link/public-processor.js';

/** Records what it was called with, in order, next to the app's own exporter. */
function recordingProcessor(name: string, calls: string[]) {
  return {
    onStart: (span: object) => calls.push(`${name} start ${(span as { name: string }).name}`),
    onEnd: (span: object) => calls.push(`${name} end ${(span as { name: string }).name}`),
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
}

function appProvider(calls: string[]) {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout' }),
    spanProcessors: [recordingProcessor('app', calls), new SimpleSpanProcessor({ exporter })],
  });
  return { provider, exporter };
}

describe('addSpanProcessor', () => {
  it('joins a provider the app built, first in line, for the tracers it already handed out too', () => {
    const calls: string[] = [];
    const { provider, exporter } = appProvider(calls);
    const early = provider.getTracer('early');
    assert.equal(addSpanProcessor(provider, recordingProcessor('ours', calls)), 'fan-out');
    early.startSpan('GET /', {}, ROOT_CONTEXT).end();
    provider.getTracer('late').startSpan('query', {}, ROOT_CONTEXT).end();
    assert.deepEqual(calls, [
      'ours start GET /',
      'app start GET /',
      'ours end GET /',
      'app end GET /',
      'ours start query',
      'app start query',
      'ours end query',
      'app end query',
    ]);
    assert.equal(exporter.getFinishedSpans().length, 2, "the app's exporter still gets every span, once");
  });

  it("leaves a provider built with pyroscopeSpanProcessor() as it is: the app's processor forwards to the agent", () => {
    const calls: string[] = [];
    const provider = new TracerProvider({ spanProcessors: [pyroscopeSpanProcessor()] });
    const hooks: SpanHooks = recordingProcessor('agent', calls);
    publishSpanHooks(hooks);
    try {
      assert.equal(addSpanProcessor(provider, recordingProcessor('ours', calls)), 'present');
      provider.getTracer('t').startSpan('GET /', {}, ROOT_CONTEXT).end();
      assert.deepEqual(calls, ['agent start GET /', 'agent end GET /']);
      const untouchable = new Proxy({}, { get: (_target, key) => assert.fail(`read ${String(key)} of a provider the app linked itself`) });
      assert.equal(addSpanProcessor(untouchable, recordingProcessor('ours', calls)), 'present', 'the supported way in: nothing is reached into to add ours');
    } finally {
      publishSpanHooks(undefined);
      globalState().publicProcessorMade = undefined;
    }
  });

  it('uses addSpanProcessor on a provider of sdk-trace-base 1.x, and declines one it cannot reach', () => {
    const added: unknown[] = [];
    const legacy = { _registeredSpanProcessors: added, addSpanProcessor: (p: unknown) => added.push(p) };
    const ours = recordingProcessor('ours', []);
    assert.equal(addSpanProcessor(legacy, ours), 'added');
    assert.deepEqual(added, [ours]);
    assert.equal(addSpanProcessor({ getTracer: () => undefined }, ours), 'unsupported');
  });

  it('tells a trace SDK release the fan-out route is not tested on, by major', () => {
    const cases: [Record<string, string>, string | undefined][] = [
      [{}, undefined],
      [{ '@opentelemetry/sdk-trace-base': '2.12.1' }, undefined],
      [{ '@opentelemetry/sdk-trace': '3.0.0', '@opentelemetry/sdk-node': '0.300.0' }, undefined],
      [{ '@opentelemetry/sdk-trace-base': '4.0.0' }, '@opentelemetry/sdk-trace-base@4.0.0'],
      [{ '@opentelemetry/sdk-trace-base': '2.12.1', '@opentelemetry/sdk-trace': '2.12.1' }, undefined],
      [{ '@opentelemetry/sdk-trace-base': '1.30.1' }, '@opentelemetry/sdk-trace-base@1.30.1'],
    ];
    for (const [loaded, expected] of cases) assert.equal(untestedSdk(new Map(Object.entries(loaded))), expected, JSON.stringify(loaded));
  });

  it("reads the provider's service.name", () => {
    assert.equal(serviceNameOf(appProvider([]).provider), 'checkout');
    assert.equal(serviceNameOf({ resource: { attributes: { 'service.name': 'legacy' } } }), 'legacy');
    assert.equal(serviceNameOf({}), undefined);
  });
});

describe('TracerSwitch', () => {
  it('a tracer handed out before the switch starts its spans on the provider in charge after it', () => {
    const ourExporter = new InMemorySpanExporter();
    const ours = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: ourExporter })] });
    const { provider: theirs, exporter: theirExporter } = appProvider([]);
    const tracers = new TracerSwitch(ours);
    const tracer = tracers.getTracer('instrumentation-http', '1.0.0');
    tracer.startSpan('before', {}, ROOT_CONTEXT).end();
    tracers.switchTo(theirs);
    tracer.startSpan('after', {}, ROOT_CONTEXT).end();
    tracer.startActiveSpan('active', {}, ROOT_CONTEXT, (span) => span.end());
    assert.deepEqual(
      ourExporter.getFinishedSpans().map((s) => s.name),
      ['before'],
    );
    assert.deepEqual(
      theirExporter.getFinishedSpans().map((s) => s.name),
      ['after', 'active'],
    );
    assert.equal(theirExporter.getFinishedSpans()[0]?.instrumentationScope.name, 'instrumentation-http');
    assert.equal(tracers.getTracer('instrumentation-http', '1.0.0'), tracer, 'one tracer per name and version, as a provider keeps them');
  });
});

describe('AppOtel', () => {
  const attach = (provider: object) => {
    const lines: string[] = [];
    const renamed: string[] = [];
    const app = new AppOtel({
      processors: [],
      linkContext: undefined,
      renameService: (name) => renamed.push(name),
      exportSettings: [],
      log: new Logger(
        'info',
        (t) => t,
        (line) => lines.push(line),
      ),
    });
    app.adopt({ provider });
    publishSpanHooks(undefined);
    return { lines, renamed };
  };

  it("names profiles with the app's service.name and says once where its spans go", () => {
    const { lines, renamed } = attach(appProvider([]).provider);
    assert.deepEqual(renamed, ['checkout']);
    assert.deepEqual(lines, [
      `pyro-run: info: the app's own OpenTelemetry SDK handles its spans (service.name "checkout"); pyro-run added its span processor there and links the spans to profiles\n`,
    ]);
  });

  it('tells, once, the line to add where the provider cannot take a processor once built', () => {
    class SealedProvider {
      getTracer() {
        return undefined;
      }
    }
    const { lines, renamed } = attach(new SealedProvider());
    assert.deepEqual(renamed, []);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^pyro-run: warning: the app's tracer provider \(SealedProvider\) takes no span processor once built/);
    assert.match(lines[0]!, /spanProcessors: \[pyroscopeSpanProcessor\(\), \.\.\.\] with import \{ pyroscopeSpanProcessor \} from 'pyro-run'/);
  });
});

describe('loadedVersions', () => {
  it('finds each package by the innermost node_modules of its modules, the first copy found, one package.json read each', () => {
    const read: string[] = [];
    const versions: Record<string, string> = {
      '/app/node_modules/@opentelemetry/sdk-node/': '0.300.0',
      '/app/node_modules/@opentelemetry/sdk-node/node_modules/@opentelemetry/sdk-trace-base/': '2.12.1',
      '/app/node_modules/@opentelemetry/sdk-trace-base/': '1.30.0',
    };
    const found = loadedVersions(
      ['@opentelemetry/sdk-trace-base', '@opentelemetry/sdk-trace'],
      [
        '/app/node_modules/@opentelemetry/sdk-node/build/src/sdk.js',
        '/app/node_modules/@opentelemetry/sdk-node/node_modules/@opentelemetry/sdk-trace-base/build/src/index.js',
        '/app/node_modules/@opentelemetry/sdk-node/node_modules/@opentelemetry/sdk-trace-base/build/src/Tracer.js',
        '/app/node_modules/@opentelemetry/sdk-trace-base/build/src/index.js',
        '/app/server.js',
      ],
      (dir) => {
        read.push(dir);
        return versions[dir];
      },
    );
    assert.deepEqual([...found], [['@opentelemetry/sdk-trace-base', '2.12.1']]);
    assert.deepEqual(read, ['/app/node_modules/@opentelemetry/sdk-node/node_modules/@opentelemetry/sdk-trace-base/']);
  });
});
