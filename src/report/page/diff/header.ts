/** The page's header: the two runs compared, and which service. */
import type { RunRef } from '../../../diff/compare-runs.js';
import { formatCount, formatTime } from '../../format.js';
import { byTestId, el } from '../dom.js';
import { data } from './data.js';

function runLine(label: string, run: RunRef, testId: string): HTMLElement {
  const started = run.startedAt ? ` · started ${formatTime(Date.parse(run.startedAt))} UTC` : '';
  return el(
    'p',
    { class: 'meta', 'data-testid': testId },
    el('strong', {}, label),
    ` ${run.dir} (${run.service || 'unnamed service'}, ${formatCount(run.requests)} request${run.requests === 1 ? '' : 's'}${started})`,
  );
}

export function renderHeader(): void {
  const service = data.after.service || data.before.service;
  const title = `pyro-run diff${service ? `: ${service}` : ''}`;
  document.title = title;
  byTestId('diff-title').textContent = title;
  byTestId('diff-runs').append(runLine('Before:', data.before, 'diff-before'), runLine('After:', data.after, 'diff-after'));
}
