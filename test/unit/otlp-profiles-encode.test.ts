/**
 * A window's profiles as an OTLP profiles request (opentelemetry-proto v1.10.0), decoded by
 * protobufjs from the schema fixture: every index within its table, the zero entries, the links
 * and attributes, one Profile per sample type. Then read as Pyroscope's OTLP ingest reads it, and
 * compared with the /ingest pprof of the same window: the same stacks, spans, names and values.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AllocationProfileNode, TimeProfile, TimeProfileNodeContext } from '@datadog/pprof/out/src/v8-types.js';
import { Profile as EsmProfile } from 'pprof-format';
import { encodeProfilesRequest } from '../../src/export/otlp/otlp-profiles-encode.js';
import { inUsePart } from '../../src/profiling/heap-source.js';
import type { Profile } from '../../src/profiling/profile-window.js';
import type { ProfileType } from '../../src/profiling/profile-types.js';
import { buildTimeProfiles } from '../../src/profiling/time-profile.js';
import { PPROF } from '../../src/profiling/window-encoder.js';
import { SpanLabels } from '../../src/span-link/labels.js';
import { runNow } from '../../src/util/slices.js';
import { type DecodedProfilesRequest, decodeProfilesRequest } from '../support/otlp-profiles-decode.js';
import { sampleViewsOf } from '../support/pprof-helpers.js';
import { metricNameOf, profileTypeIdsOf } from '../support/pyroscope-metric.js';
import { convertRequest } from '../support/pyroscope-otlp.js';
import { sampleAt, SPAN_A, SPAN_B, treeNode } from '../support/raw-window.js';

const MS = 1_000_000;
const INTERVAL_US = 10_000;
const FROM_MS = Date.now() - 20_000;
const UNTIL_MS = FROM_MS + 15_000;

const spanA = new SpanLabels(SPAN_A.spanId, SPAN_A.traceId, { name: SPAN_A.name });
const spanB = new SpanLabels(SPAN_B.spanId, SPAN_B.traceId, { name: SPAN_B.name });
const at = sampleAt;
const node = treeNode;

/** 1 500 hits over 15 s: the mean interval is exactly the asked 10 ms. */
function timeTree(): TimeProfile {
  const tree = node(
    'main',
    3,
    [at(undefined, 20), at(undefined, 5), at(spanB, 0)],
    [
      node('handler', 3, [at(spanA, 70), at(spanA, 33), at(undefined, 5)], [node('db.query', 1, [at(spanA, 0)])]),
      node('worker', 1, [at(spanB, 12), at(spanB, 2)]),
    ],
  );
  return { startTime: 0, endTime: 15_000_000, hasCpuTime: true, totalHitCount: 1500, topDownRoot: node('(root)', 0, [], [tree]) };
}

function heapTree(): AllocationProfileNode {
  let line = 100;
  const heapNode = (name: string, allocations: AllocationProfileNode['allocations'], children: AllocationProfileNode[] = []): AllocationProfileNode => ({
    name,
    scriptName: '/app/index.js',
    scriptId: 1,
    lineNumber: line++,
    columnNumber: 1,
    allocations,
    children,
  });
  return heapNode('(root)', [], [heapNode('main', [], [heapNode('keep', [{ sizeBytes: 32, count: 1000 }])])]);
}

function windowProfiles(): Map<ProfileType, Profile> {
  const spanOf = ({ context }: TimeProfileNodeContext) => (context instanceof SpanLabels ? context : undefined);
  const profiles = runNow(buildTimeProfiles([timeTree()], FROM_MS, { intervalMicros: INTERVAL_US, types: ['cpu', 'wall'], spanOf, traceIdLabel: true }));
  for (const [type, profile] of runNow(inUsePart([{ thread: 'main', snapshot: { tree: heapTree(), externalBytes: 0 } }], 524_288).build(FROM_MS, undefined)))
    profiles.set(type, profile);
  return profiles;
}

const RESOURCE = { 'service.name': 'shop', 'deployment.environment.name': 'test' };

function encoded(profiles = windowProfiles()): DecodedProfilesRequest {
  return decodeProfilesRequest(
    runNow(encodeProfilesRequest({ profiles, from: FROM_MS, until: UNTIL_MS, resource: RESOURCE, scope: { name: 'pyro-run', version: '0.1.0' } })),
  );
}

