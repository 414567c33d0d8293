'use strict';
// Startup probe (CJS): the first line is the moment the app's own code runs; RSS right after start.
process.stdout.write(`hello rss=${process.memoryUsage().rss}${globalThis.__benchModules ? ` ${globalThis.__benchModules()}` : ''}\n`);
