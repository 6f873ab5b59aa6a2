/**
 * Open tabs, without real-time collaboration: the plugin `dsh-jupyter-shim:tabs`.
 *
 * Without collaboration each page holds its own copy of every file it has open, and an agent that
 * writes the file under it leaves a stale tab whose next save meets JupyterLab's "File Changed"
 * dialog (where either answer loses one side's work). So this page:
 *
 *  - reports to the server (tablink.ts) the documents its tabs have open (tabwatch.ts) — path,
 *    notebook or file, unsaved or not, how many tabs — at once whenever that changes (a tab
 *    opened or closed, a document becoming unsaved or saved, a rename in this page), and when it
 *    goes away (`pagehide`, by beacon);
 *  - keeps one long poll open for the server's requests and answers each:
 *    `take` — in ONE synchronous turn, so no keystroke can come between the check and the change:
 *    `unsaved` if a document of that path has unsaved changes, `changed` if its idea of the file
 *    (hash, else last-modified time) is not the file on disk, `busy` while it still loads;
 *    otherwise the content goes into every document of that path by the smallest change
 *    (tabchange.ts), and with `save` the document saves at once through its own context
 *    (JupyterLab's own save: no dialog, and its idea of the file stays right);
 *    `save` — save a change taken earlier; `saved` — another page saved it: learn the saved
 *    file (tabrename.ts) and be clean again; `undo` — give a taken change back; `moved` — a tool
 *    moved the file: the documents follow it to the new path (tabrename.ts).
 *
 * Typing after a change was taken is simply unsaved typing; typing before it makes the document
 * unsaved, so the change is refused: never is a keystroke lost. Documents of collaborative
 * models (jupyter-collaboration) and of other drives are left to the server's shared documents.
 */

import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IDocumentManager } from '@jupyterlab/docmanager';
import type { DocumentRegistry } from '@jupyterlab/docregistry';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';

import { IChange, applyContent, giveBack, snapshot } from './tabchange';
import { IAnswer, IPageRequest, NoTabRoutes, PageLink } from './tablink';
import { FileChanges } from './tabrename';
import { OpenDocuments } from './tabwatch';

type Context = DocumentRegistry.Context;

/** A change this page took and has not yet saved, learned or given back, by request id. */
interface ITake {
  path: string;
  notebook: boolean;
  changes: { context: Context; change: IChange }[];
  at: number;
}

/** A take nobody followed up within this long is forgotten (the server gave up long before). */
const TAKE_KEPT_MS = 10 * 60 * 1000;
/** Waits between polls after a failure: doubling from 1 s up to this. */
const MAX_BACKOFF_MS = 30 * 1000;

const LOG_PREFIX = 'dsh-jupyter-shim:';

export const tabsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'dsh-jupyter-shim:tabs',
  description:
    'Tells the dsh server which files this page has open, takes an agent\'s change into a tab with nothing unsaved, and follows a file an agent moved.',
  autoStart: true,
  requires: [IDocumentManager],
  optional: [IDefaultFileBrowser],
  activate: (app: JupyterFrontEnd, docManager: IDocumentManager, browser: IDefaultFileBrowser | null): void => {
    new OpenTabs(app, docManager, browser).start();
  }
};

export class OpenTabs {
  constructor(
    private app: JupyterFrontEnd,
    docManager: IDocumentManager,
    private browser: IDefaultFileBrowser | null = null
  ) {
    this.files = new FileChanges(app.serviceManager.contents);
    this.open = new OpenDocuments(app, docManager, () => this.schedule());
  }

  start(): void {
    this.open.start();
    window.addEventListener('pagehide', () => {
      this.link.beacon();
      this.lastReport = ''; // if the page comes back from the cache, it reports again
    });
    window.addEventListener('pageshow', event => {
      if (event.persisted) {
        this.schedule();
      }
    });
    void this.app.restored.then(() => this.schedule());
    void this.run();
  }

