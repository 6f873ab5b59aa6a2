/**
 * "Go to File…" (`dsh-jupyter:go-to-file`, Ctrl+Alt+P): a palette of `find`'s answers as the
 * person types, the best first; Enter or a click opens the chosen file.
 *
 * Why it exists: a file whose name is half remembered (`wsp hdl` for `server/handlers.py`) is
 * found across the whole workspace, not only in the folder the file browser shows.
 *
 * - Typing waits DEBOUNCE_MS of quiet; a keystroke aborts the request in flight, and an answer
 *   for an older text is dropped by its sequence number.
 * - ↑/↓ (wrapping), Home/End and PageUp/PageDown move the selection; Enter or a click opens the
 *   file in its default viewer (a notebook as a notebook); Escape or a click outside closes the
 *   palette and gives the focus back.
 * - The status line says how many paths match in all (`find`'s `totalPaths`) and how many are
 *   shown. The files the workspace's .gitignore and .ignore files name are left out, as in the
 *   panel's search by default.
 * - ARIA: a modal `dialog` (Tab stays in its box); the box is a `combobox` controlling a `listbox` of `option`s, the
 *   selection named by `aria-activedescendant`; the status line is a polite `status`.
 *
 * What it must never do: open a path the tool did not answer, or reach the disk other than
 * through the tool.
 */

import { IDocumentManager } from '@jupyterlab/docmanager';

import { ApiError, callTool, IPage } from './api';
import { fill, h } from './common/dom';
import { formatCount, plural } from './common/format';
import { openTarget } from './open';

/** The command's id; its key (Accel Alt P, free in JupyterLab 4's defaults) is in schema/sidebar.json. */
export const GO_TO_FILE = 'dsh-jupyter:go-to-file';

/** `find`'s value. */
export interface IFindValue extends IPage {
  query: string;
  paths: string[];
  totalPaths: number;
  offset?: number;
  ignoreFiles?: boolean;
}

export const DEBOUNCE_MS = 120;

/** The status line for an answer: `3 files match`, or `1,234 files match — showing the best 50`. */
export function findHeadline(value: IFindValue): string {
  const total = value.totalPaths ?? 0;
  if (!total) {
    return 'No files match';
  }
  const shown = value.paths?.length ?? 0;
  const whole = `${plural(total, 'file', 'files')} ${total === 1 ? 'matches' : 'match'}`;
  return shown >= total ? whole : `${whole} — showing the best ${formatCount(shown)}`;
}

/**
 * Which characters of `path` a query's words take, for the highlight: each word's letters in
 * order (case ignored), tried first in the file name, then from the start of the path.
 */
export function matchedChars(path: string, query: string): Set<number> {
  const lower = path.toLowerCase();
  const nameAt = path.lastIndexOf('/') + 1;
  const taken = new Set<number>();
  const place = (word: string, from: number): number[] | null => {
    const at: number[] = [];
    let i = from;
    for (const ch of word) {
      const j = lower.indexOf(ch, i);
      if (j < 0) {
        return null;
      }
      at.push(j);
      i = j + ch.length;
    }
    return at;
  };
  for (const word of query.toLowerCase().split(' ').filter(w => w)) {
    const at = place(word, nameAt) ?? place(word, 0) ?? [];
    at.forEach(i => taken.add(i));
  }
  return taken;
}

export class GoToFile {
  private backdrop: HTMLElement | null = null;
  private input!: HTMLInputElement;
  private list!: HTMLElement;
  private status!: HTMLElement;
  private paths: string[] = [];
  private selected = 0;
  private seq = 0;
  private timer: number | undefined;
  private controller: AbortController | null = null;
  private returnFocus: HTMLElement | null = null;

  constructor(
    private readonly docManager: IDocumentManager,
    private readonly session: string
  ) {}

  get isOpen(): boolean {
    return this.backdrop !== null;
  }

  /** Show the palette (again, with its last text selected, when it is already open). */
  open(): void {
    if (this.backdrop) {
      this.input.select();
      return;
    }
    this.returnFocus = document.activeElement as HTMLElement | null;
    this.input = h('input', {
      class: 'dsh-goto-input jp-mod-styled',
      type: 'text',
      placeholder: 'Go to file: type a fragment of its path (e.g. srv hdl)',
      role: 'combobox',
      'aria-label': 'File path fragment',
      'aria-autocomplete': 'list',
      'aria-expanded': 'false',
      'aria-controls': 'dsh-goto-list',
      autocomplete: 'off',
      spellcheck: 'false',
      oninput: () => this.schedule(),
      onkeydown: (event: KeyboardEvent) => this.onKey(event)
    });
    this.status = h('div', { class: 'dsh-goto-status', role: 'status', 'aria-live': 'polite' });
    this.list = h('div', { class: 'dsh-goto-list', id: 'dsh-goto-list', role: 'listbox', 'aria-label': 'Matching files' });
    const dialog = h(
      'div',
      { class: 'dsh-goto', role: 'dialog', 'aria-modal': 'true', 'aria-label': 'Go to File' },
      this.input,
      this.status,
      this.list
    );
    this.backdrop = h(
      'div',
      {
        class: 'dsh-goto-backdrop',
        onmousedown: (event: MouseEvent) => {
          if (event.target === this.backdrop) {
            event.preventDefault();
            this.close();
          }
        }
      },
      dialog
    );
    document.body.append(this.backdrop);
    document.addEventListener('focusin', this.holdFocus, true);
    this.paths = [];
    this.selected = 0;
    this.input.focus();
  }

