import { existsSync, readFileSync } from 'node:fs';

/**
 * pyro-run's cost per profile window, in the order windows were encoded, from the file
 * probes/window-costs.mjs wrote in the app (none when the agent encoded no window).
 */
export function readWindowCosts(file) {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
}
