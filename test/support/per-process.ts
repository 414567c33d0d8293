import assert from 'node:assert/strict';
import type { Receiver } from './receiver.js';

/**
 * A family of Node processes (forked children, cluster workers) run through pyro-run, each making
 * one outgoing `GET` (a fixture convention): every process exported exactly that one span, so it
 * ran one agent, not none and not two, each under its own service.instance.id, and every process
 * uploaded its CPU and wall profiles.
 */
export async function assertOneAgentPerProcess(receiver: Receiver, pids: readonly number[]): Promise<void> {
  assert.equal(new Set(pids).size, pids.length, `distinct pids: ${pids.join(', ')}`);
  const pingsOf = () => receiver.spans.filter((span) => span.name === 'GET');
  await receiver.waitFor(() => receiver.ingests.length >= 2 * pids.length && pingsOf().length >= pids.length, {
    timeoutMs: 10_000,
    description: `a ping span and a CPU and a wall profile from each of ${pids.length} processes`,
  });
  const pings = pingsOf();
  const byNumber = (a: number, b: number) => a - b;
  assert.deepEqual(pings.map((span) => Number(span.resource['process.pid'])).sort(byNumber), [...pids].sort(byNumber), 'one ping span per process');
  const instances = new Set(pings.map((span) => span.resource['service.instance.id']));
  assert.equal(instances.size, pids.length, `one instance id per process: ${[...instances].join(', ')}`);
}
