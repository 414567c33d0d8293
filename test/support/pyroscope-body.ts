// Picks the profile bytes out of an /ingest request body, following
// readInputRawDataFromRequest in grafana/pyroscope
// pkg/ingester/pyroscope/ingest_handler.go and RawProfile.loadPprofFromForm in
// pkg/og/convert/pprof/profile.go:
// - the format is chosen in this order: format=trie / Content-Type
//   binary/octet-stream+trie, format=tree / ...+tree, format=lines,
//   format=jfr, format=pprof (raw body), format=speedscope, then a
//   Content-Type containing multipart/form-data (pprof form); anything else is
//   the legacy "groups" text format. Only the two pprof routes are modelled.
// - in a form, `profile`, `prev_profile` and `sample_type_config` are read
//   only from *file* parts (form.ReadField looks at multipart.Form.File), and
//   an empty file counts as absent. A present prev_profile is rejected.

import type { SampleTypeConfig } from './pyroscope-metric.js';

export class IngestBodyError extends Error {
  override name = 'IngestBodyError';
}

export type IngestBody =
  | { kind: 'unsupported'; format: string; contentType: string }
  | {
      kind: 'raw' | 'multipart';
      /** Possibly empty: the server then answers 200 and stores nothing. */
      profileBytes: Uint8Array;
      sampleTypeConfig: Record<string, SampleTypeConfig> | undefined;
    };

function formatOf(format: string, contentType: string): string {
  if (format === 'trie' || contentType === 'binary/octet-stream+trie') return 'trie';
  if (format === 'tree' || contentType === 'binary/octet-stream+tree') return 'tree';
  if (format === 'lines' || format === 'jfr' || format === 'pprof' || format === 'speedscope') return format;
  if (contentType.includes('multipart/form-data')) return 'multipart';
  return 'groups';
}

async function fileField(form: FormData, name: string): Promise<Uint8Array | undefined> {
  const value = form.get(name);
  if (!(value instanceof Blob) || value.size === 0) return undefined;
  return new Uint8Array(await value.arrayBuffer());
}

async function readForm(body: Uint8Array, contentType: string): Promise<FormData> {
  // form.ParseBoundary: mime.ParseMediaType, then a required boundary parameter.
  if (!/;\s*boundary=/i.test(contentType)) {
    throw new IngestBodyError(`failed to parse pprof /ingest multipart form: no boundary in ${JSON.stringify(contentType)}`);
  }
  try {
    return await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch (error) {
    throw new IngestBodyError(`failed to parse pprof /ingest multipart form: ${(error as Error).message}`);
  }
}

function parseSampleTypeConfig(bytes: Uint8Array): Record<string, SampleTypeConfig> {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(bytes));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new Error('sample_type_config is not a JSON object');
    }
    return parsed as Record<string, SampleTypeConfig>;
  } catch (error) {
    throw new IngestBodyError(`failed to parse pprof /ingest multipart form: ${(error as Error).message}`);
  }
}

export async function extractIngestBody(format: string, contentType: string, body: Uint8Array): Promise<IngestBody> {
  const chosen = formatOf(format, contentType);
  if (chosen === 'pprof') return { kind: 'raw', profileBytes: body, sampleTypeConfig: undefined };
  if (chosen !== 'multipart') return { kind: 'unsupported', format: chosen, contentType };

  const form = await readForm(body, contentType);
  const profileBytes = (await fileField(form, 'profile')) ?? new Uint8Array();
  if ((await fileField(form, 'prev_profile')) !== undefined) {
    throw new IngestBodyError(
      'failed to parse pprof /ingest multipart form: unsupported client version. ' + 'Please update github.com/grafana/pyroscope-go to the latest version',
    );
  }
  const configBytes = await fileField(form, 'sample_type_config');
  const sampleTypeConfig = configBytes === undefined ? undefined : parseSampleTypeConfig(configBytes);
  return { kind: 'multipart', profileBytes, sampleTypeConfig };
}
