import type { SourceMapper } from '@datadog/pprof/out/src/sourcemapper/sourcemapper.js';
import { type PprofFormat, pprofFormat } from './pprof-format.js';
import type { ValueTypeName } from './profile-types.js';

/** A frame as V8's profilers report it (time and heap alike). */
export interface V8Frame {
  name?: string;
  scriptName: string;
  scriptId?: number;
  lineNumber?: number;
  columnNumber?: number;
}

/**
 * The tables a pprof shares between its samples — strings, functions, locations — filled as
 * frames are met, each frame named by its source (TypeScript file and line) when the app has
 * source maps. One instance per build: the profiles built from one recording share it.
 */
export class PprofTables {
  readonly format: PprofFormat = pprofFormat();
  readonly strings = new this.format.StringTable();
  readonly functions: InstanceType<PprofFormat['Function']>[] = [];
  readonly locations: InstanceType<PprofFormat['Location']>[] = [];
  private readonly functionIds = new Map<string, number>();
  private readonly locationIds = new Map<string, number>();

  constructor(private readonly sourceMapper: SourceMapper | undefined) {}

  valueType(name: ValueTypeName): InstanceType<PprofFormat['ValueType']> {
    return new this.format.ValueType({ type: this.strings.dedup(name.type), unit: this.strings.dedup(name.unit) });
  }

  /**
   * The location id of a frame: one per script, line, column and name. Script ids are numbered per
   * thread: frames of other threads than the main one come with a `scope` of their own.
   */
  locationOf(frame: V8Frame, scope = ''): number {
    const { file, name, line, column } = sourceFrame(frame, this.sourceMapper);
    const scriptId = frame.scriptId ?? 0;
    const key = `${scope}${scriptId}:${line}:${column}:${name}`;
    let id = this.locationIds.get(key);
    if (id === undefined) {
      id = this.locations.length + 1;
      const { Location, Line } = this.format;
      this.locations.push(new Location({ id, line: [new Line({ functionId: this.functionOf(name, file, `${scope}${scriptId}`, line, column), line })] }));
      this.locationIds.set(key, id);
    }
    return id;
  }

  private functionOf(name: string, file: string, scriptId: string, line: number, column: number): number {
    const key = name ? `${scriptId}:${name}:${line}` : `${scriptId}:${line}:${column}`;
    let id = this.functionIds.get(key);
    if (id === undefined) {
      const nameId = this.strings.dedup(shownName(name, line, column));
      id = this.functions.length + 1;
      // V8 gives a profile node the line its function starts at (mapped, with source maps).
      this.functions.push(new this.format.Function({ id, name: nameId, systemName: nameId, filename: this.strings.dedup(file), startLine: line }));
      this.functionIds.set(key, id);
    }
    return id;
  }
}

/** A frame as profiles name it: its function, file (a path, not a file: URL), line and column. */
export interface SourceFrame {
  name: string;
  file: string;
  line: number;
  column: number;
}

/** A V8 frame by its source (TypeScript file and line) where the app's source maps say, else as compiled. */
export function sourceFrame(frame: V8Frame, sourceMapper: SourceMapper | undefined): SourceFrame {
  let file = frame.scriptName.startsWith('file://') ? frame.scriptName.slice(7) : frame.scriptName;
  let name = frame.name ?? '';
  let line = frame.lineNumber ?? 0;
  let column = frame.columnNumber ?? 0;
  if (sourceMapper && line > 0 && frame.columnNumber !== undefined) {
    const mapped = sourceMapper.mappingInfo({ file, line, column, name });
    file = mapped.file ?? file;
    name = mapped.name ?? name;
    line = mapped.line ?? line;
    column = mapped.column ?? column;
  }
  return { file, name, line, column };
}

/** A function's name as profiles show it: an anonymous one by where it is (`(anonymous:L#12:C#5)`, which reports read back). */
export function shownName(name: string, line: number, column: number): string {
  return name || (line ? (column ? `(anonymous:L#${line}:C#${column})` : `(anonymous:L#${line})`) : '(anonymous)');
}

/** A frame of the stack being walked, linked to its caller: a sample's stack is read leaf first. */
export interface StackFrame {
  locationId: number;
  parent: StackFrame | undefined;
}

export function stackOf(frame: StackFrame): number[] {
  const stack: number[] = [];
  for (let f: StackFrame | undefined = frame; f !== undefined; f = f.parent) stack.push(f.locationId);
  return stack;
}
