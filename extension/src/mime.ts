/**
 * MIME renderers for ansor_lab's outputs, registered under our own MIME types. The Python
 * displays emit these next to text/plain and text/html, so a saved notebook renders them
 * with no kernel, and other frontends show the fallback. Every value is untrusted data and
 * goes into the page as textContent.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { append, caption, el, str } from './dom';
import { codeBlock } from './highlight';
import { toRecord } from './records';
import { samplingCount, traceInsts, tracePython } from './trace';
import { recordDetail } from './viewer';

export const TRACE_MIME = 'application/vnd.ansor-lab.trace+json';
export const LOWERED_MIME = 'application/vnd.ansor-lab.lowered+json';
export const SOURCE_MIME = 'application/vnd.ansor-lab.source+json';
export const RECORD_MIME = 'application/vnd.ansor-lab.record+json';

type Data = Record<string, unknown>;
type Build = (data: Data) => HTMLElement;

function asData(value: unknown): Data {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Data) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A trace: `def apply_trace(sch): ...`, highlighted. */
export function traceView(data: Data): HTMLElement {
  const n = traceInsts(data.trace).length;
  const k = samplingCount(data.trace);
  const text = typeof data.python === 'string' ? data.python : tracePython(data.trace);
  return append(
    el('div', 'al-mime al-trace-view'),
    caption('al-caption', ['Trace', `${n} steps`, k ? `${k} sampling decisions` : '']),
    codeBlock(text, 'python', 'al-code al-trace')
  );
}

/** A lowered module: its buffers, the loop nest as an outline, and the loop IR. */
export function loweredView(data: Data): HTMLElement {
  const box = el('div', 'al-mime al-lowered-view');
  const params = list(data.params).map(p => {
    const d = asData(p);
    return `${str(d.name)}: ${str(d.dtype)}[${list(d.shape).map(s => str(s)).join(', ')}]`;
  });
  box.appendChild(caption('al-caption', [str(data.kind, 'PrimFunc'), str(data.name), `${params.length} buffers`]));
  if (params.length) {
    box.appendChild(el('div', 'al-params', params.join('   ')));
  }
  const loops = list(data.loops);
  if (loops.length) {
    const outline = el('div', 'al-loops');
    for (const item of loops) {
      const d = asData(item);
      const depth = Math.max(0, Math.min(40, Number(d.depth) || 0));
      const kind = str(d.kind, 'serial');
      const row = el('div', `al-loop al-loop-${kind.replace(/[^a-z_]/g, '')}`);
      row.style.paddingLeft = `${depth * 14}px`;
      const tag = str(d.thread_tag) || (kind === 'serial' ? '' : kind);
      row.textContent = `${str(d.var)} in range(${str(d.extent)})${tag ? '  ' + tag : ''}`;
      outline.appendChild(row);
    }
    append(box, el('div', 'al-subtitle', 'loop nest'), outline);
  }
  append(box, el('div', 'al-subtitle', 'loop IR'), codeBlock(str(data.script), 'python', 'al-code al-script'));
  return box;
}

/** Generated source (LLVM IR, assembly, CUDA C...): one tab per source. */
export function sourceView(data: Data): HTMLElement {
  const box = el('div', 'al-mime al-source-view');
  const sources = list(data.sources).map(asData);
  box.appendChild(caption('al-caption', ['Module', str(data.name), str(data.target) ? `target ${str(data.target)}` : '']));
  const bar = el('div', 'al-tabbar');
  const panel = el('div', 'al-tabpanel');
  const show = (k: number): void => {
    bar.querySelectorAll('button').forEach((b, i) => b.classList.toggle('al-active', i === k));
    const s = sources[k];
    panel.replaceChildren(codeBlock(str(s.text), str(s.language, 'text'), 'al-code al-source'));
  };
  sources.forEach((s, k) => {
    const b = el('button', 'al-tab', str(s.title, `source ${k + 1}`));
    b.addEventListener('click', () => show(k));
    bar.appendChild(b);
  });
  append(box, bar, panel);
  if (sources.length) {
    show(0);
  }
  return box;
}

/** One tuning record: its numbers, its error, its trace. */
export function recordView(data: Data): HTMLElement {
  const rec = toRecord(data.record, Number(data.line) || 0, Number(data.index) || 1);
  if (!rec) {
    return el('div', 'al-mime al-empty', 'not a tuning record');
  }
  const python = typeof data.python === 'string' && data.python ? data.python : undefined;
  return append(el('div', 'al-mime al-record-view'), recordDetail(rec, python));
}

/** A renderer drawing one of our MIME types with `build`. */
class Renderer extends Widget implements IRenderMime.IRenderer {
  constructor(
    private mimeType: string,
    private build: Build
  ) {
    super();
    this.addClass('al-output');
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this.node.replaceChildren(this.build(asData(model.data[this.mimeType])));
    return Promise.resolve();
  }
}

function extension(id: string, mimeType: string, build: Build): IRenderMime.IExtension {
  return {
    id: `ansor-lab:${id}`,
    description: `Renders ${mimeType}`,
    rendererFactory: {
      safe: true, // nothing is parsed as HTML: untrusted outputs render too
      mimeTypes: [mimeType],
      createRenderer: () => new Renderer(mimeType, build)
    },
    rank: 40, // before text/html (its fallback)
    dataType: 'json'
  };
}

const extensions: IRenderMime.IExtension[] = [
  extension('trace', TRACE_MIME, traceView),
  extension('lowered', LOWERED_MIME, loweredView),
  extension('source', SOURCE_MIME, sourceView),
  extension('record', RECORD_MIME, recordView)
];

export default extensions;
