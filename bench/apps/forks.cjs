'use strict';
// A fork-heavy app: forks FORKS children (each inherits the parent's preload through execArgv),
// each says hello and exits; the parent exits once all have.
const { fork } = require('node:child_process');

const FORKS = Number(process.env.FORKS ?? 20);
if (process.send) {
  process.send('hello');
} else {
  let left = FORKS;
  for (let i = 0; i < FORKS; i++) {
    fork(__filename, [], { stdio: 'inherit' }).on('exit', () => {
      if (--left === 0) process.stdout.write('all children done\n');
    });
  }
}
