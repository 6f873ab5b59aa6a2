/**
 * Telling this page's document contexts that a file changed on the server: moved (a tool moved
 * it) or saved by another page (its new last-modified time and hash).
 *
 * JupyterLab's document `Context` listens to the contents manager's `fileChanged` signal and
 * follows a `rename` whose old path is its own (`_onFileChanged` in @jupyterlab/docregistry's
 * context.ts): it takes the new path (the tab's title, the kernel session's path, its next save)
 * and merges the new value into its contents model. The supported way to emit that signal for a
 * change made on the server is a content provider (JupyterLab 4.4+): a provider registered on the
 * default drive's `contentProviderRegistry` may emit `fileChanged` "to communicate a change in the
 * file contents" for "save operations initiated on the backend"; the drive forwards it to the
 * contents manager, which forwards it to every context. This one serves no contents (no widget
 * factory names it) and only emits. On an older JupyterLab the contents manager's own signal is
 * emitted instead.
 *
 * A rename of a path onto itself, with the saved file's `last_modified` and `hash`, is how a page
 * that did not save learns the file another page saved, so its next save meets no "File Changed"
 * dialog. JupyterLab's contexts treat every context whose path merely starts with the renamed
 * path (`notes.txt.bak` for `notes.txt`) as inside a renamed folder and set its last-modified
 * time to the new value's `created`, as they do for JupyterLab's own renames; `created` is
 * therefore always sent (the file's change time, which after a save is the save's), so such a
 * neighbour gets a real date, and its hash, which JupyterLab checks first, is left alone.
 */

import { PathExt } from '@jupyterlab/coreutils';
import type { Contents } from '@jupyterlab/services';
import { Signal } from '@lumino/signaling';

/** The id this page's provider is registered under on the default drive. */
export const PROVIDER_ID = 'dsh-jupyter-file-changes';

/** The contents model fields a rename carries. */
export type IFileModel = Partial<Contents.IModel>;

export class FileChanges {
  constructor(contents: Contents.IManager) {
    const registry = (contents as any).defaultDrive?.contentProviderRegistry;
    if (registry && typeof registry.register === 'function') {
      try {
        registry.register(PROVIDER_ID, this);
        this._signal = this._fileChanged;
        return;
      } catch {
        // registered already (a second instance in one page): fall through
      }
    }
    const signal = contents.fileChanged as unknown;
    this._signal = signal instanceof Signal ? signal : null;
  }

  /** The content provider's signal (what the drive forwards). */
  get fileChanged(): Signal<FileChanges, Contents.IChangedArgs> {
    return this._fileChanged;
  }

  /** A content provider must fetch and save; this one is never chosen to. */
  get(): Promise<Contents.IModel> {
    return Promise.reject(new Error(`${PROVIDER_ID} serves no contents`));
  }

  save(): Promise<Contents.IModel> {
    return Promise.reject(new Error(`${PROVIDER_ID} saves no contents`));
  }

  /** Whether this page can tell its contexts anything (false on a contents manager without signals). */
  get works(): boolean {
    return this._signal !== null;
  }

  /** The file at `from` is now at `to` (a model's fields ride along: `last_modified`, `hash`). */
  renamed(from: string, to: string, model: IFileModel = {}): void {
    const newValue: IFileModel = { ...model, path: to, name: PathExt.basename(to) };
    this._signal?.emit({ type: 'rename', oldValue: { path: from }, newValue } as Contents.IChangedArgs);
  }

  /** The file at `path` was saved by someone else with this `model` (its new time and hash). */
  saved(path: string, model: IFileModel): void {
    this.renamed(path, path, {
      last_modified: model.last_modified,
      created: model.created ?? model.last_modified,
      hash: model.hash,
      hash_algorithm: model.hash_algorithm
    });
  }

  private _fileChanged = new Signal<FileChanges, Contents.IChangedArgs>(this);
  private _signal: Signal<any, Contents.IChangedArgs> | null = null;
}
