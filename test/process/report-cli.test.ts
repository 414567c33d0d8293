/**
 * `pyro-run report` as users run it: a real pyro-run process on synthetic recordings. What they
 * rely on: the page lands where it says, the summary is printed, --json is machine-readable, and
 * bad input ends with one readable line and exit 1, never a stack trace.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../support/child.js';
import { scratchDirs } from '../support/scratch.js';
import { SHOP, shopRecording, THREADS, threadsRecording, writeRecording } from '../support/recording.js';

const TEST_TIMEOUT_MS = 30_000;
const { base, fresh } = scratchDirs('pyro-run-report-cli-');

async function report(args: string[], cwd?: string) {
  const child = runCli(['report', ...args], cwd === undefined ? {} : { cwd });
  const exit = await child.exit();
  return { code: exit.code, stdout: child.stdout, stderr: child.stderr };
}

describe('pyro-run report', { timeout: TEST_TIMEOUT_MS }, () => {
  it('--no-summary prints only the path', async () => {
    const run = shopRecording(fresh());
    const result = await report([run, '--no-summary']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `Report: ${path.join(run, 'report.html')}\n`);
  });

  it('writes <run>/report.html, prints the summary and the path, exits 0', async () => {
    const run = shopRecording(fresh());
    const result = await report([run]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    const file = path.join(run, 'report.html');
    assert.ok(existsSync(file));
    assert.match(result.stdout, /^Endpoint +Count +p50 +p95 +CPU +Top self time/);
    assert.match(result.stdout, /\nGET \/users\/:id +4 +20\.0ms +100ms +131ms +fib 92%/);
    assert.match(result.stdout, /\nSamples inside spans: 92% of CPU time/);
    assert.ok(result.stdout.endsWith(`\nReport: ${file}\n`), result.stdout);
    const html = readFileSync(file, 'utf8');
    assert.match(html, /^<!doctype html>/);
    assert.match(html, /<script type="application\/json" id="report-data">\{/);
    // Self-contained: nothing for the browser to fetch.
    assert.doesNotMatch(html, /\s(?:src|href)=/);
  });

  it('takes a folder of runs and reports the newest', async () => {
    const dir = fresh();
    shopRecording(dir, 'shop-20261129-221503-1');
    const newer = shopRecording(dir, 'shop-20261130-080000-2');
    writeFileSync(
      path.join(newer, 'run.json'),
      readFileSync(path.join(newer, 'run.json'), 'utf8').replace('2026-11-29T22:15:03.120Z', '2026-11-30T08:00:00.000Z'),
    );
    const result = await report([dir]);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(result.stdout.endsWith(`Report: ${path.join(newer, 'report.html')}\n`), result.stdout);
  });

  it('reads ./pyro-run-data when no DIR is given', async () => {
    const cwd = fresh();
    const run = shopRecording(path.join(cwd, 'pyro-run-data'));
    const result = await report([], cwd);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(existsSync(path.join(run, 'report.html')));
  });

  it('writes the page where --output says, relative to the working directory', async () => {
    const cwd = fresh();
    const run = shopRecording(cwd);
    mkdirSync(path.join(cwd, 'out'));
    const result = await report([run, '-o', 'out/shop.html'], cwd);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(existsSync(path.join(cwd, 'out/shop.html')));
    assert.ok(!existsSync(path.join(run, 'report.html')));
    assert.ok(result.stdout.endsWith(`Report: ${path.join(cwd, 'out/shop.html')}\n`));
  });

  it('--json prints the aggregates instead of writing the page', async () => {
    const run = shopRecording(fresh());
    const result = await report([run, '--json']);
    assert.equal(result.code, 0, result.stderr);
    const json = JSON.parse(result.stdout) as { endpoints: { name: string; count: number; cpuNs: number }[]; run: { service: string }; trees: unknown };
    assert.equal(json.run.service, 'shop');
    assert.deepEqual(json.endpoints[0] && [json.endpoints[0].name, json.endpoints[0].count, json.endpoints[0].cpuNs], [
      SHOP.users.name,
      SHOP.users.count,
      SHOP.users.cpuMs * 1e6,
    ]);
    assert.ok(json.trees);
    assert.ok(!existsSync(path.join(run, 'report.html')));
  });

  it("a run with worker threads: the summary and --json say each thread's share", async () => {
    const run = threadsRecording(fresh());
    const summary = await report([run]);
    assert.equal(summary.code, 0, summary.stderr);
    assert.match(summary.stdout, /\nCPU time by thread: main 20%, worker 2 30%, worker 10 50%\n/);
    const result = await report([run, '--json']);
    assert.equal(result.code, 0, result.stderr);
    const json = JSON.parse(result.stdout) as { threads: { name: string; cpuNs: number; wallNs: number }[] };
    assert.deepEqual(
      json.threads.map((t) => [t.name, t.cpuNs / 1e6, t.wallNs / 1e6]),
      THREADS.threadOrder.map((name, i) => [name, THREADS.cpuMs[i], THREADS.wallMs[i]]),
    );
  });

  it('--json of a run without worker threads has no thread list', async () => {
    const result = await report([shopRecording(fresh()), '--json']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { threads?: unknown }).threads, undefined);
  });

  describe('bad input: one line on stderr, exit 1', () => {
    const assertFails = (result: { code: number | null; stdout: string; stderr: string }, reason: RegExp) => {
      assert.equal(result.code, 1, `exit code; stderr: ${result.stderr}`);
      assert.equal(result.stdout, '');
      const lines = result.stderr.split('\n');
      assert.equal(lines.length, 2, `one line expected, got: ${result.stderr}`);
      assert.equal(lines[1], '');
      assert.match(lines[0] as string, /^pyro-run report: /);
      assert.match(lines[0] as string, reason);
      assert.doesNotMatch(result.stderr, /\n\s+at /);
    };

    it('a missing folder', async () => {
      assertFails(await report([path.join(base, 'nowhere')]), /nowhere does not exist$/);
    });

    it('no DIR and no ./pyro-run-data', async () => {
      assertFails(await report([], fresh()), /no recording found in \.\/pyro-run-data .*pass DIR$/);
    });

    it('a folder without a recording', async () => {
      assertFails(await report([fresh()]), /no recording in /);
    });

    it('a run with nothing recorded yet', async () => {
      assertFails(await report([writeRecording(fresh(), {})]), /has no profiles or spans yet$/);
    });

    it('a corrupt run.json', async () => {
      const run = shopRecording(fresh());
      writeFileSync(path.join(run, 'run.json'), '{"format":');
      assertFails(await report([run]), /run\.json is not valid JSON/);
    });

    it('an output folder that does not exist', async () => {
      const cwd = fresh();
      const run = shopRecording(cwd);
      assertFails(await report([run, '--output', 'missing/shop.html'], cwd), /cannot write .*missing\/shop\.html \(ENOENT\)$/);
    });

    it('a corrupt profile, named', async () => {
      const run = shopRecording(fresh());
      writeFileSync(path.join(run, 'profiles', '000002-wall.pb.gz'), Buffer.from([0x1f, 0x8b, 0x08, 0x00, 1, 2, 3]));
      assertFails(await report([run]), /profiles\/000002-wall\.pb\.gz is not a gzipped pprof profile/);
      assert.ok(!existsSync(path.join(run, 'report.html')));
    });
  });

  it('rejects an unknown option with exit 2 and a hint', async () => {
    const result = await report(['--bogus']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr, "pyro-run report: unknown option '--bogus'\nTry 'pyro-run report --help' for more information.\n");
  });

  it('--help describes DIR, --json and --output', async () => {
    const result = await report(['--help']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /^Usage: pyro-run report \[options\] \[DIR\]/);
    assert.match(result.stdout, /--json/);
    assert.match(result.stdout, /-o, --output <FILE>/);
  });
});