describe('encodeProfilesRequest', () => {
  it('one shared dictionary whose every table starts with its zero entry, and every index within its table', () => {
    const request = encoded();
    const d = request.dictionary;
    assert.ok(d);
    assert.equal(d.stringTable[0], '');
    assert.deepEqual(d.mappingTable, [{ memoryStart: 0, memoryLimit: 0, fileOffset: 0, filenameStrindex: 0, attributeIndices: [] }]);
    assert.deepEqual(d.locationTable[0], { mappingIndex: 0, address: 0, lines: [], attributeIndices: [] });
    assert.deepEqual(d.functionTable[0], { nameStrindex: 0, systemNameStrindex: 0, filenameStrindex: 0, startLine: 0 });
    assert.deepEqual(d.linkTable[0], { traceId: Buffer.alloc(0), spanId: Buffer.alloc(0) });
    assert.equal(d.attributeTable[0]?.keyStrindex, 0);
    assert.deepEqual(d.stackTable[0], { locationIndices: [] });
    const inRange = (index: number, table: readonly unknown[], what: string) =>
      assert.ok(index >= 0 && index < table.length, `${what} ${index} of ${table.length}`);
    for (const location of d.locationTable) {
      inRange(location.mappingIndex, d.mappingTable, 'mapping');
      for (const line of location.lines) inRange(line.functionIndex, d.functionTable, 'function');
    }
    for (const fn of d.functionTable)
      for (const index of [fn.nameStrindex, fn.systemNameStrindex, fn.filenameStrindex]) inRange(index, d.stringTable, 'string');
    for (const attribute of d.attributeTable) inRange(attribute.keyStrindex, d.stringTable, 'attribute key');
    for (const stack of d.stackTable) for (const index of stack.locationIndices) inRange(index, d.locationTable, 'location');
    assert.equal(request.resourceProfiles.length, 1);
    const [scope] = request.resourceProfiles[0]!.scopeProfiles;
    assert.deepEqual({ name: scope?.scope?.name, version: scope?.scope?.version }, { name: 'pyro-run', version: '0.1.0' });
    for (const profile of scope!.profiles) {
      inRange(profile.sampleType!.typeStrindex, d.stringTable, 'sample type');
      inRange(profile.periodType!.unitStrindex, d.stringTable, 'period unit');
      for (const sample of profile.samples) {
        assert.notEqual(sample.stackIndex, 0, 'a sample has a stack');
        inRange(sample.stackIndex, d.stackTable, 'stack');
        inRange(sample.linkIndex, d.linkTable, 'link');
        for (const index of sample.attributeIndices) inRange(index, d.attributeTable, 'attribute');
        assert.equal(sample.values.length, 1);
      }
    }
  });

  it('a sample in a span links to its trace and span ID, and carries span_name as an attribute; one outside carries neither; both carry thread_name', () => {
    const request = encoded();
    const d = request.dictionary!;
    const text = (i: number) => d.stringTable[i];
    const cpu = request.resourceProfiles[0]!.scopeProfiles[0]!.profiles.find((p) => text(p.periodType!.typeStrindex) === 'cpu')!;
    const spanIdsOf = new Set<string>();
    for (const sample of cpu.samples) {
      const leaf = text(d.functionTable[d.locationTable[d.stackTable[sample.stackIndex]!.locationIndices[0]!]!.lines[0]!.functionIndex]!.nameStrindex);
      const attributes = Object.fromEntries(
        sample.attributeIndices.map((i) => [text(d.attributeTable[i]!.keyStrindex), d.attributeTable[i]!.value?.stringValue]),
      );
      if (sample.linkIndex === 0) {
        assert.deepEqual(attributes, { thread_name: 'main' }, `${leaf}: no span, no span_name`);
        continue;
      }
      const link = d.linkTable[sample.linkIndex]!;
      const span = link.spanId.toString('hex') === spanA.spanId ? spanA : spanB;
      assert.equal(link.spanId.toString('hex'), span.spanId);
      assert.equal(link.traceId.toString('hex'), span.traceId);
      assert.deepEqual(attributes, { span_name: span.spanName, thread_name: 'main' });
      spanIdsOf.add(span.spanId);
    }
    assert.deepEqual([...spanIdsOf].sort(), [spanA.spanId, spanB.spanId].sort());
    assert.equal(d.linkTable.length, 3, 'one link per span, shared by its samples and profiles');
  });

  it('one Profile per sample type: CPU as samples/count over a cpu/nanoseconds period, wall in nanoseconds, memory in bytes and objects; the window’s time and length', () => {
    const request = encoded();
    const d = request.dictionary!;
    const text = (i: number) => d.stringTable[i];
    const profiles = request.resourceProfiles[0]!.scopeProfiles[0]!.profiles.map((p) => ({
      sampleType: `${text(p.sampleType!.typeStrindex)}/${text(p.sampleType!.unitStrindex)}`,
      periodType: `${text(p.periodType!.typeStrindex)}/${text(p.periodType!.unitStrindex)}`,
      period: p.period,
      time: p.timeUnixNano,
      duration: p.durationNano,
    }));
    assert.deepEqual(profiles, [
      { sampleType: 'samples/count', periodType: 'cpu/nanoseconds', period: INTERVAL_US * 1000, time: FROM_MS * MS, duration: 15_000 * MS },
      { sampleType: 'wall/nanoseconds', periodType: 'wall/nanoseconds', period: INTERVAL_US * 1000, time: FROM_MS * MS, duration: 15_000 * MS },
      { sampleType: 'inuse_space/bytes', periodType: 'inuse_space/bytes', period: 524_288, time: FROM_MS * MS, duration: 15_000 * MS },
      { sampleType: 'inuse_objects/count', periodType: 'inuse_space/bytes', period: 524_288, time: FROM_MS * MS, duration: 15_000 * MS },
    ]);
    assert.deepEqual(
      request.resourceProfiles[0]!.resource!.attributes.map(({ key, value }) => [key, value?.stringValue]),
      Object.entries(RESOURCE),
    );
  });

  it('read as Pyroscope reads OTLP, a window is the /ingest pprof of the same window: stacks, spans and names alike, CPU within half a period per sample, wall exact', () => {
    const profiles = windowProfiles();
    const { reply, records } = convertRequest(encoded(profiles), { receivedAt: Date.now(), headers: {} });
    assert.equal(reply.status, 200, reply.error);
    const viaIngest = (type: ProfileType) => {
      const pprof = EsmProfile.decode(
        runNow(PPROF.encode(new Map([[type, profiles.get(type)!]]), { from: FROM_MS, until: UNTIL_MS, parts: [], longestStopMs: 0, stops: 1 }))[0]!.body,
      );
      return { metricName: metricNameOf(pprof), typeIds: profileTypeIdsOf(pprof, metricNameOf(pprof)), samples: sampleViewsOf(pprof) };
    };
    const key = (s: { stack: string[]; labels: Record<string, string> }) => `${s.stack.join('<')} ${JSON.stringify(Object.entries(s.labels).sort())}`;
    for (const [type, valueName, tolerance] of [
      ['cpu', 'cpu', (INTERVAL_US * 1000) / 2],
      ['wall', 'wall', 0],
    ] as const) {
      const ingest = viaIngest(type);
      const otlp = records.find((record) => ingest.typeIds.includes(record.profileTypeId));
      assert.ok(
        otlp,
        `${type}: the OTLP series is the /ingest profile type (${ingest.typeIds.join(', ')}); got ${records.map((r) => r.profileTypeId).join(', ')}`,
      );
      assert.equal(otlp.metricName, ingest.metricName);
      const expected = new Map(ingest.samples.map((s) => [key(s), s.values[valueName] ?? 0]));
      const got = new Map(otlp.samples.map((s) => [key(s), s.values[valueName] ?? 0]));
      for (const [sample, value] of expected) {
        if (value < tolerance) continue;
        assert.ok(got.has(sample), `${type}: ${sample} missing over OTLP`);
        assert.ok(Math.abs(got.get(sample)! - value) <= tolerance, `${type} ${sample}: ${got.get(sample)} vs ${value}`);
      }
      for (const sample of got.keys()) assert.ok(expected.has(sample), `${type}: ${sample} only over OTLP`);
    }
    const series = records[0]!.seriesLabels;
    assert.deepEqual(series, {
      __delta__: 'false',
      __otel__: 'true',
      __name__: 'process_cpu',
      'service.name': 'shop',
      'deployment.environment.name': 'test',
      service_name: 'shop',
    });
  });
});
