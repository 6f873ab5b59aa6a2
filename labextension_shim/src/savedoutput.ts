/**
 * Saved `%dsh` outputs: the plugin `dsh-jupyter-shim:saved-outputs`.
 *
 * Why it exists: a `%dsh` output holds three forms, the widget view
 * (`application/vnd.jupyter.widget-view+json`), the model's text and a static HTML table. Its
 * widget lives in the kernel; a notebook reopened without that kernel (after a restart, on a fresh
 * server, on a colleague's machine) has no model for the view, and ipywidgets' renderer, which
 * JupyterLab prefers over the HTML, shows "Error displaying widget: model not found" where the
 * saved table is. So the kernel adds a fourth key to the bundle, `DSH_VIEW_MIME`, which this
 * plugin renders in every notebook, ranked above the widget view:
 *
 *  - while the widget's model lives, it shows the live widget, drawn by ipywidgets' own renderer
 *    (so everything ipywidgets does, restoring views from a running kernel included, still
 *    happens);
 *  - when there is no model (or ipywidgets' renderer has nothing to show after `WAIT_MS`), it
 *    shows the saved `text/html` (else `text/plain`), drawn by the notebook's own renderers,
 *    under a one-line note; when the live view appears later (a kernel that still had it
 *    answered), the live view replaces it, and when the live view goes away it comes back.
 *
 * The renderer is a `WidgetRenderer` (ipywidgets' class, from the shared module, never bundled)
 * so that ipywidgets, which hands its widget manager to the `WidgetRenderer`s already in a
 * notebook when the notebook's kernel connects, hands it to this one too; it passes it on.
 * Without ipywidgets' JupyterLab extension this plugin does nothing, and the bundle's other
 * forms are shown as before.
 *
 * What it must never do: change an output (what is saved is what the kernel sent), render a
 * saved output of an untrusted notebook (the factory is not `safe`: JupyterLab then shows the
 * sanitized `text/html` itself), or show the saved form and the live view at once.
 */

import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import type { LabWidgetManager, WidgetRenderer } from '@jupyter-widgets/jupyterlab-manager';
import { Message, MessageLoop } from '@lumino/messaging';
import { Panel, Widget } from '@lumino/widgets';

/** The bundle key the kernel adds beside a widget view (dsh_jupyter/kernel/display.py). */
export const DSH_VIEW_MIME = 'application/vnd.dsh-jupyter.view+json';

/** ipywidgets' widget view, which the live form is drawn from. */
export const WIDGET_VIEW_MIME = 'application/vnd.jupyter.widget-view+json';

/** Rank of the renderer: before ipywidgets' (-10), so the bundle is drawn by this plugin. */
export const RANK = -20;

/** How long ipywidgets may take to draw the live view before the saved form is shown meanwhile. */
export const WAIT_MS = 1000;

/** The line above a saved form. */
export const SAVED_NOTE = 'Saved output: run the cell again to browse it.';

const LOG_PREFIX = 'dsh-jupyter-shim:';

type WidgetRendererClass = typeof WidgetRenderer;

/**
 * The renderer class, built on ipywidgets' `WidgetRenderer` as loaded in this page (the class
 * is only known once the shared module has loaded).
 */
function savedOutputRenderer(Base: WidgetRendererClass) {
  return class DshOutputRenderer extends Base {
    private readonly _rendermime: IRenderMimeRegistry;
    private readonly _live: WidgetRenderer;
    private readonly _saved = new Panel();
    private _savedModel: IRenderMime.IMimeModel | null = null;
    private _savedDrawn = false;

    constructor(options: IRenderMime.IRendererOptions, rendermime: IRenderMimeRegistry) {
      super(options);
      this._rendermime = rendermime;
      this.addClass('dsh-output');
      // ipywidgets' renderer of the notebook, with its manager when it already has one.
      this._live = rendermime.createRenderer(WIDGET_VIEW_MIME) as WidgetRenderer;
      this._live.hide();
      this._saved.addClass('dsh-saved-output');
      this._saved.hide();
      this.addWidget(this._live);
      this.addWidget(this._saved);
      MessageLoop.installMessageHook(this._live, (_handler, msg: Message) => {
        if (msg.type === 'child-added' || msg.type === 'child-removed') {
          requestAnimationFrame(() => void this._update()); // after the child is in place (or gone)
        }
        return true;
      });
    }

    /** ipywidgets hands its manager to the renderers already drawn: pass it to the live one. */
    set manager(value: LabWidgetManager) {
      this._live.manager = value;
    }

    async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
      this._savedModel = model;
      this._savedDrawn = false;
      const waited = new Promise<void>(resolve => setTimeout(resolve, WAIT_MS));
      const live = this._live.renderModel(model).catch(reason => {
        console.warn(LOG_PREFIX, 'the live view could not be drawn', reason);
      });
      await Promise.race([live, waited]);
      await this._update();
    }

    /** True while ipywidgets' renderer holds a view (its one child). */
    get hasLiveView(): boolean {
      return !this._live.isDisposed && this._live.widgets.length > 0;
    }

    /** Shows the live view if there is one, else the saved form (drawn the first time it shows). */
    private async _update(): Promise<void> {
      if (this.isDisposed) {
        return;
      }
      if (this.hasLiveView) {
        this._saved.hide();
        this._live.show();
        return;
      }
      this._live.hide();
      if (!this._savedDrawn && this._savedModel) {
        this._savedDrawn = true;
        await this._drawSaved(this._savedModel);
        if (this.isDisposed || this.hasLiveView) {
          return; // the live view came while the saved form was drawn: that call showed it
        }
      }
      this._saved.show();
    }

    private async _drawSaved(model: IRenderMime.IMimeModel): Promise<void> {
      for (const child of [...this._saved.widgets]) {
        child.dispose();
      }
      const mime = ['text/html', 'text/plain'].find(m => m in model.data);
      const note = new Widget();
      note.addClass('dsh-saved-note');
      note.node.textContent = SAVED_NOTE;
      this._saved.addWidget(note);
      if (!mime) {
        return;
      }
      const renderer = this._rendermime.createRenderer(mime);
      this._saved.addWidget(renderer);
      await renderer.renderModel(model);
    }
  };
}

/** Adds the renderer to `panel`'s notebook (each notebook has its own renderers and manager). */
function register(panel: NotebookPanel, Renderer: ReturnType<typeof savedOutputRenderer>): void {
  const rendermime = panel.content.rendermime;
  if (rendermime.getFactory(DSH_VIEW_MIME)) {
    return;
  }
  rendermime.addFactory(
    {
      safe: false,
      mimeTypes: [DSH_VIEW_MIME],
      createRenderer: options => new Renderer(options, rendermime)
    },
    RANK
  );
}

export const savedOutputsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'dsh-jupyter-shim:saved-outputs',
  description:
    "Shows a saved %dsh output's table or text when its widget's kernel is gone, and the live widget while it lives.",
  autoStart: true,
  requires: [INotebookTracker],
  activate: async (_app: JupyterFrontEnd, notebooks: INotebookTracker): Promise<void> => {
    let Renderer: ReturnType<typeof savedOutputRenderer>;
    try {
      const widgets = await import('@jupyter-widgets/jupyterlab-manager');
      Renderer = savedOutputRenderer(widgets.WidgetRenderer);
    } catch (reason) {
      console.warn(LOG_PREFIX, "ipywidgets' JupyterLab extension is not here; saved outputs show as before", reason);
      return;
    }
    notebooks.forEach(panel => register(panel, Renderer));
    notebooks.widgetAdded.connect((_sender, panel) => register(panel, Renderer));
  }
};
