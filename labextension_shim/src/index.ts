/**
 * dsh-jupyter-shim: the JupyterLab (and Notebook 7) side of dsh-jupyter.
 *
 * It does three things and nothing more:
 *  - adds the command `dsh-jupyter:open-explorer` ("Explore Folder with dsh") to the command
 *    palette and the launcher. The command opens a code console titled "dsh: <folder>" whose
 *    kernel starts in the folder the file browser shows, loads the extension, picks the folder's
 *    own session (`explorer-<hash>`) and lists the folder. It saves nothing, into that folder or
 *    anywhere: a console is not a file. The run is asked for through localStorage, keyed by the
 *    console's session path, so it also happens when Notebook 7 moves the console into a new tab;
 *  - adds `dsh-jupyter:open-in-editor` (path, line, optional column and length) and answers the
 *    widgets' page events: `dsh-jupyter:probe` (the widgets ask whether this extension is here)
 *    and `dsh-jupyter:open-in-editor` (open a file in the editor with a line, or a match on it,
 *    selected and scrolled to the middle);
 *  - asks the server extension for `GET <base_url>/dsh/api/tools` when the page starts, and
 *    warns with a notification when it does not answer.
 *
 * Its default export also lists the Workspace panel (sidebar.ts), the open-tabs plugin
 * (tabs.ts), which tells the server what this page has open and takes an agent's change into a
 * tab without real-time collaboration, and the saved-outputs plugin (savedoutput.ts), which
 * shows a `%dsh` output's saved table or text when its widget's kernel is gone.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { PathExt, URLExt } from '@jupyterlab/coreutils';
import type { CodeEditor } from '@jupyterlab/codeeditor';
import { ConsolePanel, IConsoleTracker } from '@jupyterlab/console';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { ILauncher } from '@jupyterlab/launcher';
import { Kernel, ServerConnection } from '@jupyterlab/services';
import { treeViewIcon } from '@jupyterlab/ui-components';

import { sidebarPlugin } from './sidebar';
import { savedOutputsPlugin } from './savedoutput';
import { tabsPlugin } from './tabs';

/** Stable ids: browser tests and users' shortcuts refer to them. */
export namespace CommandIDs {
  export const openExplorer = 'dsh-jupyter:open-explorer';
  export const openInEditor = 'dsh-jupyter:open-in-editor';
}

/** Palette category of the commands. */
const CATEGORY = 'dsh-jupyter';

/**
 * The last part of an explorer console's session path, `<folder>/dsh-explorer`. It names the
 * kernel session (whose working directory is the folder) and is never a file: nothing is saved.
 */
export const EXPLORER_NAME = 'dsh-explorer';

/** What a fresh explorer kernel runs first: the extension, loaded once per kernel. */
export const EXPLORER_SOURCE = '%load_ext dsh_jupyter\n%dsh session';

/** localStorage key prefix of an explorer waiting for its console (possibly in another tab). */
const PENDING_PREFIX = 'dsh-jupyter:explorer:';

/** How long a waiting explorer request stays valid (a tab that never opened leaves it behind). */
const PENDING_MS = 5 * 60 * 1000;

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