  /** Report soon (once for a burst of changes), in order, and only what changed. */
  private schedule(): void {
    if (this.scheduled || this.stopped) {
      return;
    }
    this.scheduled = true;
    setTimeout(() => {
      this.scheduled = false;
      this.reporting = this.reporting.then(() => this.report(false));
    }, 0);
  }

  private async report(force: boolean): Promise<void> {
    const documents = this.open.documents();
    const body = JSON.stringify(documents);
    if (!force && body === this.lastReport) {
      return;
    }
    this.lastReport = body;
    try {
      await this.link.report(documents);
    } catch (error) {
      this.lastReport = ''; // the next change or poll reports again
      if (error instanceof NoTabRoutes) {
        this.stopped = true;
        console.log(LOG_PREFIX, 'the server has no tab routes; open tabs are not reported');
      }
    }
  }

  // -- the server's requests -------------------------------------------------------------------

  private async run(): Promise<void> {
    let after = 0;
    let known = false;
    let backoff = 0;
    while (!this.stopped) {
      try {
        if (!known) {
          this.lastReport = '';
          await (this.reporting = this.reporting.then(() => this.report(true)));
          if (this.stopped || this.lastReport === '') {
            throw new Error('the report did not reach the server');
          }
          known = true;
          after = 0;
        }
        const found = await this.link.poll(after);
        if (found === 'unknown') {
          known = false; // forgotten (the server restarted, or the page was away too long)
          continue;
        }
        backoff = 0;
        for (const request of found) {
          after = Math.max(after, request.seq);
          this.handle(request);
        }
        this.schedule();
      } catch {
        backoff = Math.min(MAX_BACKOFF_MS, backoff ? backoff * 2 : 1000);
        await new Promise(resolve => setTimeout(resolve, backoff));
      }
    }
  }

  /** Answer one request: its check and change happen now, in this turn; only saves wait. */
  private handle(request: IPageRequest): void {
    let answer: IAnswer | Promise<IAnswer>;
    try {
      answer = this.answerFor(request);
    } catch (error) {
      answer = { status: 'failed', message: String(error) };
    }
    void Promise.resolve(answer)
      .then(async done => {
        const accepted = await this.link.answer(request, done);
        if (!accepted && request.type === 'take') {
          this.giveBackTake(request.id); // the server stopped waiting: nobody saves this change
        }
      })
      .catch(error => {
        console.warn(LOG_PREFIX, `could not answer ${request.type}:`, error);
        if (request.type === 'take') {
          this.giveBackTake(request.id); // the answer never arrived: the server saves nothing of it
        }
      });
  }

  private answerFor(request: IPageRequest): IAnswer | Promise<IAnswer> {
    switch (request.type) {
      case 'take':
        return this.take(request);
      case 'save': {
        const take = this.takes.get(request.take ?? '');
        return take ? this.save(request.take!, take) : { status: 'failed', message: 'no such change here' };
      }
      case 'saved':
        this.learn(request.take ?? '', request.model ?? {});
        return { status: 'done' };
      case 'undo':
        this.giveBackTake(request.take ?? '');
        return { status: 'done' };
      case 'moved':
        this.followInBrowser(request.from ?? '', request.to ?? '');
        for (const move of request.moves ?? []) {
          this.follow(move.from, move.to);
        }
        return { status: 'done' };
      default:
        return { status: 'done' };
    }
  }

  private take(request: IPageRequest): IAnswer | Promise<IAnswer> {
    const contexts = this.open.contextsFor(request.path ?? '');
    if (contexts.length === 0) {
      return { status: 'gone' };
    }
    for (const context of contexts) {
      if (!context.isReady) {
        return { status: 'busy' };
      }
      if (context.model.dirty) {
        return { status: 'unsaved' };
      }
      if (!sameFile(context.contentsModel, request.expect)) {
        return { status: 'changed' };
      }
    }
    const changes: ITake['changes'] = [];
    try {
      for (const context of contexts) {
        changes.push({ context, change: applyContent(context.model, request.content ?? '') });
      }
    } catch (error) {
      changes.forEach(({ change }) => giveBack(change));
      return { status: 'failed', message: `the change could not be applied: ${error}` };
    }
    const now = Date.now();
    for (const [id, old] of this.takes) {
      if (now - old.at > TAKE_KEPT_MS) {
        this.takes.delete(id);
      }
    }
    const take: ITake = { path: request.path ?? '', notebook: !!request.notebook, changes, at: now };
    this.takes.set(request.id, take);
    if (request.save) {
      return this.save(request.id, take);
    }
    return { status: 'taken', canSave: contexts.some(c => c.canSave) };
  }

