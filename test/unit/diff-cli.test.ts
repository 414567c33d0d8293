/**
 * `pyro-run diff`'s command line, run in-process on synthetic recordings: exit 0, 1 when a
 * --fail-on rule is broken (with the reason), 2 for trouble — a bad option or rule, said before
 * any recording is read, or a recording that cannot be read, naming which.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runDiff } from '../../src/cli/diff.js';
import { parseCommandLine } from '../../src/cli/main.js';
import { requestsRecording, type RequestsSpec } from '../support/requests-recording.js';
import { scratchDirs } from '../support/scratch.js';

const { base, fresh } = scratchDirs('pyro-run-diff-cli-');

function diff(args: string[]): { code: number; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const code = runDiff(args, { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: base });
  return { code, stdout, stderr };
}

const checkout = (pricing: number): RequestsSpec => ({
  endpoints: [{ name: 'POST /checkout', requests: 100, cpuMs: (i) => ({ priceCart: 2 * pricing * (0.6 + (0.8 * (i % 10)) / 9) }) }],
});

const USAGE_HINT = "Try 'pyro-run diff --help' for more information.\n";

describe('pyro-run diff exits', () => {
  const before = requestsRecording(fresh(), checkout(1));
  const slower = requestsRecording(fresh(), checkout(1.3));
  const same = requestsRecording(fresh(), checkout(1));

  it('1 when an endpoint breaks a --fail-on rule, with the reason on stderr', () => {
    const result = diff([before, slower, '--fail-on', 'cpu-per-request>+10%', '--fail-on', 'p95>+20%']);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /^POST \/checkout — 100 → 100 requests, beyond the noise$/m);
    assert.equal(result.stderr, 'pyro-run diff: POST /checkout: CPU per request 2.00ms → 2.60ms (+600µs, +30%) breaks cpu-per-request>+10%\n');
  });

  it('0 when no rule is broken, and with no rule', () => {
    assert.equal(diff([before, same, '--fail-on', 'cpu-per-request>+10%']).code, 0);
    assert.equal(diff([before, slower, '--fail-on', 'cpu-per-request>+40%']).code, 0);
    assert.equal(diff([before, slower]).code, 0);
  });

  it('--json prints the comparison and what broke the rules', () => {
    const result = diff([before, slower, '--json', '--fail-on', 'cpu-per-request>+10%']);
    assert.equal(result.code, 1);
    const json = JSON.parse(result.stdout) as { format: string; broken: { endpoint: string }[]; endpoints: { functions: unknown[] }[] };
    assert.equal(json.format, 'pyro-run-diff');
    assert.deepEqual(
      json.broken.map((b) => b.endpoint),
      ['POST /checkout'],
    );
  });

  it('--top: how many functions an endpoint lists', () => {
    const json = JSON.parse(diff([before, slower, '--json', '--top', '0']).stdout) as { endpoints: { functions: unknown[] }[] };
    assert.deepEqual(json.endpoints[0]?.functions, []);
  });

  it('takes a folder of runs as its newest run, relative to the working directory', () => {
    const folder = path.join(base, 'runs');
    mkdirSync(folder);
    requestsRecording(folder, { ...checkout(1.3), name: 'shop-1' });
    const result = diff([path.relative(base, before), 'runs']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^After: {2}\S+\/runs\/shop-1 /m);
  });

  it('says so when before and after are one run', () => {
    assert.match(diff([before, before]).stderr, /^pyro-run diff: before and after are the same run/);
  });

  describe('2, before anything is read, on bad input', () => {
    const cases: [string, string[], RegExp][] = [
      ['a bad rule', ['nowhere-a', 'nowhere-b', '--fail-on', 'cpu>+10%'], /^pyro-run diff: 'cpu>\+10%': unknown metric 'cpu'/],
      [
        'every bad rule',
        ['nowhere-a', 'nowhere-b', '--fail-on', 'p95>-1%', '--fail-on', 'p50>+1parsec'],
        /^pyro-run diff: 'p95>-1%': a > rule takes an increase \(\+N\)\npyro-run diff: 'p50>\+1parsec': unknown unit/,
      ],
      ['--top that is not a count', ['nowhere-a', 'nowhere-b', '--top', 'many'], /^pyro-run diff: --top takes a whole number from 0 to 1000, not 'many'\n/],
      ['--min-effect that is not a percentage', ['nowhere-a', 'nowhere-b', '--min-effect', 'x%'], /^pyro-run diff: --min-effect takes a percentage/],
      ['no AFTER', ['nowhere-a'], /^pyro-run diff: missing required argument 'AFTER'\n/],
      ['an unknown option', ['nowhere-a', 'nowhere-b', '--colour'], /^pyro-run diff: unknown option '--colour'\n/],
    ];
    for (const [name, args, message] of cases) {
      it(name, () => {
        const result = diff(args);
        assert.equal(result.code, 2);
        assert.equal(result.stdout, '');
        assert.match(result.stderr, message);
        assert.ok(result.stderr.endsWith(USAGE_HINT), result.stderr);
        assert.doesNotMatch(result.stderr, /does not exist/, 'no recording was read');
      });
    }
  });

  it('2 when a recording cannot be read, in one line naming which', () => {
    const result = diff([before, 'nowhere']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr, `pyro-run diff: after: ${path.join(base, 'nowhere')} does not exist\n`);
  });

  it('0 for --help, which says the exit codes', () => {
    const result = diff(['--help']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /^Usage: pyro-run diff \[options\] <BEFORE> <AFTER>/);
    assert.match(result.stdout, /--fail-on <rule>/);
    assert.match(result.stdout.replace(/\s+/g, ' '), /Exit: 0, or 1 when a --fail-on rule is broken, 2 on bad input\./);
  });
});

describe('pyro-run diff on the main command line', () => {
  it('everything after `diff` goes to its own parser, --help included', () => {
    assert.deepEqual(parseCommandLine(['diff', 'a', 'b', '--fail-on', 'p95>+20%', '--help'], { env: {}, version: '1.0.0' }), {
      kind: 'subcommand',
      name: 'diff',
      args: ['a', 'b', '--fail-on', 'p95>+20%', '--help'],
    });
  });

  it('pyro-run --help lists it', () => {
    const help = parseCommandLine(['--help'], { env: {}, version: '1.0.0' });
    assert.match(help.kind === 'exit' ? help.stdout : '', /\n {2}diff \[args\.\.\.\] +compare two recordings/);
  });
});
