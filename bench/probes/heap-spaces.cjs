'use strict';
// Bench-only preload: on SIGUSR2, one stdout line `heap-spaces {json}` with V8's heap spaces (MB
// each: new, old, code, large objects, their total) — what RSS under load is made of.
const v8 = require('node:v8');

const MB = 1024 * 1024;
process.on('SIGUSR2', () => {
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size / MB]));
  const line = {
    newSpace: spaces.new_space,
    oldSpace: spaces.old_space,
    codeSpace: spaces.code_space,
    largeObjects: spaces.large_object_space,
    heapTotal: v8.getHeapStatistics().total_heap_size / MB,
  };
  process.stdout.write(`heap-spaces ${JSON.stringify(line)}\n`);
});
