/** The page's header: the run (service, folder, times, command), the share of samples inside spans, the threads' shares, memory in use. */
import { formatCount, formatPercent, formatTime } from '../format.js';
import { memoryInUseText } from '../memory-in-use.js';
import { threadShares } from '../thread-shares.js';
import { data, formatValue, isPerSpan, kindLabel, shownKinds } from './data.js';
import { byTestId, el } from './dom.js';
import { frameName } from './frames.js';

export function renderHeader(): void {
  const run = data.run;
  document.title = `pyro-run report: ${run.service || 'recording'}`;
  byTestId('run-title').textContent = `pyro-run report: ${run.service || 'recording'}`;
  const started = run.startedAt ? `${formatTime(Date.parse(run.startedAt))} UTC` : 'unknown start';
  const ended = run.endedAt ? `${formatTime(Date.parse(run.endedAt))} UTC` : 'still running, or killed before it could finish';
  const meta = byTestId('run-meta');
  meta.append(
    el('p', { class: 'meta' }, run.dir),
    el(
      'p',
      { class: 'meta' },
      `${started} → ${ended}${run.pid !== undefined ? ` · pid ${run.pid}` : ''}${run.nodeVersion ? ` · Node ${run.nodeVersion}` : ''}`,
    ),
    el(
      'p',
      { class: 'meta' },
      `${run.command.length ? `${run.command.join(' ')} · ` : ''}${formatCount(run.windows)} profile windows · ${formatCount(run.spans)} spans`,
    ),
  );
  if (run.partial) meta.append(el('p', { class: 'meta warning', 'data-testid': 'partial' }, `Partial: ${run.partial}`));
  const share = byTestId('share');
  share.append('Samples inside spans: ');
  const parts: HTMLElement[] = [];
  for (const kind of shownKinds.filter(isPerSpan)) {
    const s = data.share[kind];
    const whole = s.inside + s.outside;
    if (whole <= 0) continue;
    const part = el(
      'span',
      { 'data-kind': kind },
      el('strong', {}, formatPercent(s.inside, whole)),
      ` of ${kindLabel(kind)} time (${formatCount(s.insideSamples)} of ${formatCount(s.insideSamples + s.outsideSamples)} samples)`,
    );
    if (s.unmatched > 0) part.append(`, ${formatPercent(s.unmatched, whole)} ${run.unmatchedWords}`);
    parts.push(part);
  }
  if (parts.length === 0) share.append('no profile samples recorded');
  parts.forEach((part, i) => {
    share.append(...(i > 0 ? [' · ', part] : [part]));
  });
  renderThreadShares();
  if (run.otherThreadsCpu && run.otherThreadsCpu.cpuNs > 0) meta.append(el('p', { class: 'meta', 'data-testid': 'other-threads' }, run.otherThreadsCpu.words));
  for (const snapshot of data.snapshots) {
    const top = snapshot.topSelf
      .slice(0, 3)
      .map((t) => `${frameName(t.frame)} ${formatPercent(t.value, snapshot.total)}`)
      .join(', ');
    meta.append(
      el(
        'p',
        { class: 'meta', 'data-testid': 'snapshot', 'data-kind': snapshot.kind },
        memoryInUseText(snapshot, formatValue(snapshot.kind, snapshot.total), top),
      ),
    );
  }
}

/** How the work split between the threads, as the terminal summary says it. */
function renderThreadShares(): void {
  const shares = threadShares(data.threads);
  if (!shares) return;
  const line = byTestId('threads');
  line.append(`${shares.measure} time by thread: `);
  shares.threads.forEach((t, i) => {
    line.append(...(i > 0 ? [' · '] : []), el('span', { 'data-thread': t.name }, `${t.name} `, el('strong', {}, formatPercent(t.value, shares.whole))));
  });
  line.hidden = false;
}
