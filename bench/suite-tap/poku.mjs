// poku's compact report as TAP, for bench/suite-diff.mjs: `npx poku 2>&1 | node bench/suite-tap/poku.mjs`
// (mysql2's suite: poku runs each test file as its own process and reports files, not tests, so
// each file is one TAP entry).
import { text } from 'node:stream/consumers';
import { pokuResults, toTap } from '../lib/tap.mjs';

console.log(toTap(pokuResults(await text(process.stdin))));
