/**
 * A records log (JSON lines written by `RecordToFile`) read as untrusted data: every field
 * is type-checked, a bad line is counted and skipped, never shown as markup.
 */
import { num, str } from './dom';

/** TVM's error numbering (ansor_lab.measure.records.ErrorNo). */
export const ERROR_KINDS = [
  'NO_ERROR',
  'INSTANTIATION_ERROR',
  'COMPILE_HOST',
  'COMPILE_DEVICE',
  'RUNTIME_DEVICE',
  'WRONG_ANSWER',
  'BUILD_TIMEOUT',
  'RUN_TIMEOUT',
  'UNKNOWN_ERROR'
];

/** One record of a log, with what the viewer derives from it. */
export interface IRecord {
  index: number; // 1-based position among the log's readable records
  line: number; // line number in the file
  workload: string;
  target: string;
  flopCt: number;
  costs: number[];
  errorNo: number;
  errorKind: string;
  errorMsg: string;
  sketch: string;
  timestamp: number;
  trace: unknown;
  mean: number; // seconds; NaN for an error
  gflops: number; // NaN for an error
  trial: number; // 1-based position among the records of its workload
}

/** The readable records of a log and the lines skipped. */
export interface ILog {
  records: IRecord[];
  skipped: number;
}

/** The error kind's name (a number outside the table is shown as such). */
export function errorKind(no: number): string {
  return Number.isInteger(no) && no >= 0 && no < ERROR_KINDS.length
    ? ERROR_KINDS[no]
    : `ERROR_${no}`;
}

/** One record from its parsed JSON line (null for something that is no record). */
export function toRecord(raw: unknown, line: number, index: number): IRecord | null {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    return null;
  }
  const rec = raw as Record<string, unknown>;
  if (rec.workload_key === undefined || !Array.isArray(rec.costs)) {
    return null;
  }
  const costs = (rec.costs as unknown[]).map(num).filter(c => Number.isFinite(c));
  const errorNo = Number.isFinite(num(rec.error_no)) ? num(rec.error_no) : 8;
  const flopCt = num(rec.flop_ct);
  const mean =
    errorNo === 0 && costs.length ? costs.reduce((a, b) => a + b, 0) / costs.length : NaN;
  const gflops = mean > 0 && Number.isFinite(flopCt) ? flopCt / mean / 1e9 : NaN;
  return {
    index,
    line,
    workload: str(rec.workload_key),
    target: str(rec.target),
    flopCt,
    costs,
    errorNo,
    errorKind: errorKind(errorNo),
    errorMsg: str(rec.error_msg),
    sketch: str(rec.sketch, '–'),
    timestamp: num(rec.timestamp),
    trace: rec.trace,
    mean,
    gflops,
    trial: 0
  };
}

/** Every readable record of a log's text, numbered per workload in file order. */
export function parseLog(text: string): ILog {
  const records: IRecord[] = [];
  const trials = new Map<string, number>();
  let skipped = 0;
  const lines = text.split('\n');
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k].trim();
    if (!line) {
      continue;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      // the last line of a log a tuner is writing may be half written: not counted
      if (k < lines.length - 1) {
        skipped++;
      }
      continue;
    }
    const rec = toRecord(raw, k + 1, records.length + 1);
    if (!rec) {
      skipped++;
      continue;
    }
    rec.trial = (trials.get(rec.workload) ?? 0) + 1;
    trials.set(rec.workload, rec.trial);
    records.push(rec);
  }
  return { records, skipped };
}

/** One point of a best-so-far curve: a valid record, and the best GFLOPS up to it. */
export interface IPoint {
  trial: number;
  best: number;
  gflops: number;
  record: IRecord;
}

/** Workload -> its curve (one point per valid record, in trial order). */
export function bestCurves(records: IRecord[]): Map<string, IPoint[]> {
  const curves = new Map<string, IPoint[]>();
  const best = new Map<string, number>();
  for (const r of records) {
    if (!curves.has(r.workload)) {
      curves.set(r.workload, []);
    }
    if (!Number.isFinite(r.gflops)) {
      continue;
    }
    const b = Math.max(best.get(r.workload) ?? 0, r.gflops);
    best.set(r.workload, b);
    curves.get(r.workload)!.push({ trial: r.trial, best: b, gflops: r.gflops, record: r });
  }
  return curves;
}
