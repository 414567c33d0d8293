/**
 * The README's configuration table says what the SETTINGS table says (src/config/settings.ts, which
 * `--help` prints): every setting has its row, with its flag, environment variable and description,
 * so a setting added to the table without its row, or changed in one place only, fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { type Setting, SETTINGS } from '../../src/config/index.js';
import { repoRoot } from '../support/child.js';

/** A cell's text as Markdown tables need it: `|` escaped. */
const cell = (text: string) => text.replaceAll('|', '\\|');

it("the README's configuration table has a row for every setting, with its flag, variable and description", () => {
  const rows = readFileSync(path.join(repoRoot, 'README.md'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| `--'));
  for (const setting of Object.values(SETTINGS) as Setting[]) {
    const head = `| \`--${setting.flag}${setting.arg === '' ? '' : ` ${cell(setting.arg)}`}\` | \`${setting.env}\` |`;
    const row = rows.find((line) => line.startsWith(head));
    assert.ok(row, `no row starts with ${head}`);
    assert.ok(row.includes(cell(setting.description)), `the row of --${setting.flag} has another description than the table's:\n${row}`);
  }
  assert.equal(rows.length, Object.keys(SETTINGS).length, 'no row for a setting the table does not have');
});
