/**
 * The tuning-log view: the best-so-far curve per workload, a sortable table of the records
 * and the selected record's details and trace. It is rebuilt from the log's text on every
 * change (`setText`), keeping the sort and the selection; everything is built as DOM nodes
 * with textContent, so a hostile log shows as text.
 */
import { append, caption, el, fmtNum, fmtSeconds } from './dom';
import { codeBlock } from './highlight';
import { curveChart } from './curve';
import { IRecord, parseLog } from './records';
import { traceInsts, tracePython } from './trace';

/** A workload key, short enough for a legend or a cell. */
export function workloadLabel(key: string): string {
  return key.length > 28 ? key.slice(0, 16) + '…' + key.slice(-6) : key;
}

/** The details of one record: numbers, error, and its trace as Python. */
export function recordDetail(rec: IRecord, python?: string): HTMLElement {
  const box = el('div', 'al-record');
  box.appendChild(
    caption('al-caption', [
      rec.line ? `Record #${rec.index}` : 'Record',
      rec.trial ? `trial ${rec.trial} of its workload` : '',
      rec.line ? `line ${rec.line}` : ''
    ])
  );
  const rows: [string, string][] = [
    ['workload', rec.workload],
    ['target', rec.target],
    ['mean cost', fmtSeconds(rec.mean)],
    ['GFLOPS', fmtNum(rec.gflops)],
    ['costs', rec.costs.map(c => fmtSeconds(c)).join(', ')],
    ['error kind', rec.errorKind],
    ['sketch', rec.sketch],
    ['steps', String(traceInsts(rec.trace).length)],
    ['measured at', Number.isFinite(rec.timestamp) ? new Date(rec.timestamp * 1000).toISOString() : '–']
  ];
  const table = el('table', 'al-kv');
  for (const [k, v] of rows) {
    const tr = el('tr');
    append(tr, el('td', 'al-k', k), el('td', 'al-v', v));
    table.appendChild(tr);
  }
  box.appendChild(table);
  if (rec.errorMsg) {
    box.appendChild(el('div', 'al-subtitle', 'error message'));
    box.appendChild(el('pre', 'al-error-msg', rec.errorMsg));
  }
  box.appendChild(el('div', 'al-subtitle', 'trace'));
  box.appendChild(codeBlock(python ?? tracePython(rec.trace), 'python', 'al-code al-trace'));
  return box;
}

type Column = {
  key: string;
  title: string;
  value: (r: IRecord) => number | string;
  text: (r: IRecord) => string;
};

const COLUMNS: Column[] = [
  { key: 'index', title: '#', value: r => r.index, text: r => String(r.index) },
  { key: 'workload', title: 'workload', value: r => r.workload, text: r => workloadLabel(r.workload) },
  { key: 'trial', title: 'trial', value: r => r.trial, text: r => String(r.trial) },
  { key: 'cost', title: 'mean cost', value: r => r.mean, text: r => fmtSeconds(r.mean) },
  { key: 'gflops', title: 'GFLOPS', value: r => r.gflops, text: r => fmtNum(r.gflops) },
  { key: 'error', title: 'error kind', value: r => r.errorKind, text: r => r.errorKind },
  { key: 'sketch', title: 'sketch', value: r => r.sketch, text: r => r.sketch },
  { key: 'steps', title: 'steps', value: r => traceInsts(r.trace).length, text: r => String(traceInsts(r.trace).length) }
];

/** The most table rows drawn (the curve and the counts cover every record). */
export const MAX_ROWS = 2000;

function compare(a: number | string, b: number | string): number {
  if (typeof a === 'number' && typeof b === 'number') {
    const na = Number.isNaN(a);
    const nb = Number.isNaN(b);
    if (na || nb) {
      return na === nb ? 0 : na ? 1 : -1; // missing numbers last either way
    }
    return a - b;
  }
  return String(a).localeCompare(String(b));
}

/** The view of one log. */
export class LogView {
  readonly node: HTMLElement;
  private records: IRecord[] = [];
  private skipped = 0;
  private sortKey = 'gflops';
  private descending = true;
  private selectedIndex: number | null = null;
  private name: string;
  private updated = '';

  constructor(name: string) {
    this.name = name;
    this.node = el('div', 'al-logview');
  }

