/**
 * The merge thread's script (merge-thread.ts starts it): merges the windows it is sent, one
 * request at a time, and answers on the same port. It runs no agent (it is started without the
 * preload), so a request posted while a span ran comes in the agents' envelope, taken off here.
 */
import { workerData } from 'node:worker_threads';
import { reason } from '../../log.js';
import { withoutEnvelope } from '../../threads/message-links.js';
import { mergeWindowParts } from './window-merge.js';
import type { MergeAnswer, MergeRequest, MergeThreadData } from './merge-thread.js';

const { port } = workerData as MergeThreadData;

port.on('message', (message: unknown) => {
  const { id, parts } = withoutEnvelope(message) as MergeRequest;
  let answer: MergeAnswer;
  try {
    answer = { id, merged: mergeWindowParts(parts) };
  } catch (error) {
    answer = { id, error: reason(error) };
  }
  port.postMessage(answer);
});
