/**
 * The activity section's "Open in JupyterLab": the files a person has open now, from
 * `GET dsh/api/documents`, so the agent's calls can be read against what the person is working on.
 *
 * - One row per file, by path: the path, a count when more than one tab has it open, and a dot
 *   (●, as on JupyterLab's own tab of an unsaved document) when a tab holds unsaved changes.
 *   A shared document (real-time collaboration) has no dot: its unsaved typing is in the document
 *   the agent's tools read. A click brings the file's tab forward (or opens it).
 * - It is refreshed by the activity section's own poll (`refresh`), and only redrawn when the
 *   answer changed, so a row under the pointer stays put.
 * - The marks of the agent's calls on an open file (`openBadge`) live here too: one vocabulary.
 */

import { IDocumentManager } from '@jupyterlab/docmanager';

import { ApiError, ICall, IOpenFile, IOpenFiles, openFiles } from './api';
import { fill, h } from './common/dom';

/** A call's mark and its tooltip, by how its file was open when it ran. */
const CALL_MARKS: Record<string, [string, string]> = {
  shared: ['open', 'The file was open in JupyterLab as a shared document: the call went through it'],
  tab: ['open', 'The file was open in a JupyterLab tab'],
  unsaved: ['open, unsaved', 'The file was open in a JupyterLab tab with unsaved changes']
};

/** The mark of a call on a file that was open in JupyterLab, or null. */
export function openBadge(call: ICall): HTMLElement | null {
  const mark = call.open ? CALL_MARKS[call.open] : undefined;
  if (!mark) {
    return null;
  }
  return h('span', { class: 'dsh-sb-badge-open', title: mark[1] }, mark[0]);
}

function describe(file: IOpenFile): string {
  const where = file.shared
    ? `a shared document (${file.tabs} connection${file.tabs === 1 ? '' : 's'})`
    : `${file.tabs} tab${file.tabs === 1 ? '' : 's'}`;
  return `${file.path}: open in ${where}${file.unsaved ? ', with unsaved changes' : ''}`;
}

export class OpenFilesView {
  readonly node: HTMLElement;
  private readonly list: HTMLElement;
  private readonly note: HTMLElement;
  private shown = '';
  private busy = false;

  constructor(private readonly docManager: IDocumentManager) {
    this.list = h('div', { class: 'dsh-sb-open-list', role: 'list' });
    this.note = h('div', { class: 'dsh-sb-open-note' });
    this.node = h(
      'section',
      { class: 'dsh-sb-open-files', 'aria-label': 'Open in JupyterLab' },
      h('div', { class: 'dsh-sb-heading' }, 'Open in JupyterLab'),
      this.list,
      this.note
    );
  }

  /** Ask the server what is open now and show it (a refresh already on its way is not doubled). */
  async refresh(): Promise<void> {
    if (this.busy) {
      return;
    }
    this.busy = true;
    try {
      this.show(await openFiles());
    } catch (error) {
      this.shown = '';
      fill(this.list);
      this.note.textContent =
        error instanceof ApiError ? `${error.status} ${error.code}: ${error.message}` : String(error);
    } finally {
      this.busy = false;
    }
  }

  private show(value: IOpenFiles): void {
    const key = JSON.stringify(value);
    if (key === this.shown) {
      return;
    }
    this.shown = key;
    fill(this.list, ...value.files.map(file => this.row(file)));
    const more = value.total - value.files.length;
    this.note.textContent = !value.total ? 'No files open' : more > 0 ? `${more} more not listed` : '';
  }

  private row(file: IOpenFile): HTMLElement {
    return h(
      'div',
      {
        class: 'dsh-sb-open-file',
        role: 'listitem',
        tabindex: 0,
        title: describe(file),
        'data-path': file.path,
        'data-unsaved': file.unsaved ? 'true' : null,
        'data-shared': file.shared ? 'true' : null,
        onclick: () => this.docManager.openOrReveal(file.path),
        onkeydown: (event: KeyboardEvent) => {
          if (event.key === 'Enter') {
            this.docManager.openOrReveal(file.path);
          }
        }
      },
      h('span', { class: 'dsh-sb-path' }, file.path),
      file.tabs > 1 ? h('span', { class: 'dsh-sb-count', title: `${file.tabs} tabs` }, String(file.tabs)) : null,
      file.unsaved ? h('span', { class: 'dsh-sb-unsaved', 'aria-label': 'unsaved changes' }, '●') : null
    );
  }
}