  /** Show the log's current text (the sort and the selected record are kept). */
  setText(text: string, name?: string): void {
    if (name) {
      this.name = name;
    }
    const log = parseLog(text);
    this.records = log.records;
    this.skipped = log.skipped;
    this.updated = new Date().toLocaleTimeString();
    this.render();
  }

  /** Sort the table by a column (the same column again flips the order). */
  sortBy(key: string): void {
    if (this.sortKey === key) {
      this.descending = !this.descending;
    } else {
      this.sortKey = key;
      this.descending = key === 'gflops';
    }
    this.render();
  }

  /** Select a record by its 1-based index. */
  select(index: number): void {
    this.selectedIndex = index;
    this.render();
  }

  private sorted(): IRecord[] {
    const col = COLUMNS.find(c => c.key === this.sortKey) ?? COLUMNS[0];
    const out = [...this.records].sort((a, b) => {
      const va = col.value(a);
      const vb = col.value(b);
      const bothNumbers = typeof va === 'number' && typeof vb === 'number';
      if (bothNumbers && (Number.isNaN(va) || Number.isNaN(vb))) {
        return compare(va, vb) || a.index - b.index;
      }
      return (this.descending ? -compare(va, vb) : compare(va, vb)) || a.index - b.index;
    });
    return out;
  }

  private selected(): IRecord | undefined {
    const chosen = this.records.find(r => r.index === this.selectedIndex);
    if (chosen) {
      return chosen;
    }
    let best: IRecord | undefined;
    for (const r of this.records) {
      if (Number.isFinite(r.gflops) && (!best || r.gflops > best.gflops)) {
        best = r;
      }
    }
    return best ?? this.records[0];
  }

  private render(): void {
    const node = this.node;
    const scroll = node.querySelector('.al-table-box')?.scrollTop ?? 0;
    node.replaceChildren();
    const workloads = new Set(this.records.map(r => r.workload));
    const errors = this.records.filter(r => r.errorNo !== 0).length;
    node.appendChild(
      caption('al-caption al-log-caption', [
        `Tuning log ${this.name}`,
        `${this.records.length} records`,
        `${workloads.size} workload${workloads.size === 1 ? '' : 's'}`,
        `${errors} errors`,
        this.skipped ? `${this.skipped} unreadable lines skipped` : '',
        `read ${this.updated}`
      ])
    );
    if (!this.records.length) {
      node.appendChild(el('div', 'al-empty', 'No records yet: the view follows the file as a tuner appends to it.'));
      return;
    }
    const selected = this.selected();
    node.appendChild(curveChart(this.records, workloadLabel, r => this.select(r.index), selected));
    const panes = el('div', 'al-panes');
    const tableBox = el('div', 'al-table-box');
    const table = el('table', 'al-records');
    const head = el('tr');
    for (const col of COLUMNS) {
      const arrow = col.key === this.sortKey ? (this.descending ? ' ▼' : ' ▲') : '';
      const th = el('th', 'al-sort', col.title + arrow);
      th.dataset.key = col.key;
      th.addEventListener('click', () => this.sortBy(col.key));
      head.appendChild(th);
    }
    append(table, append(el('thead'), head));
    const body = el('tbody');
    for (const r of this.sorted().slice(0, MAX_ROWS)) {
      const tr = el('tr', 'al-row' + (r === selected ? ' al-selected' : '') + (r.errorNo ? ' al-failed' : ''));
      tr.dataset.index = String(r.index);
      for (const col of COLUMNS) {
        const td = el('td', `al-col-${col.key}`, col.text(r));
        if (col.key === 'workload') {
          td.title = r.workload;
        }
        if (col.key === 'error' && r.errorMsg) {
          td.title = r.errorMsg.slice(0, 500);
        }
        tr.appendChild(td);
      }
      tr.addEventListener('click', () => this.select(r.index));
      body.appendChild(tr);
    }
    table.appendChild(body);
    if (this.records.length > MAX_ROWS) {
      tableBox.appendChild(el('div', 'al-note', `first ${MAX_ROWS} of ${this.records.length} rows in this order`));
    }
    tableBox.appendChild(table);
    const detail = el('div', 'al-detail');
    if (selected) {
      detail.appendChild(recordDetail(selected));
    }
    append(node, append(panes, tableBox, detail));
    tableBox.scrollTop = scroll;
  }
}