  /**
   * Save a taken change through one document's own context. The save starts in this turn, so
   * the document it writes is the one checked (`exact`); the page's other documents of the path
   * learn the saved file.
   */
  private async save(id: string, take: ITake): Promise<IAnswer> {
    const live = take.changes.filter(({ context }) => !context.isDisposed);
    const saver =
      live.find(({ context, change }) => context.canSave && change.notebook === take.notebook) ??
      live.find(({ context }) => context.canSave) ??
      live[0];
    if (!saver) {
      this.takes.delete(id);
      return { status: 'failed', message: 'the document was closed' };
    }
    const exact = snapshot(saver.context.model) === saver.change.after;
    try {
      await saver.context.save();
    } catch (error) {
      this.giveBackTake(id);
      return { status: 'failed', message: String((error as Error)?.message ?? error) };
    }
    const model = { ...(saver.context.contentsModel ?? {}) } as Record<string, any>;
    if (exact) {
      this.learn(id, model);
    }
    this.takes.delete(id);
    return { status: 'saved', exact, model };
  }

  /** The file of take `id` was saved as `model`: every document that still holds exactly the
   * change learns it and is clean again; one with typing since stays unsaved, on the saved file. */
  private learn(id: string, model: Record<string, any>): void {
    const take = this.takes.get(id);
    if (!take) {
      return;
    }
    this.takes.delete(id);
    this.files.saved(take.path, model);
    for (const { context, change } of take.changes) {
      if (!context.isDisposed && snapshot(context.model) === change.after) {
        context.model.dirty = false;
      }
    }
  }

  private giveBackTake(id: string): void {
    const take = this.takes.get(id);
    if (!take) {
      return;
    }
    this.takes.delete(id);
    for (const { context, change } of take.changes) {
      if (!context.isDisposed) {
        giveBack(change);
      }
    }
  }

  /** A tool moved the file at `from` to `to`: this page's documents of it follow. */
  private follow(from: string, to: string): void {
    const context = this.open.contextsFor(from)[0];
    if (context) {
      const model = context.contentsModel;
      this.files.renamed(from, to, model ? { created: model.created } : {});
    }
  }

  /**
   * The file browser shows a folder that was moved (or one inside it): it goes to the folder's
   * new place, rather than asking for the old one and saying "Directory not found".
   */
  private followInBrowser(from: string, to: string): void {
    const model = this.browser?.model;
    if (!model || !from || !to) {
      return;
    }
    const here = model.path;
    if (here === from || here.startsWith(from + '/')) {
      void model.cd('/' + to + here.slice(from.length)).catch(() => undefined);
    }
  }

  private readonly link = new PageLink();
  private readonly files: FileChanges;
  private readonly open: OpenDocuments;
  private readonly takes = new Map<string, ITake>();
  private reporting: Promise<void> = Promise.resolve();
  private lastReport = '';
  private scheduled = false;
  private stopped = false;
}

/** Whether a document's idea of its file is the file on disk the server describes. */
export function sameFile(
  model: { hash?: string | null; last_modified?: string } | null | undefined,
  expect: IPageRequest['expect']
): boolean {
  if (!model || !expect) {
    return false;
  }
  if (model.hash && expect.hash) {
    return model.hash === expect.hash;
  }
  if (!model.last_modified || !expect.last_modified) {
    return false;
  }
  return (
    model.last_modified === expect.last_modified ||
    new Date(model.last_modified).getTime() === new Date(expect.last_modified).getTime()
  );
}
