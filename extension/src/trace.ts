/**
 * A stored trace (`Trace.as_json()`: `{"version": 1, "insts": [[kind, args, outputs,
 * decision], ...]}`) printed as Python, the way `str(Trace)` prints it:
 * `def apply_trace(sch):` and one `sch.<method>(...)` line per instruction. The table of
 * kinds is generated from the Python declarations (`ansor_lab.jupyter.labext`), and a test
 * checks it stays equal to them. Unknown kinds print generically: a log is untrusted data.
 */
import KINDS from './kinds.json';

interface IKind {
  method: string;
  varargs: string | null;
  sampling: boolean;
  outputs: string;
}

const TABLE = KINDS as Record<string, IKind>;

/** A JSON string as Python's `json.dumps` writes it (non-ASCII escaped). */
function pyString(s: string): string {
  return JSON.stringify(s).replace(
    /[\u007f-\uffff]/g,
    c => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')
  );
}

/** A stored value as Python source: handles by name, lists, strings, numbers. */
export function pyValue(v: unknown, depth = 0): string {
  if (v === null || v === undefined) {
    return 'None';
  }
  if (typeof v === 'boolean') {
    return v ? 'True' : 'False';
  }
  if (typeof v === 'number') {
    return Number.isFinite(v) ? String(v) : v > 0 ? 'inf' : v < 0 ? '-inf' : 'nan';
  }
  if (typeof v === 'string') {
    return pyString(v);
  }
  if (Array.isArray(v)) {
    if (depth > 8) {
      return '[...]';
    }
    return '[' + v.map(x => pyValue(x, depth + 1)).join(', ') + ']';
  }
  if (typeof v === 'object') {
    const rv = (v as Record<string, unknown>).rv;
    if (typeof rv === 'string' && Object.keys(v as object).length === 1) {
      return rv;
    }
  }
  try {
    return JSON.stringify(v);
  } catch {
    return '?';
  }
}

/**
 * How a kind prints. A kind declared after this bundle was built prints by guess (its
 * name in snake_case, a decision when it has one); a hostile kind prints as text anyway.
 */
function methodOf(kind: string, decision: unknown = null, outputs = 0): IKind {
  if (Object.prototype.hasOwnProperty.call(TABLE, kind)) {
    return TABLE[kind];
  }
  const method = /^[A-Za-z]\w*$/.test(kind)
    ? kind.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase()
    : kind;
  const sampling = decision !== null && decision !== undefined;
  return { method, varargs: null, sampling, outputs: outputs > 1 ? 'list' : 'one' };
}

/** One instruction as a Python statement. */
export function instPython(inst: unknown): string {
  if (!Array.isArray(inst) || inst.length < 3) {
    return `# unreadable instruction: ${pyValue(inst)}`;
  }
  const [kind, args, outs, decision] = inst;
  const decl = methodOf(String(kind), decision, Array.isArray(outs) ? outs.length : 0);
  const parts: string[] = [];
  for (const arg of Array.isArray(args) ? args : []) {
    if (!Array.isArray(arg) || arg.length !== 2) {
      parts.push(pyValue(arg));
      continue;
    }
    const [name, value] = arg;
    if (name === decl.varargs && Array.isArray(value)) {
      parts.push(...value.map(x => pyValue(x)));
    } else {
      parts.push(`${String(name)}=${pyValue(value)}`);
    }
  }
  if (decl.sampling) {
    parts.push(`decision=${pyValue(decision)}`);
  }
  const call = `sch.${decl.method}(${parts.join(', ')})`;
  const names = (Array.isArray(outs) ? outs : []).map(x => String(x));
  if (!names.length) {
    return call;
  }
  if (decl.outputs === 'list') {
    return `${names.join(', ')}${names.length === 1 ? ',' : ''} = ${call}`;
  }
  return `${names[0]} = ${call}`;
}

/** The trace's instructions (an empty list for data that is no trace). */
export function traceInsts(trace: unknown): unknown[] {
  if (trace && typeof trace === 'object' && !Array.isArray(trace)) {
    const insts = (trace as Record<string, unknown>).insts;
    return Array.isArray(insts) ? insts : [];
  }
  return [];
}

/** A stored trace as `def apply_trace(sch): ...` (what `str(Trace)` prints). */
export function tracePython(trace: unknown): string {
  const lines = traceInsts(trace).map(instPython);
  const marked = trace && typeof trace === 'object' && !Array.isArray(trace);
  if (marked && (trace as Record<string, unknown>).unit_loops === true) {
    // a trace the search recorded lists unit loops (Schedule.show_unit_loops)
    lines.unshift('sch.show_unit_loops = True  # recorded by the search: unit loops counted');
  }
  return 'def apply_trace(sch):\n' + (lines.length ? lines : ['pass']).map(l => '  ' + l).join('\n');
}

/** How many instructions of the trace draw a decision. */
export function samplingCount(trace: unknown): number {
  return traceInsts(trace).filter(
    i => Array.isArray(i) && methodOf(String(i[0]), i[3]).sampling
  ).length;
}
