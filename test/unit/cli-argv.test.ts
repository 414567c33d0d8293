/**
 * The CLI's pure parts, as tables: how the command line splits into our flags and the app's
 * command, which flags are rejected (and how), and the argv/env each kind of command gets.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { SETTINGS, type Env } from '../../src/config/index.js';
import {
  ASYNC_CONTEXT_FRAME_FLAG,
  buildLaunch,
  classifyCommand,
  needsAsyncContextFrameFlag,
  nodeOptionsFor,
  quoteNodeOption,
  registerPath,
  splitNodeOptions,
  type CommandKind,
  type FileFacts,
  type LaunchInput,
} from '../../src/cli/argv.js';
import { childEnv, flagProblems, flagsToEnv, type FlagValues } from '../../src/cli/flags.js';
import { EXIT_USAGE, parseCommandLine, type CliRequest, type ParseContext } from '../../src/cli/main.js';

const VERSION = '9.8.7';
const context = (env: Env = {}): ParseContext => ({ env, version: VERSION });
const USAGE_LINE = 'Usage: pyro-run [options] [--] <script | node [node-args] script | command> [args...]';

function expectRun(request: CliRequest): { flags: FlagValues; command: string[] } {
  assert.equal(request.kind, 'run', request.kind === 'exit' ? request.stderr : '');
  return request as Extract<CliRequest, { kind: 'run' }>;
}

function expectUsageError(request: CliRequest): string[] {
  assert.equal(request.kind, 'exit');
  const exit = request as Extract<CliRequest, { kind: 'exit' }>;
  assert.equal(exit.code, EXIT_USAGE);
  assert.equal(exit.stdout, '');
  const lines = exit.stderr.trimEnd().split('\n');
  assert.equal(lines.at(-2), USAGE_LINE, 'usage follows the messages');
  assert.equal(lines.at(-1), "Try 'pyro-run --help' for more information.");
  return lines.slice(0, -2);
}

describe('splitting our options from the command', () => {
  const cases: { name: string; args: string[]; flags: FlagValues; command: string[] }[] = [
    { name: 'bare script', args: ['app.js'], flags: {}, command: ['app.js'] },
    {
      name: 'options before, same-named words after the command belong to the app',
      args: ['--server', 'http://pyro:4040', 'app.js', '--server', 'elsewhere'],
      flags: { server: 'http://pyro:4040' },
      command: ['app.js', '--server', 'elsewhere'],
    },
    { name: '-- ends our options', args: ['--', 'node', '--inspect', 'app.js'], flags: {}, command: ['node', '--inspect', 'app.js'] },
    {
      name: 'node and its flags without --',
      args: ['--span-scope', 'all', 'node', '--enable-source-maps', 'app.js'],
      flags: { spanScope: 'all' },
      command: ['node', '--enable-source-maps', 'app.js'],
    },
    { name: '--flag=value form', args: ['--labels=team=core,tier=1', 'npm', 'start'], flags: { labels: 'team=core,tier=1' }, command: ['npm', 'start'] },
    {
      name: 'a command that starts with a dash after --',
      args: ['--server', 'http://p', '--', '--weird'],
      flags: { server: 'http://p' },
      command: ['--weird'],
    },
    { name: "a later -- is the app's", args: ['npx', 'tsx', 'app.ts', '--', '-x'], flags: {}, command: ['npx', 'tsx', 'app.ts', '--', '-x'] },
    {
      name: 'spaces, quotes, $() and globs stay literal',
      args: ['app.js', 'a b', '"double"', "'single'", '$(rm -rf /)', '`id`', '*', '', '--help', '-V'],
      flags: {},
      command: ['app.js', 'a b', '"double"', "'single'", '$(rm -rf /)', '`id`', '*', '', '--help', '-V'],
    },
    { name: "--help after the command is the app's", args: ['node', '--help'], flags: {}, command: ['node', '--help'] },
    {
      name: 'repeated flag: last wins',
      args: ['--flush-interval', '2000', '--flush-interval', '3000', 'app.js'],
      flags: { flushInterval: '3000' },
      command: ['app.js'],
    },
    {
      name: 'every setting has its flag',
      args: ['--service-name', 'checkout', '--tenant-id', 't1', '--profiles', 'cpu', '--log-level', 'debug', '--otlp-protocol', 'grpc', 'app.js'],
      flags: { serviceName: 'checkout', tenantId: 't1', profiles: 'cpu', logLevel: 'debug', otlpProtocol: 'grpc' },
      command: ['app.js'],
    },
  ];
  for (const { name, args, flags, command } of cases) {
    it(name, () => {
      const request = expectRun(parseCommandLine(args, context()));
      assert.deepEqual(request.flags, flags);
      assert.deepEqual(request.command, command);
    });
  }
});

describe('--help and --version', () => {
  it('--help lists every flag with its env var and default, and exits 0', () => {
    for (const args of [['--help'], ['-h'], ['--server', 'http://p', '--help']]) {
      const request = parseCommandLine(args, context());
      assert.equal(request.kind, 'exit');
      const { code, stdout, stderr } = request as Extract<CliRequest, { kind: 'exit' }>;
      assert.equal(code, 0);
      assert.equal(stderr, '');
      assert.match(stdout, /^Usage: pyro-run /);
      for (const setting of Object.values(SETTINGS)) {
        assert.ok(stdout.includes(`--${setting.flag} ${setting.arg}`), `--${setting.flag} listed`);
        assert.ok(stdout.includes(`(env: ${setting.env})`), `${setting.env} listed`);
        if ('defaultText' in setting) assert.ok(stdout.includes(`(default: ${setting.defaultText})`), `default of --${setting.flag}`);
      }
    }
  });

  it('--help never shows the value of a secret', () => {
    const env = {
      PYROSCOPE_AUTH_TOKEN: 'hunter2-token',
      PYROSCOPE_BASIC_AUTH_PASSWORD: 'hunter2-pass',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=hunter2-hdr',
    };
    const request = parseCommandLine(['--auth-token', 'hunter2-flag', '--help'], context(env));
    assert.equal(request.kind, 'exit');
    assert.doesNotMatch((request as Extract<CliRequest, { kind: 'exit' }>).stdout, /hunter2/);
  });

  it('--version and -V print the version', () => {
    for (const args of [['--version'], ['-V']]) {
      assert.deepEqual(parseCommandLine(args, context()), { kind: 'exit', code: 0, stdout: `${VERSION}\n`, stderr: '' });
    }
  });
});

describe('bad input is rejected with a message naming the flag, then the usage', () => {
  const cases: { name: string; args: string[]; env?: Env; messages: (string | RegExp)[] }[] = [
    { name: 'unknown flag', args: ['--bogus', 'app.js'], messages: ["unknown option '--bogus'"] },
    { name: 'misspelt flag gets a suggestion', args: ['--sever', 'http://p', 'app.js'], messages: ["unknown option '--sever' (Did you mean --server?)"] },
    {
      name: 'unknown --flag=value hides the value',
      args: ['--auth-tokn=hunter2', 'app.js'],
      messages: ["unknown option '--auth-tokn' (Did you mean --auth-token?)"],
    },
    { name: 'missing value', args: ['--server'], messages: ['option --server: missing value <url>'] },
    { name: 'empty value', args: ['--server', '', 'app.js'], messages: ['option --server: PYROSCOPE_SERVER_ADDRESS must not be empty'] },
    {
      name: 'URL without scheme',
      args: ['--server', 'localhost:4040', 'app.js'],
      messages: ['option --server: PYROSCOPE_SERVER_ADDRESS must be an http:// or https:// URL'],
    },
    {
      name: 'not a URL',
      args: ['--otlp-endpoint', 'not a url', 'app.js'],
      messages: ['option --otlp-endpoint: OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute http:// or https:// URL'],
    },
    { name: 'malformed labels', args: ['--labels', 'region', 'app.js'], messages: ['option --labels: PYROSCOPE_LABELS "region" is not key=value'] },
    {
      name: 'reserved label key',
      args: ['--labels', '__name__=x', 'app.js'],
      messages: [/^option --labels: PYROSCOPE_LABELS label key "__name__" starts with __/],
    },
    {
      name: 'non-numeric interval',
      args: ['--flush-interval', '15s', 'app.js'],
      messages: ['option --flush-interval: PYROSCOPE_FLUSH_INTERVAL_MS must be a whole number of milliseconds'],
    },
    {
      name: 'interval below range',
      args: ['--flush-interval', '10', 'app.js'],
      messages: ['option --flush-interval: PYROSCOPE_FLUSH_INTERVAL_MS must be between 1000 and 3600000 milliseconds'],
    },
    {
      name: 'interval above range',
      args: ['--sampling-interval', '2000000', 'app.js'],
      messages: [/^option --sampling-interval: PYROSCOPE_WALL_SAMPLING_INTERVAL_MICROS must be between/],
    },
    {
      name: 'negative timeout',
      args: ['--shutdown-timeout', '-1', 'app.js'],
      messages: [/^option --shutdown-timeout: PYRO_RUN_SHUTDOWN_TIMEOUT_MS must be a whole number/],
    },
    { name: 'bad enum', args: ['--span-scope', 'leaf', 'app.js'], messages: ['option --span-scope: PYRO_RUN_SPAN_SCOPE must be one of root, all'] },
    { name: 'bad log level', args: ['--log-level', 'loud', 'app.js'], messages: [/^option --log-level: PYRO_RUN_LOG_LEVEL must be one of/] },
    {
      name: 'bad exporter',
      args: ['--traces-exporter', 'jaeger', 'app.js'],
      messages: [/^option --traces-exporter: OTEL_TRACES_EXPORTER names "jaeger", which is not one of otlp, console, none/],
    },
    { name: 'bad profile type', args: ['--profiles', 'mutex', 'app.js'], messages: [/^option --profiles: PYRO_RUN_PROFILES unknown profile type "mutex"/] },
    {
      name: 'a flag another env var would shadow is still checked',
      args: ['--otlp-protocol', 'http', 'app.js'],
      env: { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' },
      messages: [/^option --otlp-protocol: OTEL_EXPORTER_OTLP_PROTOCOL must be one of/],
    },
    {
      name: 'half of basic auth names the missing flag',
      args: ['--basic-auth-user', '12345', 'app.js'],
      messages: [/^option --basic-auth-password: basic auth needs both PYROSCOPE_BASIC_AUTH_USER and PYROSCOPE_BASIC_AUTH_PASSWORD/],
    },
    {
      name: 'every bad flag is reported, in table order',
      args: ['--flush-interval', 'x', '--span-scope', 'leaf', 'app.js'],
      messages: [/^option --span-scope:/, /^option --flush-interval:/],
    },
    {
      name: 'same bad value as the environment already has',
      args: ['--labels', 'junk', 'app.js'],
      env: { PYROSCOPE_LABELS: 'junk' },
      messages: ['option --labels: PYROSCOPE_LABELS "junk" is not key=value'],
    },
    { name: 'no command', args: [], messages: ['no command given'] },
    { name: 'only options', args: ['--server', 'http://p'], messages: ['no command given'] },
    { name: 'nothing after --', args: ['--'], messages: ['no command given'] },
  ];
  for (const { name, args, env, messages } of cases) {
    it(name, () => {
      const lines = expectUsageError(parseCommandLine(args, context(env)));
      assert.equal(lines.length, messages.length, lines.join('\n'));
      messages.forEach((expected, i) => {
        const line = lines[i] ?? '';
        assert.ok(line.startsWith('pyro-run: '), line);
        const message = line.slice('pyro-run: '.length);
        if (typeof expected === 'string') assert.equal(message, expected);
        else assert.match(message, expected);
      });
    });
  }

  it('secret values never appear in messages', () => {
    const cases = [
      ['--otlp-headers', 'Bad Header=hunter2', 'app.js'],
      ['--pyroscope-headers', 'x=%E0%A4%Ahunter2', 'app.js'],
      ['--auth-token', 'hunter2', '--basic-auth-user', 'u', '--basic-auth-password', 'hunter2pw', 'app.js'],
      ['--auth-tokn=hunter2', 'app.js'],
    ];
    for (const args of cases) {
      const lines = expectUsageError(parseCommandLine(args, context()));
      assert.doesNotMatch(lines.join('\n'), /hunter2/, args.join(' '));
    }
  });
});

describe('flags and the environment', () => {
  it('problems the environment already had are left to the preload', () => {
    const env = { PYROSCOPE_LABELS: 'junk', PYROSCOPE_FLUSH_INTERVAL_MS: 'soon' };
    expectRun(parseCommandLine(['app.js'], context(env)));
    expectRun(parseCommandLine(['--labels', 'team=core', 'app.js'], context(env)));
  });

  it('the other half of basic auth may come from the environment', () => {
    expectRun(parseCommandLine(['--basic-auth-user', '12345', 'app.js'], context({ PYROSCOPE_BASIC_AUTH_PASSWORD: 'pw' })));
    assert.deepEqual(flagProblems({ basicAuthPassword: 'pw' }, { PYROSCOPE_BASIC_AUTH_USER: '12345' }), []);
  });

  it('each flag sets its env var, verbatim', () => {
    assert.deepEqual(flagsToEnv({ server: 'http://pyro:4040', flushInterval: '2000', labels: 'a=b, c=d' }), {
      PYROSCOPE_SERVER_ADDRESS: 'http://pyro:4040',
      PYROSCOPE_FLUSH_INTERVAL_MS: '2000',
      PYROSCOPE_LABELS: 'a=b, c=d',
    });
    assert.deepEqual(flagsToEnv({}), {});
  });

  it('the child gets the environment plus the flags, flags winning', () => {
    const base = { HOME: '/home/u', PYROSCOPE_SERVER_ADDRESS: 'http://old', NODE_OPTIONS: '--max-old-space-size=512' };
    assert.deepEqual(childEnv(base, { server: 'http://new' }), { ...base, PYROSCOPE_SERVER_ADDRESS: 'http://new' });
  });
});

describe('classifying the command', () => {
  const existing = new Map([
    ['app.js', false],
    ['app.mjs', false],
    ['app.cjs', false],
    ['src/app.ts', false],
    ['x.mts', false],
    ['x.cts', false],
    ['APP.JS', false],
    ['server', false],
    ['./server-bin', true],
    ['bin/cli.js', true],
  ]);
  const files: FileFacts = { isFile: (file) => existing.has(file), isExecutable: (file) => existing.get(file) === true };
  const cases: [string[], CommandKind][] = [
    [['node', 'app.js'], 'node'],
    [['nodejs', 'app.js'], 'node'],
    [['/usr/local/bin/node', '--inspect', 'app.js'], 'node'],
    [['./node_modules/node/bin/node', 'app.js'], 'node'],
    [['C:\\Program Files\\nodejs\\node.exe', 'app.js'], 'node'],
    [['app.js', 'arg'], 'script'],
    [['app.mjs'], 'script'],
    [['app.cjs'], 'script'],
    [['src/app.ts'], 'script'],
    [['x.mts'], 'script'],
    [['x.cts'], 'script'],
    [['APP.JS'], 'script'],
    [['bin/cli.js'], 'script'],
    [['server'], 'script'],
    [['missing.js'], 'missing-script'],
    [['dir/missing.ts'], 'missing-script'],
    [['./server-bin'], 'command'],
    [['npm', 'start'], 'command'],
    [['npx', 'tsx', 'app.ts'], 'command'],
    [['tsx', 'app.ts'], 'command'],
    [['nodemon', 'app.js'], 'command'],
    [['node-gyp', 'rebuild'], 'command'],
  ];
  for (const [command, kind] of cases) {
    it(`${command.join(' ')} → ${kind}`, () => assert.equal(classifyCommand(command, files), kind));
  }
});

describe('the launch', () => {
  const PRELOAD = '/opt/pyro-run/dist/preload/register.js';
  const URL = 'file:///opt/pyro-run/dist/preload/register.js';
  const EXEC = '/opt/node/bin/node';
  const launch = (over: Partial<LaunchInput>) =>
    buildLaunch({ command: ['app.js'], kind: 'script', registerPath: PRELOAD, execPath: EXEC, nodeVersion: '24.21.0', env: {}, ...over });

  it('a script runs on our Node with the preload first, arguments verbatim', () => {
    const result = launch({ command: ['app.js', 'a b', '$(x)', '"q"'], env: { HOME: '/h' } });
    assert.deepEqual(result, { file: EXEC, args: ['--require', PRELOAD, 'app.js', 'a b', '$(x)', '"q"'], env: { HOME: '/h' } });
  });

  it('node keeps its own flags, after ours', () => {
    const result = launch({ kind: 'node', command: ['/usr/local/bin/node', '--inspect', '--enable-source-maps', 'app.js', '--port', '3000'] });
    assert.deepEqual(result.file, '/usr/local/bin/node');
    assert.deepEqual(result.args, ['--require', PRELOAD, '--inspect', '--enable-source-maps', 'app.js', '--port', '3000']);
    assert.equal(result.env.NODE_OPTIONS, undefined);
  });

  const acfCases: [string | undefined, boolean][] = [
    ['22.7.0', true],
    ['22.23.3', true],
    ['v22.15.1', true],
    ['22.6.0', false],
    ['20.19.0', false],
    ['23.11.0', false],
    ['24.21.0', false],
    ['26.10.0', false],
    ['garbage', false],
    [undefined, false],
  ];
  for (const [version, expected] of acfCases) {
    it(`AsyncContextFrame flag ${expected ? 'added' : 'not added'} for Node ${version}`, () => {
      assert.equal(needsAsyncContextFrameFlag(version), expected);
      const script = launch({ nodeVersion: version });
      assert.equal(script.args.includes(ASYNC_CONTEXT_FRAME_FLAG), expected);
      if (expected) assert.deepEqual(script.args, [ASYNC_CONTEXT_FRAME_FLAG, '--require', PRELOAD, 'app.js']);
      const node = launch({ kind: 'node', command: ['node', 'app.js'], nodeVersion: version });
      assert.equal(node.args.includes(ASYNC_CONTEXT_FRAME_FLAG), expected);
      const command = launch({ kind: 'command', command: ['npm', 'start'], nodeVersion: version });
      assert.equal(splitNodeOptions(command.env.NODE_OPTIONS ?? '').includes(ASYNC_CONTEXT_FRAME_FLAG), expected);
    });
  }

  it("the user's own AsyncContextFrame choice wins", () => {
    for (const flag of [
      '--no-experimental-async-context-frame',
      '--experimental-async-context-frame',
      '--no-async-context-frame',
      '--experimental_async_context_frame',
    ]) {
      const node = launch({ kind: 'node', command: ['node', flag, 'app.js'], nodeVersion: '22.23.3' });
      assert.deepEqual(node.args, ['--require', PRELOAD, flag, 'app.js']);
      const script = launch({ nodeVersion: '22.23.3', env: { NODE_OPTIONS: flag } });
      assert.deepEqual(script.args, ['--require', PRELOAD, 'app.js']);
      const command = launch({ kind: 'command', command: ['npm', 'start'], nodeVersion: '22.23.3', env: { NODE_OPTIONS: flag } });
      assert.equal(command.env.NODE_OPTIONS, `${flag} --require=${PRELOAD}`);
    }
  });

  it('any other command runs as is, with the preload in NODE_OPTIONS', () => {
    const result = launch({ kind: 'command', command: ['npx', 'tsx', 'app.ts', 'a b'], env: { HOME: '/h' } });
    assert.deepEqual(result, { file: 'npx', args: ['tsx', 'app.ts', 'a b'], env: { HOME: '/h', NODE_OPTIONS: `--require=${PRELOAD}` } });
  });

  const nodeOptionsCases: { name: string; existing: string | undefined; preload?: string; acf?: boolean; expected: string }[] = [
    { name: 'unset', existing: undefined, expected: `--require=${PRELOAD}` },
    { name: 'blank', existing: '  ', expected: `--require=${PRELOAD}` },
    { name: 'appended to existing', existing: '--max-old-space-size=4096', expected: `--max-old-space-size=4096 --require=${PRELOAD}` },
    { name: 'existing quoting kept', existing: '--require "./my hooks.cjs"', expected: `--require "./my hooks.cjs" --require=${PRELOAD}` },
    { name: 'already there as --require=path', existing: `--require=${PRELOAD}`, expected: `--require=${PRELOAD}` },
    { name: 'already there as -r path', existing: `-r ${PRELOAD}`, expected: `-r ${PRELOAD}` },
    { name: 'already there as --import url', existing: `--enable-source-maps --import ${URL}`, expected: `--enable-source-maps --import ${URL}` },
    { name: 'already there as --import=url', existing: `--import=${URL}`, expected: `--import=${URL}` },
    {
      name: 'already there as a quoted path',
      existing: '--import="/opt/pyro-run/dist/preload/register.js"',
      expected: '--import="/opt/pyro-run/dist/preload/register.js"',
    },
    {
      name: 'ACF flag before the preload',
      existing: '--trace-warnings',
      acf: true,
      expected: `--trace-warnings ${ASYNC_CONTEXT_FRAME_FLAG} --require=${PRELOAD}`,
    },
    {
      name: 'ACF flag not twice',
      existing: `${ASYNC_CONTEXT_FRAME_FLAG} --require=${PRELOAD}`,
      acf: true,
      expected: `${ASYNC_CONTEXT_FRAME_FLAG} --require=${PRELOAD}`,
    },
    {
      name: 'a path Node would split is quoted',
      existing: '--trace-warnings',
      preload: '/a b/register.js',
      expected: '--trace-warnings "--require=/a b/register.js"',
    },
    { name: 'quotes and backslashes escaped', existing: undefined, preload: '/a"b\\c.js', expected: '"--require=/a\\"b\\\\c.js"' },
  ];
  for (const { name, existing, preload = PRELOAD, acf = false, expected } of nodeOptionsCases) {
    it(`NODE_OPTIONS: ${name}`, () => {
      assert.equal(nodeOptionsFor(existing, preload, acf), expected);
    });
  }

  const splitCases: [string, string[]][] = [
    ['', []],
    ['--a --b=1', ['--a', '--b=1']],
    ['  --a   --b  ', ['--a', '--b']],
    ['--require "./a b.js"', ['--require', './a b.js']],
    ['--x="a \\"b\\" c"', ['--x=a "b" c']],
    ['"--y=c:\\\\dir"', ['--y=c:\\dir']],
    ['--z=a\\b', ['--z=a\\b']],
    ['""', []],
    ['--x=""', ['--x=']],
  ];
  for (const [text, words] of splitCases) {
    it(`NODE_OPTIONS split like Node: ${JSON.stringify(text)}`, () => assert.deepEqual(splitNodeOptions(text), words));
  }

  it('Node reads a quoted preload back as one word', () => {
    const value = nodeOptionsFor('--trace-warnings', '/a b/register.js', false);
    assert.deepEqual(splitNodeOptions(value), ['--trace-warnings', '--require=/a b/register.js']);
  });

  it("quoting round-trips through Node's NODE_OPTIONS rules", () => {
    for (const word of ['plain', 'a b', 'say "hi"', 'back\\slash', ' lead', 'x\\"y']) {
      assert.deepEqual(splitNodeOptions(quoteNodeOption(word)), [word]);
    }
    assert.equal(quoteNodeOption('--import=file:///x/register.js'), '--import=file:///x/register.js');
  });

  it("the preload is the main thread's bundle, dist/preload/register.js", () => {
    assert.equal(registerPath(), path.resolve(import.meta.dirname, '../../preload/register.js'));
  });
});
