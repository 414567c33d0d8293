/**
 * The parts an endpoint's mean request splits into, in the order the summary and the page show
 * them: on CPU (the app's thread, workers), in calls by what they called, and neither. Pure, and
 * free of Node's APIs: the page's bundle imports it too.
 */
import type { EndpointWaits } from './waits.js';

export type WaitPart = 'cpu' | 'workers' | 'database' | 'http' | 'other' | 'rest';

export interface WaitShare {
  part: WaitPart;
  /** How the summary and the page name it. */
  title: string;
  /** Mean per request, nanoseconds. */
  ns: number;
}

export function waitParts(waits: EndpointWaits): WaitShare[] {
  return [
    { part: 'cpu', title: 'CPU', ns: waits.cpuNs },
    { part: 'workers', title: "workers' CPU", ns: waits.workerCpuNs },
    { part: 'database', title: 'database', ns: waits.databaseNs },
    { part: 'http', title: 'HTTP calls', ns: waits.httpNs },
    { part: 'other', title: 'other calls', ns: waits.otherCallsNs },
    { part: 'rest', title: 'neither', ns: waits.restNs },
  ];
}
