/**
 * The tuning-log viewer: a document widget for records logs (`*.records.jsonl`,
 * `*.records.json` by default; any `.json`/`.jsonl` through Open With -> Tuning log). It
 * follows the file while a tuner appends to it: every second it asks the server for the
 * file's modification time and reloads the document when it changed.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ABCWidgetFactory, DocumentRegistry, DocumentWidget } from '@jupyterlab/docregistry';
import { Contents } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

import { LogView } from './viewer';

export const FACTORY = 'Tuning log';
export const FILE_TYPE = 'ansor-tuning-log';
/** How often the viewer checks the file for appended records. */
export const POLL_MS = 1000;

/** The view inside the document widget, redrawn when the document's text changes. */
class LogPanel extends Widget {
  private view: LogView;
  private timer: number | undefined;
  private pending = false;

  constructor(
    private context: DocumentRegistry.Context,
    private contents: Contents.IManager
  ) {
    super();
    this.addClass('al-logpanel');
    this.view = new LogView(context.localPath);
    this.node.appendChild(this.view.node);
    context.ready.then(() => {
      this.redraw();
      context.model.contentChanged.connect(this.redraw, this);
      this.timer = window.setInterval(() => void this.poll(), POLL_MS);
    });
  }

  private redraw(): void {
    if (this.pending) {
      return;
    }
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      if (!this.isDisposed) {
        this.view.setText(this.context.model.toString(), this.context.localPath);
      }
    });
  }

  /** Reload the document when the file on disk is newer than what was read. */
  private async poll(): Promise<void> {
    if (this.isDisposed || this.context.model.dirty) {
      return;
    }
    try {
      const info = await this.contents.get(this.context.path, { content: false });
      const known = this.context.contentsModel?.last_modified;
      if (info.last_modified && info.last_modified !== known) {
        await this.context.revert();
      }
    } catch {
      // the file may be gone for a moment (a tuner rewriting it): try again next time
    }
  }

  dispose(): void {
    window.clearInterval(this.timer);
    super.dispose();
  }
}

class LogFactory extends ABCWidgetFactory<DocumentWidget<LogPanel>, DocumentRegistry.IModel> {
  constructor(
    options: DocumentRegistry.IWidgetFactoryOptions,
    private contents: Contents.IManager
  ) {
    super(options);
  }

  protected createNewWidget(context: DocumentRegistry.Context): DocumentWidget<LogPanel> {
    const content = new LogPanel(context, this.contents);
    const widget = new DocumentWidget({ content, context });
    widget.addClass('al-logviewer');
    widget.title.caption = `Tuning log: ${context.localPath}`;
    return widget;
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'ansor-lab:log-viewer',
  description: 'Opens ansor_lab tuning logs (records written by RecordToFile) as a live view.',
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
    app.docRegistry.addFileType({
      name: FILE_TYPE,
      displayName: 'Tuning log',
      extensions: ['.records.jsonl', '.records.json'],
      mimeTypes: ['application/x-ansor-lab-records'],
      contentType: 'file',
      fileFormat: 'text'
    });
    const factory = new LogFactory(
      {
        name: FACTORY,
        label: 'Tuning log',
        fileTypes: [FILE_TYPE, 'json', 'jsonl'],
        defaultFor: [FILE_TYPE],
        readOnly: true
      },
      app.serviceManager.contents
    );
    app.docRegistry.addWidgetFactory(factory);
  }
};

export default plugin;
