import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { npmExecAsInitWarning } from '../../src/cli/init-launcher.js';

const NUL = '\u0000';

describe('npx as PID 1: a warning at start', () => {
  const cases: { name: string; env: Record<string, string>; init: string | undefined; warns: boolean }[] = [
    {
      name: 'npm exec titled as such is PID 1, and npm exec started us',
      env: { npm_command: 'exec' },
      init: `npm exec pyro-run node server.js${NUL}${NUL}`,
      warns: true,
    },
    {
      name: "npx's script is PID 1 (a title npm did not set)",
      env: { npm_command: 'exec' },
      init: `node${NUL}/usr/lib/node_modules/npm/bin/npx-cli.js${NUL}pyro-run${NUL}node${NUL}server.js${NUL}`,
      warns: true,
    },
    { name: 'npx is PID 1 but npm start started us', env: { npm_command: 'start' }, init: `npm exec pyro-run${NUL}`, warns: false },
    {
      name: 'npm exec started us under an init (docker run --init)',
      env: { npm_command: 'exec' },
      init: `/sbin/docker-init${NUL}--${NUL}npx${NUL}pyro-run${NUL}`,
      warns: false,
    },
    { name: 'pyro-run is PID 1 itself', env: {}, init: `node${NUL}/app/node_modules/.bin/pyro-run${NUL}node${NUL}server.js${NUL}`, warns: false },
    { name: 'no /proc to tell (not Linux)', env: { npm_command: 'exec' }, init: undefined, warns: false },
  ];
  for (const c of cases) {
    it(`${c.warns ? 'warns' : 'says nothing'}: ${c.name}`, () => {
      const warning = npmExecAsInitWarning(c.env, () => c.init);
      assert.equal(warning !== undefined, c.warns, warning);
      if (warning) assert.match(warning, /ENTRYPOINT \["node_modules\/\.bin\/pyro-run", "node", "server\.js"\]/);
    });
  }
});
