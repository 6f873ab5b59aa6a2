/**
 * dsh-jupyter-shim: the JupyterLab (and Notebook 7) side of dsh-jupyter.
 *
 * It does three things and nothing more:
 *  - adds the command `dsh-jupyter:open-explorer` ("Explore Folder with dsh") to the command
 *    palette and the launcher. The command opens, or creates, `dsh-explorer.ipynb` in the
 *    folder the file browser shows, with `%load_ext dsh_jupyter` / `%dsh list <folder>` as its
 *    first cell, and runs that cell once the kernel is up. The run is asked for in the
 *    notebook's own metadata (`dsh_jupyter.run_first_cell`), so it also happens when the
 *    notebook opens in another browser tab, as Notebook 7 opens documents from its file tree;
 *  - adds `dsh-jupyter:open-in-editor` (path, line) and answers the widgets' page events:
 *    `dsh-jupyter:probe` (the widgets ask whether this extension is here) and
 *    `dsh-jupyter:open-in-editor` (open a file in the editor at a line);
 *  - asks the server extension for `GET <base_url>/dsh/api/tools` when the page starts, and
 *    warns with a notification when it does not answer.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { PageConfig, PathExt, URLExt } from '@jupyterlab/coreutils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { ILauncher } from '@jupyterlab/launcher';
import {
  INotebookTracker,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';
import { ServerConnection } from '@jupyterlab/services';
import { treeViewIcon } from '@jupyterlab/ui-components';

import { sidebarPlugin } from './sidebar';

/** Stable ids: browser tests and users' shortcuts refer to them. */
export namespace CommandIDs {
  export const openExplorer = 'dsh-jupyter:open-explorer';
  export const openInEditor = 'dsh-jupyter:open-in-editor';
}

/** Palette category of the commands. */
const CATEGORY = 'dsh-jupyter';

/** The notebook the command opens (or creates) in a folder. */
export const EXPLORER_NAME = 'dsh-explorer.ipynb';

/** What the first cell of an explorer notebook starts with. */
export const EXPLORER_SOURCE = '%load_ext dsh_jupyter\n%dsh list';

/** The metadata key that asks the page opening the notebook to run its first cell once. */
const RUN_KEY = 'dsh_jupyter';

/** The server extension's route, relative to the server's base_url. */
const TOOLS_ROUTE = 'dsh/api/tools';

const LOG_PREFIX = 'dsh-jupyter-shim:';

/**
 * `folder` as one argument of the `%dsh` line: bare when it is plain, else single-quoted for
 * shlex; `$` and braces doubled so IPython does not expand them.
 */
