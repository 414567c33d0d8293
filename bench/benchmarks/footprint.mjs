// footprint: what a user installs and what Node loads before the app's first line.
// - Installed size: each contender's packages installed alone into an empty folder with production
//   dependencies only (pyro-run from `npm pack` of this repo), measured with `du -sb node_modules`.
//   Install scripts are skipped: the native profilers ship prebuilt binaries inside their packages.
// - Modules at start: a bench preload registered before the contender's own counts every module
//   Node's loader loads (files and node: builtins), up to the hello world's first line.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { APP_CORE } from '../lib/cores.mjs';
import { BENCH, CONTENDERS, NODE, REPO, cleanEnv, contenderArgs, contenderEnv, nodeVersion } from '../lib/contenders.mjs';
import { run, start } from '../lib/proc.mjs';
import { startSink } from '../lib/sink.mjs';
import { num, render } from '../lib/table.mjs';

/** Installed version of a dependency of this repo (not every package exports its package.json). */
const version = (pkg) => JSON.parse(readFileSync(path.join(REPO, 'node_modules', pkg, 'package.json'), 'utf8')).version;
const PROBE = path.join(BENCH, 'probes/modules.mjs');
const APPS = [
  { id: 'cjs', file: path.join(BENCH, 'apps/hello.cjs') },
  { id: 'esm', file: path.join(BENCH, 'apps/hello.mjs') },
];

/** npm with the Node that runs the benchmarks first on PATH, whatever `node` the shell has. */
function npmEnv() {
  const env = cleanEnv();
  env.PATH = `${path.dirname(NODE[24])}${path.delimiter}${env.PATH ?? ''}`;
  return env;
}

async function npm(args, cwd) {
  const out = await run('npm', args, { cwd, env: npmEnv(), name: `npm ${args[0]}`, timeoutMs: 300_000 });
  if (out.code !== 0) throw new Error(`npm ${args.join(' ')} failed (${out.code}): ${out.stderr.slice(-2000)}`);
  return out.stdout;
}

/** Installs `specs` into a fresh folder: from the npm cache alone if it can, else from the registry. */
async function installedSize(specs) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pyro-bench-install-'));
  try {
    writeFileSync(path.join(dir, 'package.json'), '{"name":"footprint","version":"0.0.0","private":true}\n');
    const common = ['install', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock', ...specs];
    let source = 'cache';
    try {
      await npm([...common, '--offline'], dir);
    } catch {
      source = 'registry';
      await npm([...common, '--prefer-offline'], dir);
    }
    const du = await run('du', ['-sb', 'node_modules'], { cwd: dir, name: 'du' });
    const lock = JSON.parse(readFileSync(path.join(dir, 'node_modules/.package-lock.json'), 'utf8'));
    return {
      bytes: Number(du.stdout.split('\t')[0]),
      packages: Object.keys(lock.packages).filter((k) => k !== '').length,
      largest: await largest(dir),
      source,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The five biggest top-level packages (with what they nest), to show where the bytes are. Scope
 * folders themselves are left out of the du arguments: du counts a file once per invocation, so a
 * scope listed before its packages would leave them empty.
 */
async function largest(dir) {
  const du = await run('sh', ['-c', 'du -sb node_modules/[!@.]* node_modules/@*/*'], { cwd: dir, name: 'du' });
  return du.stdout
    .trim()
    .split('\n')
    .map((line) => line.split('\t'))
    .map(([bytes, name]) => ({ name: name.replace(/^node_modules\//, ''), mb: Number((Number(bytes) / 2 ** 20).toFixed(1)) }))
    .sort((a, b) => b.mb - a.mb)
    .slice(0, 5);
}

async function modulesAtStart(contender, app, sinkUrl) {
  const handle = start(NODE[24], contenderArgs(contender, app.file, ['--import', PROBE]), {
    env: contenderEnv(contender, sinkUrl),
    core: APP_CORE,
    name: contender.id,
  });
  try {
    const { match } = await handle.line(/modules=(\d+) builtins=(\d+)/, 30_000);
    return { files: Number(match[1]), builtins: Number(match[2]) };
  } finally {
    await handle.stop('SIGKILL');
  }
}

export default {
  name: 'footprint',
  describe: 'installed size with production dependencies, and modules loaded before the first line',
  async run({ progress }) {
    const packDir = mkdtempSync(path.join(os.tmpdir(), 'pyro-bench-pack-'));
    const sizes = {};
    try {
      progress('npm pack (this repo)');
      // --ignore-scripts: `prepare` would rebuild dist/; the benchmarks measure the dist/ in place.
      const packed = JSON.parse(await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', packDir], REPO));
      const tarball = path.join(packDir, packed[0].filename);
      const otel = `@opentelemetry/auto-instrumentations-node@${version('@opentelemetry/auto-instrumentations-node')}`;
      const pyroscope = `@pyroscope/nodejs@${version('@pyroscope/nodejs')}`;
      const sets = { otel: [otel], combo: [otel, pyroscope], pyro: [tarball] };
      for (const [id, specs] of Object.entries(sets)) {
        progress(`install ${id}: ${specs.map((s) => (s.endsWith('.tgz') ? path.basename(s) : s)).join(' + ')}`);
        sizes[id] = { specs: specs.map((s) => (s.endsWith('.tgz') ? path.basename(s) : s)), ...(await installedSize(specs)) };
      }
      sizes.pyro.tarballBytes = packed[0].size;
    } finally {
      rmSync(packDir, { recursive: true, force: true });
    }

    const sink = await startSink();
    const modules = {};
    try {
      for (const contender of CONTENDERS) {
        for (const app of APPS) {
          progress(`modules at start: ${contender.id} ${app.id}`);
          (modules[contender.id] ??= {})[app.id] = await modulesAtStart(contender, app, sink.url);
        }
      }
    } finally {
      await sink.stop();
    }

    const installRow = { node: undefined, otel: sizes.otel, combo: sizes.combo, 'pyro-none': sizes.pyro, pyro: sizes.pyro };
    const rows = CONTENDERS.map((c) => {
      const size = installRow[c.id];
      const m = modules[c.id];
      return [
        c.label,
        size ? num(size.bytes / 2 ** 20, 1) : '0',
        size ? String(size.packages) : '0',
        `${m.cjs.files} + ${m.cjs.builtins}`,
        `${m.esm.files} + ${m.esm.builtins}`,
      ];
    });
    const table = render(
      `footprint — installed with production dependencies (npm --omit=dev, du -sb node_modules); modules loaded before the hello world's first line on Node ${nodeVersion(NODE[24])} (files + node: builtins)`,
      ['contender', 'installed MB', 'packages', 'modules (CJS app)', 'modules (ESM app)'],
      rows,
    );
    const heaviest = render(
      'footprint — the five largest installed packages (MB, with what they nest)',
      ['contender', 'largest packages'],
      Object.entries(sizes).map(([id, size]) => [CONTENDERS.find((c) => c.id === id).label, size.largest.map((p) => `${p.name} ${num(p.mb, 1)}`).join(', ')]),
    );
    return {
      tables: [table, heaviest],
      goals: [],
      summary: `footprint: pyro-run ${num(sizes.pyro.bytes / 2 ** 20, 1)} MB / ${sizes.pyro.packages} packages, ${modules.pyro.cjs.files} modules at start; OTel register ${num(sizes.otel.bytes / 2 ** 20, 1)} MB / ${modules.otel.cjs.files}; combo ${num(sizes.combo.bytes / 2 ** 20, 1)} MB / ${modules.combo.cjs.files}`,
      data: { sizes, modules },
    };
  },
};
