/**
 * splitTimeProfile on a profile shaped like @datadog/pprof's time profile (built with the
 * CommonJS pprof-format classes @datadog/pprof itself uses): the two outputs must encode, decode
 * the way the server decodes, and be named `process_cpu` and `wall` by Pyroscope's naming rules.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import type { Profile as EsmProfile } from 'pprof-format';
import type { ProfileType } from '../src/config.js';
import { splitTimeProfile, type Profile } from '../src/pprof-split.js';
import { functionNamesOf } from './support/pprof-helpers.js';
import { decodePprof } from './support/pprof-wire.js';
import { metricNameOf, profileTypeIdsOf, sampleTypeNames, stringAt } from './support/pyroscope-metric.js';

type PprofFormatCjs = typeof import('pprof-format', { with: { 'resolution-mode': 'require' } });
const pf = createRequire(import.meta.url)('pprof-format') as PprofFormatCjs;

const MS = 1_000_000; // nanoseconds
const PERIOD = 10 * MS;
const TIME_NANOS = 1_700_000_000_000 * MS;
const DURATION_NANOS = 15_000 * MS;

type LabelSpec = Record<string, string | number>;
interface SampleSpec {
  /** Function names, leaf first. */
  stack: string[];
  /** [count, wall, cpu] like @datadog/pprof with CPU time, or [count, wall] without. */
  values: number[];
  labels?: LabelSpec;
}

