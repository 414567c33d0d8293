/**
 * Which functions an endpoint's change is made of: each function's self CPU time per request in
 * both runs, as the report names and groups them (topSelfOf: a leaf that is not the app's own code
 * goes with the app's function it ran for, `writev ← listArticles`). Every function is kept, sorted
 * by how much it changed: the text and the JSON show the top few, and a diff flame graph can take
 * the whole list. Pure.
 */
import { endpointRows, type RunModel, topSelfOf } from '../report/aggregate.js';

export interface FunctionRef {
  /** As the report names it (frame-owner.ts displayName). */
  name: string;
  /** As the profile names it: a path, a file: URL, `node:…`, or '' for V8's own. */
  file: string;
  /** Where the function starts, 0 when the profile does not say. */
  line: number;
  /** Whose code: `the app`, a package's name, `Node.js`, … (frame-owner.ts ownerName). */
  owner: string;
  app: boolean;
}

/** A function's self CPU time per request, nanoseconds, before and after. */
export interface FunctionDelta {
  function: FunctionRef;
  /** For a leaf outside the app's code: the app's function it ran for. */
  caller?: FunctionRef;
  before: number;
  after: number;
  change: number;
  /** change / before; null when the function took no CPU before (new, or newly hot). */
  relativeChange: number | null;
}

/** One run's side: the model, the endpoint's index in it, and how many requests its CPU is shared by. */
export interface EndpointSide {
  model: RunModel;
  endpoint: number;
  requests: number;
}

const baseName = (file: string): string => file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);

/**
 * A function as the other run knows it too. Two checkouts of one app (CI's base and change) have
 * the same files at different paths, so a file is matched by its name; and a function moves when
 * lines are added above it, so not by its line.
 */
export const functionKey = (ref: FunctionRef): string => `${ref.owner}\0${ref.name}\0${baseName(ref.file)}`;

/** A frame of a run's frame table as a FunctionRef. */
export function functionRef(model: RunModel, frame: number): FunctionRef {
  const { strings, frames } = model.index;
  return {
    name: strings[frames.name[frame] as number] as string,
    file: strings[frames.file[frame] as number] as string,
    line: frames.line[frame] as number,
    owner: strings[frames.owner[frame] as number] as string,
    app: frames.app[frame] === true,
  };
}

/** Self CPU per request of every (function, app caller) the endpoint's samples hold, by key. */
function selfPerRequest(side: EndpointSide): Map<string, { function: FunctionRef; caller?: FunctionRef; perRequest: number }> {
  const { model, endpoint, requests } = side;
  const out = new Map<string, { function: FunctionRef; caller?: FunctionRef; perRequest: number }>();
  for (const { frame, caller, value } of topSelfOf(model.index, 'cpu', endpointRows(model, endpoint, 'cpu'), Infinity)) {
    const fn = functionRef(model, frame);
    const by = caller === undefined ? undefined : functionRef(model, caller);
    const key = by === undefined ? functionKey(fn) : `${functionKey(fn)}\0${functionKey(by)}`;
    const entry = out.get(key);
    const perRequest = requests > 0 ? value / requests : 0;
    if (entry !== undefined) entry.perRequest += perRequest;
    else out.set(key, by === undefined ? { function: fn, perRequest } : { function: fn, caller: by, perRequest });
  }
  return out;
}

/** Every function of the endpoint in either run, the largest change (either way) first. */
export function functionDeltas(before: EndpointSide, after: EndpointSide): FunctionDelta[] {
  const a = selfPerRequest(before);
  const b = selfPerRequest(after);
  const deltas: FunctionDelta[] = [];
  for (const key of new Set([...a.keys(), ...b.keys()])) {
    // Named as the after run names it: where the function is now.
    const named = (b.get(key) ?? a.get(key)) as { function: FunctionRef; caller?: FunctionRef };
    const was = a.get(key)?.perRequest ?? 0;
    const is = b.get(key)?.perRequest ?? 0;
    const delta: FunctionDelta = { function: named.function, before: was, after: is, change: is - was, relativeChange: was === 0 ? null : (is - was) / was };
    if (named.caller !== undefined) delta.caller = named.caller;
    deltas.push(delta);
  }
  const order = (d: FunctionDelta) => `${d.function.name}\0${d.caller?.name ?? ''}`;
  return deltas.sort((x, y) => Math.abs(y.change) - Math.abs(x.change) || (order(x) < order(y) ? -1 : order(x) > order(y) ? 1 : 0));
}

/** The `limit` largest changes, the app's own functions first (what a user can change), each part largest first. */
export function topFunctions(deltas: readonly FunctionDelta[], limit: number): FunctionDelta[] {
  const top = deltas.slice(0, limit);
  return [...top.filter((d) => d.function.app), ...top.filter((d) => !d.function.app)];
}