  /**
   * The palette is modal: while it is open the page behind it (a file browser still finishing
   * the click that came just before the shortcut, as Notebook 7's does) may not take the focus
   * from its box; a click outside closes it instead. A dialog opened over it (a kernel that
   * died, a save to confirm) is modal too and comes first: its focus is left to it.
   */
  private readonly holdFocus = (event: FocusEvent): void => {
    const target = event.target as Element | null;
    if (!this.backdrop || this.backdrop.contains(target)) {
      return;
    }
    if (target?.closest?.('.jp-Dialog, [role="dialog"], [role="alertdialog"]')) {
      return;
    }
    this.input.focus();
  };

  close(): void {
    window.clearTimeout(this.timer);
    this.seq++;
    this.controller?.abort();
    this.controller = null;
    document.removeEventListener('focusin', this.holdFocus, true);
    this.backdrop?.remove();
    this.backdrop = null;
    this.returnFocus?.focus?.();
    this.returnFocus = null;
  }

  private onKey(event: KeyboardEvent): void {
    const count = this.paths.length;
    let to: number | null = null;
    switch (event.key) {
      case 'Escape':
        event.preventDefault();
        event.stopPropagation();
        this.close();
        return;
      case 'Enter':
        event.preventDefault();
        event.stopPropagation();
        if (this.timer !== undefined || this.controller) {
          void this.run(true); // the answer for the text typed, then its best path
        } else if (count) {
          this.choose(this.selected);
        }
        return;
      case 'Tab':
        event.preventDefault(); // a modal palette: the focus stays in its box
        return;
      case 'ArrowDown':
        to = count ? (this.selected + 1) % count : null;
        break;
      case 'ArrowUp':
        to = count ? (this.selected + count - 1) % count : null;
        break;
      case 'PageDown':
        to = count ? Math.min(count - 1, this.selected + 10) : null;
        break;
      case 'PageUp':
        to = count ? Math.max(0, this.selected - 10) : null;
        break;
      default:
        return;
    }
    event.preventDefault();
    if (to !== null) {
      this.select(to);
    }
  }

  private schedule(): void {
    window.clearTimeout(this.timer);
    this.seq++;
    this.controller?.abort();
    this.controller = null;
    this.status.textContent = this.input.value.trim() ? 'Finding…' : '';
    this.list.setAttribute('aria-busy', 'true');
    this.timer = window.setTimeout(() => void this.run(false), DEBOUNCE_MS);
  }

  /** Ask `find` for the text in the box; `openBest`: then open the best path (Enter was pressed). */
  private async run(openBest: boolean): Promise<void> {
    window.clearTimeout(this.timer);
    this.timer = undefined;
    const seq = ++this.seq;
    this.controller?.abort();
    const query = this.input.value;
    if (!query.trim()) {
      this.controller = null;
      this.show([], '', query);
      return;
    }
    const controller = new AbortController();
    this.controller = controller;
    try {
      const result = await callTool<IFindValue>('find', { query }, this.session, controller.signal, undefined, {
        respect_ignore_files: true
      });
      if (seq !== this.seq) {
        return; // stale: the text changed since
      }
      this.controller = null;
      if (result.isError) {
        this.show([], result.text.replace(/^Error: /, ''), query, true);
        return;
      }
      this.show(result.value.paths ?? [], findHeadline(result.value), query);
      if (openBest && this.paths.length) {
        this.choose(0);
      }
    } catch (error) {
      if (seq !== this.seq) {
        return;
      }
      this.controller = null;
      const message = error instanceof ApiError ? `${error.status} ${error.code}: ${error.message}` : String(error);
      this.show([], message, query, true);
    }
  }

  private show(paths: string[], status: string, query: string, failed = false): void {
    if (!this.backdrop) {
      return;
    }
    this.paths = paths;
    this.selected = 0;
    this.status.textContent = status;
    this.status.classList.toggle('dsh-goto-error', failed);
    this.list.removeAttribute('aria-busy');
    fill(this.list, ...paths.map((path, i) => this.option(path, i, query)));
    this.input.setAttribute('aria-expanded', String(paths.length > 0));
    this.select(0);
  }

  private option(path: string, index: number, query: string): HTMLElement {
    const taken = matchedChars(path, query);
    const slash = path.lastIndexOf('/');
    const marked = (from: number, to: number): Node[] => {
      const out: Node[] = [];
      let run = '';
      let inRun = false;
      const flush = (): void => {
        if (run) {
          out.push(inRun ? h('mark', {}, run) : document.createTextNode(run));
        }
        run = '';
      };
      for (let i = from; i < to; i++) {
        if (taken.has(i) !== inRun) {
          flush();
          inRun = taken.has(i);
        }
        run += path[i];
      }
      flush();
      return out;
    };
    return h(
      'div',
      {
        class: 'dsh-goto-option',
        id: `dsh-goto-option-${index}`,
        role: 'option',
        'aria-selected': 'false',
        'data-path': path,
        title: path,
        onmousedown: (event: MouseEvent) => event.preventDefault(), // the box keeps the focus
        onclick: () => this.choose(index)
      },
      h('span', { class: 'dsh-goto-name' }, ...marked(slash + 1, path.length)),
      slash >= 0 ? h('span', { class: 'dsh-goto-folder' }, ...marked(0, slash)) : null
    );
  }

  private select(index: number): void {
    const options = Array.from(this.list.children) as HTMLElement[];
    options.forEach((option, i) => option.setAttribute('aria-selected', String(i === index)));
    this.selected = index;
    const option = options[index];
    if (option) {
      this.input.setAttribute('aria-activedescendant', option.id);
      option.scrollIntoView({ block: 'nearest' });
    } else {
      this.input.removeAttribute('aria-activedescendant');
    }
  }

  private choose(index: number): void {
    const path = this.paths[index];
    if (path === undefined) {
      return;
    }
    this.returnFocus = null; // the opened file takes the focus
    this.close();
    void openTarget(this.docManager, { path });
  }
}