/** 32-bit FNV-1a of `text` as 8 hex digits: a short, stable name part for a folder. */
export function folderHash(text: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/** The dsh session an explorer of `folder` logs its calls in: one per folder (sessions.ts knows the shape). */
export function explorerSession(folder: string): string {
  return `explorer-${folderHash(folder || '/')}`;
}

/** The tab title of the explorer of `folder` ("/" is the server's root). */
export function explorerTitle(folder: string): string {
  return `dsh: ${folder || '/'}`;
}

/** The session path of the explorer console of `folder` (a name, not a file). */
export function explorerPath(folder: string): string {
  return PathExt.join(folder, EXPLORER_NAME);
}

/**
 * What the explorer console runs: the listing of `folder`, preceded, in a kernel where `%dsh`
 * is not loaded yet, by loading the extension and choosing the folder's session. Only the last
 * line's value is shown, so the session line prints nothing.
 */
export function explorerSource(folder: string, loaded: boolean): string {
  const list = folder ? `%dsh list ${folderArgument(folder)}` : '%dsh list';
  return loaded ? list : `${EXPLORER_SOURCE} ${explorerSession(folder)}\n${list}`;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'dsh-jupyter-shim:plugin',
  description:
    'Opens a dsh explorer console on a folder, opens files at a line for the dsh widgets, and checks the dsh server extension.',
  autoStart: true,
  requires: [IDocumentManager],
  optional: [ICommandPalette, ILauncher, IDefaultFileBrowser, IConsoleTracker],
  activate: (
    app: JupyterFrontEnd,
    docManager: IDocumentManager,
    palette: ICommandPalette | null,
    launcher: ILauncher | null,
    browser: IDefaultFileBrowser | null,
    consoles: IConsoleTracker | null
  ): void => {
    app.commands.addCommand(CommandIDs.openExplorer, {
      label: 'Explore Folder with dsh',
      caption:
        'Open a dsh explorer console on this folder (its own session; nothing is saved into the folder)',
      icon: args => (args['isPalette'] ? undefined : treeViewIcon),
      execute: async args => {
        // The launcher passes its own cwd; otherwise the file browser's folder is the place.
        const cwd =
          typeof args['cwd'] === 'string'
            ? (args['cwd'] as string)
            : browser?.model.path ?? '';
        return openExplorer(app, consoles, cwd);
      }
    });

    app.commands.addCommand(CommandIDs.openInEditor, {
      label: 'Open File in the Editor at a Line (dsh)',
      execute: async args =>
        openInEditor(docManager, String(args['path'] ?? ''), Number(args['line'] ?? 1), {
          column: optionalNumber(args['column']),
          length: optionalNumber(args['length'])
        })
    });

    // The widgets live in notebook outputs and cannot import this extension; they talk to it
    // through page events. A probe is answered synchronously by filling in its detail.
    // The widgets draw JupyterLab's own file-type icons (the file browser's): the icon of the
    // first file type the document registry knows for a name, as its SVG text.
    const fileIcon = (name: string): { name: string; svg: string } | null => {
      const type = app.docRegistry.getFileTypesForPath(String(name))[0];
      const icon = type?.icon;
      return icon && icon.svgstr ? { name: icon.name, svg: icon.svgstr } : null;
    };
    document.addEventListener('dsh-jupyter:probe', (event: Event) => {
      const detail = (event as CustomEvent).detail;
      if (detail && typeof detail === 'object') {
        detail.openInEditor = true;
        detail.fileIcon = fileIcon;
      }
    });
    document.addEventListener('dsh-jupyter:open-in-editor', (event: Event) => {
      const detail = (event as CustomEvent).detail ?? {};
      void app.commands.execute(CommandIDs.openInEditor, {
        path: String(detail.path ?? ''),
        line: Number(detail.line ?? 1),
        ...(optionalNumber(detail.column) !== undefined ? { column: Number(detail.column) } : {}),
        ...(optionalNumber(detail.length) !== undefined ? { length: Number(detail.length) } : {})
      });
    });

    consoles?.forEach(panel => void runIfWaiting(app, panel)); // opened before this plugin started
    consoles?.widgetAdded.connect((_sender, panel) => {
      void runIfWaiting(app, panel);
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

function optionalNumber(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') {
    return undefined;
  }
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * Open the explorer of `cwd`: a code console (never a file) titled "dsh: <folder>", whose kernel
 * starts in that folder and lists it. When that folder's explorer is already open in this page,
 * it is shown and lists the folder again.
 *
 * The listing is asked for through localStorage, keyed by the console's session path, and run
 * by whichever page shows the console: Notebook 7 moves a console made on its file tree page
 * into a new browser tab, whose page runs it.
 */
async function openExplorer(
  app: JupyterFrontEnd,
  consoles: IConsoleTracker | null,
  cwd: string
): Promise<ConsolePanel | undefined> {
  const path = explorerPath(cwd);
  const open = consoles?.find(panel => panel.sessionContext.path === path);
  if (open) {
    app.shell.activateById(open.id);
    await runExplorer(open, cwd);
    return open;
  }
  const specs = app.serviceManager.kernelspecs;
  await specs.ready;
  const kernelName = specs.specs?.default;
  window.localStorage.setItem(
    PENDING_PREFIX + path,
    JSON.stringify({ folder: cwd, time: Date.now() })
  );
  const panel = await app.commands.execute('console:create', {
    path,
    name: explorerTitle(cwd),
    activate: true,
    ...(kernelName ? { kernelPreference: { name: kernelName } } : {})
  });
  return panel instanceof ConsolePanel ? panel : undefined;
}

/** A console whose explorer request waits in localStorage: take the request, run it. */
async function runIfWaiting(app: JupyterFrontEnd, panel: ConsolePanel): Promise<void> {
  await panel.sessionContext.ready;
  // A console the page does not show (Notebook 7's file tree page) is moved to another tab.
  if (panel.isDisposed || !Array.from(app.shell.widgets('main')).includes(panel)) {
    return;
  }
  const key = PENDING_PREFIX + panel.sessionContext.path;
  const raw = window.localStorage.getItem(key);
  if (raw === null) {
    return;
  }
  window.localStorage.removeItem(key);
  let request: { folder?: unknown; time?: unknown } = {};
  try {
    request = JSON.parse(raw);
  } catch {
    return;
  }
  if (typeof request.folder !== 'string' || Date.now() - Number(request.time) > PENDING_MS) {
    return;
  }
  panel.title.label = explorerTitle(request.folder);
  await runExplorer(panel, request.folder);
}

/** List `folder` in the console, loading the extension first when its kernel has not. */
async function runExplorer(panel: ConsolePanel, folder: string): Promise<void> {
  await panel.sessionContext.ready;
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel) {
    Notification.warning(
      `dsh-jupyter: the explorer of ${explorerTitle(folder)} has no kernel. Pick a Python kernel, then run: %load_ext dsh_jupyter`,
      { autoClose: false }
    );
    return;
  }
  await kernel.info;
  await panel.console.inject(explorerSource(folder, await dshLoaded(kernel)));
}

/**
 * Whether the kernel already has the `%dsh` magic, asked silently (a user expression, nothing
 * shown, nothing counted), so that `%load_ext` runs once per kernel and never says
 * "already loaded".
 */
async function dshLoaded(kernel: Kernel.IKernelConnection): Promise<boolean> {
  const expression = "'dsh' in get_ipython().magics_manager.magics['line']";
  try {
    const reply = await kernel.requestExecute({
      code: '',
      silent: true,
      store_history: false,
      user_expressions: { dsh: expression }
    }).done;
    const content = reply.content as any;
    const value = content?.user_expressions?.dsh;
    return value?.status === 'ok' && value?.data?.['text/plain'] === 'True';
  } catch {
    return false;
  }
}

/**
 * Open `path` in the editor with `line` (1-based) selected, or, with `column` (0-based) and
 * `length` in characters, that part of it (a match), scrolled to the middle of the editor.
 */
async function openInEditor(
  docManager: IDocumentManager,
  path: string,
  line: number,
  span: { column?: number; length?: number } = {}
): Promise<void> {
  if (!path) {
    return;
  }
  const widget = docManager.openOrReveal(path, 'Editor');
  if (!widget) {
    return; // Notebook 7 opens the file in another tab; it starts at the top there
  }
  await widget.context.ready;
  await (widget as any).revealed;
  const editor = (widget as any).content?.editor as CodeEditor.IEditor | undefined;
  if (!editor || typeof editor.setSelection !== 'function') {
    return;
  }
  const index = Math.min(Math.max(0, Math.floor(line) - 1), Math.max(0, editor.lineCount - 1));
  const text = editor.getLine(index) ?? '';
  let from = 0;
  let to = text.length;
  if (span.column !== undefined) {
    // column and length count characters (code points, as Python and ripgrep's spans do);
    // the editor counts UTF-16 units.
    const chars = Array.from(text);
    const start = Math.min(Math.max(0, Math.floor(span.column)), chars.length);
    const end =
      span.length !== undefined && span.length > 0
        ? Math.min(chars.length, start + Math.floor(span.length))
        : chars.length;
    from = chars.slice(0, start).join('').length;
    to = chars.slice(0, end).join('').length;
  }
  editor.setSelection({ start: { line: index, column: from }, end: { line: index, column: to } });
  centreLine(editor, index);
  editor.focus();
}

/**
 * Scroll `line` (0-based) to the middle of the editor. A CodeMirror 6 view scrolls with its own
 * `scrollIntoView` effect, `y: 'center'`, reached through the view's class so that this
 * extension bundles no copy of CodeMirror; any other editor just reveals the line.
 */
function centreLine(editor: CodeEditor.IEditor, line: number): void {
  const view = (editor as any).editor;
  const EditorView = view?.constructor;
  if (typeof EditorView?.scrollIntoView === 'function' && view.state?.doc) {
    const pos = view.state.doc.line(line + 1).from;
    view.dispatch({ effects: EditorView.scrollIntoView(pos, { y: 'center' }) });
  } else {
    editor.revealPosition({ line, column: 0 });
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
      '- the agent tools REST API is unavailable; the explorer itself still works.'
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

export default [plugin, sidebarPlugin, tabsPlugin, savedOutputsPlugin];
