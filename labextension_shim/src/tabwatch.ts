/**
 * What this page has open: every document widget, found as its factory makes it, and the
 * document contexts behind them. tabs.ts reports `documents()` to the server and looks up
 * `contextsFor(path)` when a request names a file; `changed` is called whenever what a report
 * would say may have changed (a tab opened or closed, a document becoming unsaved or saved, a
 * rename in this page, a document ready).
 *
 * Only documents this page holds its own copy of count: not a collaborative model (the server
 * reaches those through their shared documents) and not a file of another drive.
 */

import { JupyterFrontEnd } from '@jupyterlab/application';
import { IDocumentManager } from '@jupyterlab/docmanager';
import type { DocumentRegistry, IDocumentWidget } from '@jupyterlab/docregistry';

import { isNotebookModel } from './tabchange';
import { IOpenDocument } from './tablink';
import { keepTypingUnsaved } from './tabsaves';

type Context = DocumentRegistry.Context;

export class OpenDocuments {
  constructor(
    private app: JupyterFrontEnd,
    private docManager: IDocumentManager,
    private changed: () => void
  ) {}

  /** Watch every widget factory, those added later too, and the widgets already on screen. */
  start(): void {
    const registry = this.app.docRegistry;
    for (const factory of registry.widgetFactories()) {
      this.watchFactory(factory);
    }
    registry.changed.connect((_, args) => {
      if (args.type === 'widgetFactory' && args.change === 'added' && args.name) {
        const factory = registry.getWidgetFactory(args.name);
        if (factory) {
          this.watchFactory(factory);
        }
      }
    });
    for (const widget of this.app.shell.widgets('main')) {
      const context = this.docManager.contextForWidget(widget);
      if (context) {
        this.watch(widget as IDocumentWidget, context);
      }
    }
  }

  /** Every live document context of `path` in this page. */
  contextsFor(path: string): Context[] {
    const found = new Set<Context>();
    for (const widget of this.widgets) {
      const context = widget.context;
      if (!widget.isDisposed && context.path === path && this.own(context)) {
        found.add(context);
      }
    }
    return [...found];
  }

  /** One entry per path: a notebook or a file, unsaved or not, in how many tabs; sorted by path. */
  documents(): IOpenDocument[] {
    const byPath = new Map<string, IOpenDocument>();
    for (const widget of this.widgets) {
      const context = widget.context;
      if (widget.isDisposed || !this.own(context)) {
        continue;
      }
      const kind = isNotebookModel(context.model) ? 'notebook' : 'file';
      const seen = byPath.get(context.path);
      if (seen) {
        seen.tabs += 1;
        seen.dirty = seen.dirty || context.model.dirty;
        seen.kind = seen.kind === 'notebook' ? 'notebook' : kind;
      } else {
        byPath.set(context.path, { path: context.path, kind, dirty: context.model.dirty, tabs: 1 });
      }
    }
    return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  private watchFactory(factory: DocumentRegistry.WidgetFactory): void {
    // the document manager adopts the widget after this signal; its context is already set
    factory.widgetCreated.connect((_, widget) => {
      const context = (widget as IDocumentWidget).context;
      if (context) {
        this.watch(widget as IDocumentWidget, context);
      }
    });
  }

  private watch(widget: IDocumentWidget, context: Context): void {
    if (this.widgets.has(widget)) {
      return;
    }
    this.widgets.add(widget);
    widget.disposed.connect(() => {
      this.widgets.delete(widget);
      this.changed();
    });
    if (!this.contexts.has(context)) {
      this.contexts.add(context);
      if (this.own(context)) {
        keepTypingUnsaved(context); // JupyterLab marks typing during a save as saved
      }
      context.model.stateChanged.connect((_, change) => {
        if (change.name === 'dirty') {
          this.changed();
        }
      });
      context.pathChanged.connect(() => this.changed());
      void context.ready.then(() => this.changed());
    }
    this.changed();
  }

  /** Whether this page holds its own copy of the context's file (not a shared document). */
  private own(context: Context): boolean {
    return (
      !context.isDisposed &&
      !(context.model as any).collaborative &&
      this.app.serviceManager.contents.driveName(context.path) === ''
    );
  }

  private readonly widgets = new Set<IDocumentWidget>();
  private readonly contexts = new WeakSet<Context>();
}
