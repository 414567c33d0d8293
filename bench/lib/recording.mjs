// Reads a pyro-run local recording (docs/local-mode.md) without pyro-run's own reader, so the
// benchmark checks the files as any other tool would see them: gzipped pprof decoded with
// pprof-format, spans as OTLP/JSON lines.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';

/** The single run folder a process wrote under `dir`. */
export function runDir(dir) {
  const runs = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.'));
  if (runs.length !== 1) throw new Error(`expected one run folder in ${dir}, found ${runs.length}`);
  return path.join(dir, runs[0].name);
}

const visible = (dir, re) => {
  try {
    return readdirSync(dir)
      .filter((name) => !name.startsWith('.') && re.test(name))
      .sort();
  } catch {
    return [];
  }
};

/**
 * CPU samples of every window, each as { stack: [function names, leaf first], count, spanId }.
 * `count` is the sample/count value: how many sampler ticks the sample stands for.
 */
export function cpuSamples(run) {
  const out = [];
  for (const name of visible(path.join(run, 'profiles'), /-cpu\.pb\.gz$/)) {
    const profile = Profile.decode(gunzipSync(readFileSync(path.join(run, 'profiles', name))));
    const strings = profile.stringTable.strings;
    const str = (i) => strings[Number(i)];
    const countIndex = profile.sampleType.findIndex((t) => str(t.type) === 'samples');
    const functionName = new Map(profile.function.map((f) => [Number(f.id), str(f.name)]));
    const locationNames = new Map(profile.location.map((l) => [Number(l.id), l.line.map((line) => functionName.get(Number(line.functionId)))]));
    for (const sample of profile.sample) {
      const label = sample.label.find((l) => str(l.key) === 'span_id');
      out.push({
        stack: sample.locationId.flatMap((id) => locationNames.get(Number(id)) ?? []),
        count: Number(sample.value[countIndex] ?? 1),
        spanId: label ? str(label.str) : undefined,
      });
    }
  }
  return out;
}

const attributeValue = (attributes, key) => {
  const value = attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? value?.intValue;
};

/** Every span of the recording as { spanId, kind, name, path } (path = url.path, else http.target). */
export function spans(run) {
  const out = [];
  for (const name of visible(path.join(run, 'spans'), /\.jsonl$/)) {
    for (const line of readFileSync(path.join(run, 'spans', name), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      for (const rs of JSON.parse(line).resourceSpans ?? []) {
        for (const ss of rs.scopeSpans ?? []) {
          for (const span of ss.spans ?? []) {
            const target = attributeValue(span.attributes, 'url.path') ?? attributeValue(span.attributes, 'http.target');
            out.push({ spanId: span.spanId, kind: span.kind, name: span.name, path: typeof target === 'string' ? target.split('?')[0] : undefined });
          }
        }
      }
    }
  }
  return out;
}

export const manifest = (run) => JSON.parse(readFileSync(path.join(run, 'run.json'), 'utf8'));