export function folderArgument(folder: string): string {
  const escaped = folder.replace(/\$/g, '$$$$').replace(/\{/g, '{{').replace(/\}/g, '}}');
  if (/^[\w@%+=:,./-]+$/.test(escaped)) {
    return escaped;
  }
  return "'" + escaped.replace(/'/g, "'\\''") + "'";
}

export function explorerSource(folder: string): string {
  return folder ? `${EXPLORER_SOURCE} ${folderArgument(folder)}` : EXPLORER_SOURCE;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'dsh-jupyter-shim:plugin',
  description:
    'Opens the dsh-jupyter explorer notebook in a folder, opens files at a line for the dsh widgets, and checks the dsh server extension.',
  autoStart: true,
  requires: [IDocumentManager],
  optional: [ICommandPalette, ILauncher, IDefaultFileBrowser, INotebookTracker],
  activate: (
    app: JupyterFrontEnd,
    docManager: IDocumentManager,
    palette: ICommandPalette | null,
    launcher: ILauncher | null,
    browser: IDefaultFileBrowser | null,
    tracker: INotebookTracker | null
  ): void => {
    app.commands.addCommand(CommandIDs.openExplorer, {
      label: 'Explore Folder with dsh',
      caption:
        'Open (or create) dsh-explorer.ipynb in this folder; its first cell lists the folder with %dsh list',
      icon: args => (args['isPalette'] ? undefined : treeViewIcon),
      execute: async args => {
        // The launcher passes its own cwd; otherwise the file browser's folder is the place.
        const cwd =
          typeof args['cwd'] === 'string'
            ? (args['cwd'] as string)
            : browser?.model.path ?? '';
        return openExplorer(app, docManager, cwd);
      }
    });

    app.commands.addCommand(CommandIDs.openInEditor, {
      label: 'Open File in the Editor at a Line (dsh)',
      execute: async args =>
        openInEditor(docManager, String(args['path'] ?? ''), Number(args['line'] ?? 1))
    });

    // The widgets live in notebook outputs and cannot import this extension; they talk to it
    // through page events. A probe is answered synchronously by filling in its detail.
    document.addEventListener('dsh-jupyter:probe', (event: Event) => {
      const detail = (event as CustomEvent).detail;
      if (detail && typeof detail === 'object') {
        detail.openInEditor = true;
      }
    });
    document.addEventListener('dsh-jupyter:open-in-editor', (event: Event) => {
      const detail = (event as CustomEvent).detail ?? {};
      void app.commands.execute(CommandIDs.openInEditor, {
        path: String(detail.path ?? ''),
        line: Number(detail.line ?? 1)
      });
    });

    tracker?.forEach(panel => void runIfAsked(panel)); // opened before this plugin started
    tracker?.widgetAdded.connect((_sender, panel) => {
      void runIfAsked(panel);
    });

    palette?.addItem({ command: CommandIDs.openExplorer, category: CATEGORY });
    launcher?.add({
      command: CommandIDs.openExplorer,
      category: 'Other',
      rank: 1
    });

    // Never block activation on the network.
    void checkServerExtension();
  }
};

/**
 * Open `dsh-explorer.ipynb` in `cwd` (creating it, or updating its first cell) with the
 * request to run its first cell, or, when it is already open in this page, run that cell now.
 */
async function openExplorer(
  app: JupyterFrontEnd,
  docManager: IDocumentManager,
  cwd: string
): Promise<NotebookPanel | undefined> {
  const path = PathExt.join(cwd, EXPLORER_NAME);
  const source = explorerSource(cwd);
  const open = docManager.findWidget(path);
  if (open instanceof NotebookPanel) {
    app.shell.activateById(open.id);
    setFirstCell(open, source);
    await runFirstCell(open);
    return open;
  }
  const specs = app.serviceManager.kernelspecs;
  await specs.ready;
  const kernelName = specs.specs?.default;
  const spec = kernelName ? specs.specs?.kernelspecs[kernelName] : undefined;
  // The notebook names its kernel, so no page asks which one to start.
  const kernelspec = spec
    ? { name: spec.name, display_name: spec.display_name, language: spec.language }
    : undefined;
  await writeExplorer(docManager, path, source, kernelspec);
  if (app.name !== 'JupyterLab') {
    // Notebook 7 shows each notebook in its own browser tab; that tab's page runs the cell.
    const url = URLExt.join(PageConfig.getBaseUrl(), 'notebooks', URLExt.encodeParts(path));
    window.open(url, '_blank');
    return undefined;
  }
  const widget = docManager.openOrReveal(
    path,
    'Notebook',
    kernelName ? { name: kernelName } : undefined
  );
  return widget instanceof NotebookPanel ? widget : undefined;
}

/** Create the explorer notebook, or put the listing in its first cell, and ask for the run. */
async function writeExplorer(
  docManager: IDocumentManager,
  path: string,
  source: string,
  kernelspec?: { name: string; display_name: string; language: string }
): Promise<void> {
  const contents = docManager.services.contents;
  let nb: any = null;
  try {
    nb = (await contents.get(path, { type: 'notebook', content: true })).content;
  } catch {
    nb = null; // not there yet
  }
  const cell = {
    cell_type: 'code',
    source,
    metadata: {},
    outputs: [],
    execution_count: null
  };
  if (!nb) {
    nb = {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: {},
      cells: [cell]
    };
  } else {
    nb.cells = nb.cells ?? [];
    const first = nb.cells[0];
    const text = first ? [].concat(first.source).join('') : '';
    if (first && first.cell_type === 'code' && text.startsWith('%load_ext dsh_jupyter')) {
      first.source = source;
    } else {
      nb.cells.unshift(cell);
    }
  }
  nb.metadata = { ...(nb.metadata ?? {}), [RUN_KEY]: { run_first_cell: true } };
  if (kernelspec && !nb.metadata.kernelspec) {
    nb.metadata.kernelspec = kernelspec;
  }
  await contents.save(path, { type: 'notebook', format: 'json', content: nb });
}

function setFirstCell(panel: NotebookPanel, source: string): void {
  const shared = panel.content.model?.sharedModel;
  const first = shared?.cells[0];
  if (first && first.cell_type === 'code' && first.getSource().startsWith('%load_ext dsh_jupyter')) {
    first.setSource(source);
  } else {
    shared?.insertCell(0, { cell_type: 'code', source });
  }
}

/** A notebook opened with the run request: run its first cell once, then drop the request. */
async function runIfAsked(panel: NotebookPanel): Promise<void> {
  await panel.context.ready;
  const model = panel.content.model;
  const asked = model?.getMetadata(RUN_KEY) as { run_first_cell?: boolean } | undefined;
  if (!model || !asked?.run_first_cell) {
    return;
  }
  model.deleteMetadata(RUN_KEY);
  await runFirstCell(panel);
}

/** Wait for the kernel, run the first cell and save; say so when there is no kernel. */
async function runFirstCell(panel: NotebookPanel): Promise<void> {
  await panel.sessionContext.ready;
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel) {
    Notification.warning(
      `dsh-jupyter: ${panel.context.path} has no kernel. Pick a Python kernel, then run the first cell.`,
      { autoClose: false }
    );
    return;
  }
  await kernel.info;
  const notebook = panel.content;
  notebook.activeCellIndex = 0;
  notebook.deselectAll();
  await NotebookActions.run(notebook, panel.sessionContext);
  await panel.context.save();
}