const SPAN_A = { span_id: '00f067aa0ba902b7', span_name: 'GET /users/:id', trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' };
const SPAN_B = { span_id: 'b7ad6b7169203331', span_name: 'job' };

/** The samples, with what each must become. */
const SAMPLES: { spec: SampleSpec; cpu?: number[]; wall?: number[] }[] = [
  { spec: { stack: ['handler', 'main'], values: [1, 10 * MS, 7 * MS], labels: SPAN_A }, cpu: [1, 7 * MS], wall: [1, 10 * MS] },
  // Waiting on I/O inside the span: wall time, no CPU time.
  { spec: { stack: ['db.query', 'handler', 'main'], values: [1, 10 * MS, 0], labels: SPAN_A }, wall: [1, 10 * MS] },
  // Unlabelled work outside any span.
  { spec: { stack: ['main'], values: [3, 30 * MS, 25 * MS] }, cpu: [3, 25 * MS], wall: [3, 30 * MS] },
  // @datadog/pprof's CPU-only entry (a context with CPU time but no hit left): count 0, wall 0.
  { spec: { stack: ['worker', 'main'], values: [0, 0, 2 * MS], labels: { ...SPAN_B, thread: 7 } }, cpu: [0, 2 * MS] },
  // An idle sample: a hit with no wall or CPU time.
  { spec: { stack: ['(idle)'], values: [1, 0, 0], labels: SPAN_B }, wall: [1, 0] },
  // A sample with nothing at all: in neither output.
  { spec: { stack: ['(program)'], values: [0, 0, 0] } },
];

/** Builds the profile the way @datadog/pprof's serializeTimeProfile does. */
function buildTimeProfile(samples: SampleSpec[], withCpu = true): Profile {
  const strings = new pf.StringTable();
  const functions = new Map<string, InstanceType<PprofFormatCjs['Function']>>();
  const locations = new Map<string, InstanceType<PprofFormatCjs['Location']>>();
  const locationFor = (name: string) => {
    let location = locations.get(name);
    if (location === undefined) {
      const fn = new pf.Function({ id: functions.size + 1, name: strings.dedup(name), systemName: strings.dedup(name), filename: strings.dedup('/app/index.js') });
      functions.set(name, fn);
      location = new pf.Location({ id: locations.size + 1, line: [new pf.Line({ functionId: fn.id, line: 10 + locations.size })] });
      locations.set(name, location);
    }
    return location;
  };
  const wall = new pf.ValueType({ type: strings.dedup('wall'), unit: strings.dedup('nanoseconds') });
  const sampleType = [new pf.ValueType({ type: strings.dedup('sample'), unit: strings.dedup('count') }), wall];
  if (withCpu) sampleType.push(new pf.ValueType({ type: strings.dedup('cpu'), unit: strings.dedup('nanoseconds') }));
  const sample = samples.map(
    (s) =>
      new pf.Sample({
        locationId: s.stack.map((name) => locationFor(name).id),
        value: withCpu ? s.values : s.values.slice(0, 2),
        label: Object.entries(s.labels ?? {}).map(([key, value]) =>
          typeof value === 'string' ? new pf.Label({ key: strings.dedup(key), str: strings.dedup(value) }) : new pf.Label({ key: strings.dedup(key), num: value }),
        ),
      }),
  );
  const profile = new pf.Profile({
    sampleType,
    sample,
    location: [...locations.values()],
    function: [...functions.values()],
    stringTable: strings,
    timeNanos: TIME_NANOS,
    durationNanos: DURATION_NANOS,
    periodType: wall,
    period: PERIOD,
  });
  return profile as unknown as Profile;
}

interface SampleView {
  stack: string[];
  values: number[];
  labels: LabelSpec;
}

function labelsOf(profile: EsmProfile, sample: EsmProfile['sample'][number]): LabelSpec {
  const labels: LabelSpec = {};
  for (const label of sample.label) labels[stringAt(profile, label.key)] = Number(label.str) !== 0 ? stringAt(profile, label.str) : Number(label.num);
  return labels;
}

function viewsOf(profile: EsmProfile): SampleView[] {
  return profile.sample.map((s) => ({ stack: functionNamesOf(profile, s), values: s.value.map(Number), labels: labelsOf(profile, s) }));
}

/** Encodes, then decodes the bytes the way the server does (wire checked against profile.proto, then pprof-format's Profile.decode). */
function roundTrip(profile: Profile): EsmProfile {
  const bytes = profile.encode();
  return decodePprof(bytes).profile;
}

function expectedViews(which: 'cpu' | 'wall'): SampleView[] {
  return SAMPLES.filter((s) => s[which] !== undefined).map((s) => ({ stack: s.spec.stack, values: s[which] as number[], labels: s.spec.labels ?? {} }));
}

describe('splitTimeProfile', () => {
  const source = () => buildTimeProfile(SAMPLES.map((s) => s.spec));

  it('the source as @datadog/pprof yields it would be named wall by Pyroscope (why it is split)', () => {
    const decoded = roundTrip(source());
    assert.deepEqual(sampleTypeNames(decoded), [
      { type: 'sample', unit: 'count' },
      { type: 'wall', unit: 'nanoseconds' },
      { type: 'cpu', unit: 'nanoseconds' },
    ]);
    assert.equal(metricNameOf(decoded), 'wall');
  });

  const views: {
    which: ProfileType;
    sampleTypes: { type: string; unit: string }[];
    metric: string;
    typeIds: string[];
  }[] = [
    {
      which: 'cpu',
      sampleTypes: [
        { type: 'samples', unit: 'count' },
        { type: 'cpu', unit: 'nanoseconds' },
      ],
      metric: 'process_cpu',
      typeIds: ['process_cpu:samples:count:cpu:nanoseconds', 'process_cpu:cpu:nanoseconds:cpu:nanoseconds'],
    },
    {
      which: 'wall',
      sampleTypes: [
        { type: 'samples', unit: 'count' },
        { type: 'wall', unit: 'nanoseconds' },
      ],
      metric: 'wall',
      typeIds: ['wall:samples:count:wall:nanoseconds', 'wall:wall:nanoseconds:wall:nanoseconds'],
    },
  ];
  for (const v of views) {
    describe(`the ${v.which} profile`, () => {
      const decoded = () => {
        const out = splitTimeProfile(source(), ['cpu', 'wall']).get(v.which);
        assert.ok(out, `${v.which} profile produced`);
        return roundTrip(out);
      };

      it('has the sample types and period type Pyroscope names it by', () => {
        const profile = decoded();
        assert.deepEqual(sampleTypeNames(profile), v.sampleTypes);
        assert.ok(profile.periodType, 'has a period type');
        assert.deepEqual(
          { type: stringAt(profile, profile.periodType.type), unit: stringAt(profile, profile.periodType.unit) },
          { type: v.which, unit: 'nanoseconds' },
        );
        assert.equal(Number(profile.period), PERIOD);
      });

      it('is named as Grafana expects', () => {
        const profile = decoded();
        assert.equal(metricNameOf(profile), v.metric);
        assert.deepEqual(profileTypeIdsOf(profile, v.metric), v.typeIds);
      });

      it('keeps the right samples with [count, metric] values, their stacks and labels', () => {
        assert.deepEqual(viewsOf(decoded()), expectedViews(v.which));
      });

      it('keeps the window', () => {
        const profile = decoded();
        assert.equal(Number(profile.timeNanos), TIME_NANOS);
        assert.equal(Number(profile.durationNanos), DURATION_NANOS);
      });
    });
  }

  it('every CPU sample carries CPU time; idle and I/O-wait samples are not CPU work', () => {
    const cpu = splitTimeProfile(source(), ['cpu']).get('cpu');
    assert.ok(cpu);
    const values = roundTrip(cpu).sample.map((s) => Number(s.value[1]));
    assert.ok(values.length > 0);
    for (const value of values) assert.ok(value > 0, `cpu value ${value}`);
  });

  const wanted: { wanted: ProfileType[]; withCpu: boolean; keys: ProfileType[] }[] = [
    { wanted: ['cpu', 'wall'], withCpu: true, keys: ['cpu', 'wall'] },
    { wanted: ['wall', 'cpu'], withCpu: true, keys: ['cpu', 'wall'] },
    { wanted: ['cpu'], withCpu: true, keys: ['cpu'] },
    { wanted: ['wall'], withCpu: true, keys: ['wall'] },
    { wanted: [], withCpu: true, keys: [] },
    { wanted: ['cpu', 'wall'], withCpu: false, keys: ['wall'] },
    { wanted: ['cpu'], withCpu: false, keys: [] },
  ];
  for (const w of wanted) {
    it(`wanted ${JSON.stringify(w.wanted)} from a profile ${w.withCpu ? 'with' : 'without'} CPU time → ${JSON.stringify(w.keys)}`, () => {
      const out = splitTimeProfile(buildTimeProfile(SAMPLES.map((s) => s.spec), w.withCpu), w.wanted);
      assert.deepEqual([...out.keys()].sort(), w.keys);
    });
  }

  it('a wall profile from a source without CPU time has the same samples', () => {
    const out = splitTimeProfile(buildTimeProfile(SAMPLES.map((s) => s.spec), false), ['wall']).get('wall');
    assert.ok(out);
    const profile = roundTrip(out);
    assert.equal(metricNameOf(profile), 'wall');
    assert.deepEqual(viewsOf(profile), expectedViews('wall'));
  });

  it('outputs are built with the source’s own (CommonJS) classes and leave the source intact', () => {
    const src = source();
    const before = viewsOf(roundTrip(src));
    const out = splitTimeProfile(src, ['cpu', 'wall']);
    for (const profile of out.values()) assert.ok(profile instanceof pf.Profile);
    assert.notEqual(out.get('cpu')?.sample, out.get('wall')?.sample);
    assert.equal(src.sample.length, SAMPLES.length);
    assert.deepEqual(viewsOf(roundTrip(src)), before);
    assert.equal(metricNameOf(roundTrip(src)), 'wall');
  });

  it('an empty window yields valid, empty profiles', () => {
    const out = splitTimeProfile(buildTimeProfile([]), ['cpu', 'wall']);
    for (const [which, profile] of out) {
      const decoded = roundTrip(profile);
      assert.equal(decoded.sample.length, 0, which);
      assert.equal(metricNameOf(decoded), which === 'cpu' ? 'process_cpu' : 'wall');
    }
    assert.equal(out.size, 2);
  });
});
