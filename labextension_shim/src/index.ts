/**
 * dsh-jupyter-shim: the JupyterLab side of dsh-jupyter.
 *
 * It does two things and nothing more:
 *  - adds the command `dsh-jupyter:open-explorer` ("Open workspace explorer") to the
 *    command palette and the launcher. The command makes a new notebook in the folder the
 *    file browser shows, puts `%load_ext dsh_jupyter` / `%dsh list` in its first cell and
 *    runs that cell once the kernel is up;
 *  - asks the server extension for `GET <base_url>/dsh/api/tools` when Lab starts, and
 *    warns with a notification when it does not answer (the explorer in the notebook works
 *    without it, but the agent tools' REST API is then missing).
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { URLExt } from '@jupyterlab/coreutils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { ILauncher } from '@jupyterlab/launcher';
import { NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { ServerConnection } from '@jupyterlab/services';
import { treeViewIcon } from '@jupyterlab/ui-components';

/** Stable ids: browser tests and users' shortcuts refer to them. */
export namespace CommandIDs {
  export const openExplorer = 'dsh-jupyter:open-explorer';
}

/** Palette category of the commands. */
const CATEGORY = 'dsh-jupyter';

/** What the first cell of a new explorer notebook holds. */
export const EXPLORER_SOURCE = '%load_ext dsh_jupyter\n%dsh list';

/** The server extension's route, relative to the server's base_url. */
const TOOLS_ROUTE = 'dsh/api/tools';

const LOG_PREFIX = 'dsh-jupyter-shim:';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'dsh-jupyter-shim:plugin',
  description:
    'Opens the dsh-jupyter workspace explorer in a new notebook and checks the dsh server extension.',
  autoStart: true,
  requires: [IDocumentManager],
  optional: [ICommandPalette, ILauncher, IDefaultFileBrowser],
  activate: (
    app: JupyterFrontEnd,
    docManager: IDocumentManager,
    palette: ICommandPalette | null,
    launcher: ILauncher | null,
    browser: IDefaultFileBrowser | null
  ): void => {
    app.commands.addCommand(CommandIDs.openExplorer, {
      label: 'Open workspace explorer',
      caption:
        'New notebook in the current folder that loads dsh_jupyter and runs %dsh list',
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
 * Create `Untitled*.ipynb` in `cwd`, open it with the default kernel, fill the first
 * cell and run it when the kernel is ready. Resolves with the panel (handy in tests).
 */
async function openExplorer(
  app: JupyterFrontEnd,
  docManager: IDocumentManager,
  cwd: string
): Promise<NotebookPanel | undefined> {
  const model = await docManager.newUntitled({ path: cwd, type: 'notebook' });

  // Pass the default kernel so Lab starts it without asking which one to use.
  const specs = app.serviceManager.kernelspecs;
  await specs.ready;
  const kernelName = specs.specs?.default;
  const widget = docManager.open(
    model.path,
    'Notebook',
    kernelName ? { name: kernelName } : undefined
  );
  if (!(widget instanceof NotebookPanel)) {
    Notification.error(
      `dsh-jupyter: could not open ${model.path} as a notebook.`
    );
    return undefined;
  }
  const panel = widget;
  await panel.context.ready;

  const notebook = panel.content;
  const shared = notebook.model?.sharedModel;
  if (!shared) {
    return panel;
  }
  const first = shared.cells[0];
  if (first && first.cell_type === 'code' && first.getSource().trim() === '') {
    first.setSource(EXPLORER_SOURCE);
  } else {
    shared.insertCell(0, {
      cell_type: 'code',
      source: EXPLORER_SOURCE,
      metadata: { trusted: true }
    });
  }
  notebook.activeCellIndex = 0;

  // Wait for the session and its kernel before running, else the run would be lost
  // or would pop up a kernel dialog.
  await panel.sessionContext.ready;
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel) {
    Notification.warning(
      `dsh-jupyter: ${model.path} has no kernel. Pick a Python kernel, then run the first cell.`,
      { autoClose: false }
    );
    return panel;
  }
  await kernel.info;
  await NotebookActions.run(notebook, panel.sessionContext);
  await panel.context.save();
  return panel;
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

export default plugin;