/** Open `path` in the editor and put the cursor at `line` (1-based), scrolled into view. */
async function openInEditor(
  docManager: IDocumentManager,
  path: string,
  line: number
): Promise<void> {
  if (!path) {
    return;
  }
  const widget = docManager.openOrReveal(path, 'Editor');
  if (!widget) {
    return; // Notebook 7 opens the file in another tab; it starts at the top there
  }
  await widget.context.ready;
  const editor = (widget as any).content?.editor;
  if (editor && typeof editor.setCursorPosition === 'function') {
    const position = { line: Math.max(0, line - 1), column: 0 };
    editor.setCursorPosition(position);
    editor.revealPosition?.(position);
    editor.focus?.();
  }
}

/**
 * Ask `GET <base_url>/dsh/api/tools`. Success is logged to the console only; anything
 * else becomes a warning the user sees, saying what to do.
 */
async function checkServerExtension(): Promise<void> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, TOOLS_ROUTE);
  // Under 140 characters, or the toast cuts it (the notification centre shows it all).
  const fix = 'Fix: jupyter server extension enable dsh_jupyter; restart Jupyter.';
  const warn = (problem: string, detail: unknown): void => {
    console.warn(
      LOG_PREFIX,
      `GET ${url}:`,
      detail,
      '- the agent tools REST API is unavailable; the explorer notebook itself still works.'
    );
    Notification.warning(`dsh-jupyter server extension ${problem}. ${fix}`, {
      autoClose: false
    });
  };
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, { method: 'GET' }, settings);
  } catch (error) {
    warn(`unreachable at /${TOOLS_ROUTE}`, error);
    return;
  }
  if (!response.ok) {
    warn(
      response.status === 404
        ? `not enabled (/${TOOLS_ROUTE}: 404)`
        : `failing (/${TOOLS_ROUTE}: ${response.status})`,
      response.status
    );
    return;
  }
  let count = '?';
  try {
    const body = await response.json();
    const tools = Array.isArray(body) ? body : body?.tools;
    if (Array.isArray(tools)) {
      count = String(tools.length);
    }
  } catch {
    // The route answered; the count is only for the log.
  }
  console.log(LOG_PREFIX, `server extension OK, ${count} tools at ${url}`);
}

export default [plugin, sidebarPlugin];
