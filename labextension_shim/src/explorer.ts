/**
 * The sidebar's explorer: one folder's listing from `list` through the REST API
 * (`{path, offset, details: true}`), a page at a time as the tool pages it, with a breadcrumb,
 * a filter over the names of the page on screen, and the tool's footer. Another order (name,
 * size, modification time, either way) is asked of `GET browse`, which sorts the whole folder
 * as the notebook widgets do; those pages are not tool calls and have no model footer.
 *
 * It follows the file browser: when "Follow the file browser" is on (the default), a folder
 * opened there is listed here. A folder clicked here is listed here; a file clicked opens in
 * JupyterLab. The listing is asked again each time the section comes on screen, and while it is
 * on screen it asks every POLL_MS whether the folder's stamp changed (one `fstat` on the
 * server, nothing logged): a changed folder is listed again by itself.
 *
 * Its status counts with separators and plurals (`common/format.ts`) and names the order the rows
 * are in, reversed ones included. Rows are one tab stop: the arrow keys, Home and End move between
 * them, so the pager is a few Tabs away, not one per row.
 */

import { IDocumentManager } from '@jupyterlab/docmanager';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { fileIcon, folderIcon } from '@jupyterlab/ui-components';

import { ApiError, browse, callTool, IPage, IToolResult } from './api';
import { fill, h } from './common/dom';
import { SIDEBAR_SIZES, formatCount, humanSize, plural } from './common/format';
import { pager } from './pager';
import { openTarget } from './open';

export interface IEntry {
  name: string;
  type: string;
  size?: number | null;
  mtime?: number | null;
}

export interface IListValue extends IPage {
  path: string;
  offset?: number;
  entries: IEntry[];
  totalEntries: number;
  counts?: { directories: number; files: number; other: number };
  hiddenEntries?: number;
}

/** How often the explorer on screen asks whether its folder changed. */
export const POLL_MS = 2000;
const PAGE = 200;
const FILTER_MS = 250; // the name filter asks the server this long after the last keystroke

const SORTS: [string, string][] = [
  ['model', "the model's order"],
  ['name', 'name'],
  ['size', 'size'],
  ['modified', 'modified']
];

/** What the rows of a `list` page are: `210 entries: 5 folders, 205 files`, `1 entry: 1 file`. */
export function entriesStatus(
  total: number,
  counts?: { directories: number; files: number; other: number }
): string {
  const parts = counts
    ? [
        counts.directories ? plural(counts.directories, 'folder', 'folders') : '',
        counts.files ? plural(counts.files, 'file', 'files') : '',
        counts.other ? `${formatCount(counts.other)} other` : ''
      ].filter(Boolean)
    : [];
  return plural(total, 'entry', 'entries') + (parts.length ? `: ${parts.join(', ')}` : '');
}

/**
 * What the rows of a page in another order are: `entries 1-200 of 50,000, by size, descending`,
 * `entries 1-10 of 10 matching "file-01", by the model's order, reversed`, `no entries matching "x"`.
 */
export function pageStatus(
  offset: number,
  shown: number,
  total: number,
  needle: string,
  sort: string,
  descending: boolean
): string {
  const label = SORTS.find(([v]) => v === sort)?.[1] ?? sort;
  const order =
    sort === 'model'
      ? descending
        ? `${label}, reversed`
        : label
      : `${label}, ${descending ? 'descending' : 'ascending'}`;
  const matching = needle ? ` matching "${needle}"` : '';
  if (!shown) {
    return `no entries${matching}`;
  }
  const last = offset + shown - 1;
  const span = shown === 1 ? `entry ${formatCount(offset)}` : `entries ${formatCount(offset)}-${formatCount(last)}`;
  return `${span} of ${formatCount(total)}${matching}, by ${order}`;
}

/** A folder relative to the root, as the file browser names it ('' is the root). */
function join(folder: string, name: string): string {
  return folder ? `${folder}/${name}` : name;
}

export class ExplorerView {
  readonly node: HTMLElement;
  private readonly crumbs: HTMLElement;
  private readonly filter: HTMLInputElement;
  private readonly follow: HTMLInputElement;
  private readonly status: HTMLElement;
  private readonly list: HTMLElement;
  private readonly footer: HTMLElement;
  private readonly prev: HTMLButtonElement;
  private readonly next: HTMLButtonElement;
  private readonly pager: HTMLElement;
  private folder = '';
  private offset = 1;
  private offsets: number[] = [];
  private nextAt: number | null = null;
  private entries: IEntry[] = [];
  private seq = 0;
  private visible = false;
  private readonly sort: HTMLSelectElement;
  private readonly direction: HTMLButtonElement;
  private descending = false;
  private stamp: string | null = null; // the folder's stamp when its page was fetched
  private timer: number | null = null;
  private filterTimer: number | null = null;

  constructor(
    private readonly docManager: IDocumentManager,
    private readonly session: string,
    private readonly browser: IDefaultFileBrowser | null
  ) {
    this.crumbs = h('nav', { class: 'dsh-sb-crumbs', 'aria-label': 'Folder' });
    this.filter = h('input', {
      class: 'dsh-sb-filter jp-mod-styled',
      type: 'search',
      placeholder: 'Filter names (the whole folder)',
      'aria-label': 'Filter names',
      oninput: () => {
        this.renderEntries(); // at once, over the page on screen; then over the whole folder
        if (this.filterTimer !== null) {
          window.clearTimeout(this.filterTimer);
        }
        this.filterTimer = window.setTimeout(() => {
          this.filterTimer = null;
          this.offsets = [];
          void this.load(1);
        }, FILTER_MS);
      }
    });
    this.follow = h('input', {
      class: 'dsh-sb-follow',
      id: 'dsh-sb-follow',
      type: 'checkbox',
      checked: true,
      onchange: () => {
        if (this.follow.checked && this.browser) {
          this.go(this.browser.model.path);
        }
      }
    });
    this.sort = h(
      'select',
      {
        class: 'dsh-sb-sort jp-mod-styled',
        id: 'dsh-sb-sort',
        title: 'the order of the whole folder',
        onchange: () => {
          this.offsets = [];
          void this.load(1);
        }
      },
      ...SORTS.map(([value, label]) => h('option', { value }, label))
    );
    this.direction = h(
      'button',
      {
        class: 'dsh-sb-direction jp-mod-styled',
        'aria-label': 'Reverse the order',
        'aria-pressed': 'false',
        title: 'reverse the order',
        onclick: () => {
          this.descending = !this.descending;
          this.direction.textContent = this.descending ? '↓' : '↑';
          this.direction.setAttribute('aria-pressed', String(this.descending));
          this.offsets = [];
          void this.load(1);
        }
      },
      '↑'
    );
    this.status = h('div', { class: 'dsh-sb-status', 'aria-live': 'polite' });
    this.list = h('div', {
      class: 'dsh-sb-entries',
      role: 'list',
      'aria-label': 'Entries',
      onkeydown: (event: KeyboardEvent) => this.onListKey(event)
    });
    this.footer = h('div', { class: 'dsh-sb-footer' });
    ({ prev: this.prev, next: this.next, node: this.pager } = pager(direction => this.page(direction)));
    this.node = h(
      'div',
      { class: 'dsh-sb-explorer' },
      this.crumbs,
      h('div', { class: 'dsh-sb-row' }, this.filter),
      h(
        'div',
        { class: 'dsh-sb-row dsh-sb-order' },
        h('label', { class: 'dsh-sb-label', for: 'dsh-sb-sort' }, 'Order'),
        this.sort,
        this.direction
      ),
      browser
        ? h(
            'div',
            { class: 'dsh-sb-row dsh-sb-follow-row' },
            this.follow,
            h('label', { class: 'dsh-sb-follow-label', for: 'dsh-sb-follow' }, 'Follow the file browser')
          )
        : null,
      this.status,
      this.list,
      this.footer,
      this.pager
    );
    if (browser) {
      this.folder = browser.model.path;
      browser.model.pathChanged.connect((_, change) => {
        if (this.follow.checked) {
          this.go(change.newValue ?? '');
        }
      });
    }
  }

  setVisible(visible: boolean): void {
    this.visible = visible;
    if (visible) {
      void this.load(this.offset);
      if (this.timer === null) {
        this.timer = window.setInterval(() => void this.poll(), POLL_MS);
      }
    } else if (this.timer !== null) {
      window.clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** List the folder again when its stamp moved since its page was fetched (on screen only). */
  private async poll(): Promise<void> {
    if (!this.visible || document.hidden || this.node.hasAttribute('aria-busy') || this.stamp === null) {
      return;
    }
    const seq = this.seq;
    try {
      const now = await browse({ path: this.folder || '.', limit: 0, session: this.session });
      if (seq === this.seq && JSON.stringify(now.stamp) !== this.stamp) {
        void this.load(this.offset);
      }
    } catch {
      // the next poll asks again; a folder that went away shows its error on the next load
    }
  }

  /** List `folder` from its first page. */
  go(folder: string): void {
    this.folder = folder.replace(/^\/+|\/+$/g, '');
    this.offsets = [];
    this.filter.value = '';
    if (this.visible) {
      void this.load(1);
    } else {
      this.offset = 1; // listed when the section comes on screen
    }
  }

  private page(direction: 1 | -1): void {
    if (direction === 1 && this.nextAt !== null) {
      this.offsets.push(this.offset);
      void this.load(this.nextAt);
    } else if (direction === -1 && this.offsets.length) {
      void this.load(this.offsets.pop()!);
    }
  }

  private async load(offset: number): Promise<void> {
    if (this.sort.value !== 'model' || this.descending || this.filter.value.trim()) {
      return this.loadSorted(offset);
    }
    const seq = ++this.seq;
    const folder = this.folder;
    this.offset = offset;
    this.renderCrumbs();
    this.node.setAttribute('aria-busy', 'true');
    void this.rememberStamp(seq, folder);
    let result: IToolResult<IListValue>;
    try {
      result = await callTool<IListValue>(
        'list',
        { path: folder || '.', offset, details: true },
        this.session
      );
    } catch (error) {
      if (seq === this.seq) {
        this.node.removeAttribute('aria-busy');
        this.show(error instanceof ApiError ? `${error.status} ${error.code}: ${error.message}` : String(error), [], '');
      }
      return;
    }
    if (seq !== this.seq) {
      return; // another folder or page was asked for meanwhile
    }
    this.node.removeAttribute('aria-busy');
    if (result.isError) {
      this.show(result.text, [], '');
      return;
    }
    const value = result.value;
    const footer = value.footer;
    this.nextAt = value.nextOffset;
    this.show(entriesStatus(value.totalEntries, value.counts), value.entries ?? [], footer);
  }

  /** The folder's stamp as it is now, kept for the polls (asked before the page: never newer). */
  private async rememberStamp(seq: number, folder: string): Promise<void> {
    try {
      const now = await browse({ path: folder || '.', limit: 0, session: this.session });
      if (seq === this.seq) {
        this.stamp = JSON.stringify(now.stamp);
      }
    } catch {
      this.stamp = null;
    }
  }

  /** A page of the whole folder in another order (`GET browse`: not a tool call, no footer). */
  private async loadSorted(offset: number): Promise<void> {
    const seq = ++this.seq;
    const folder = this.folder;
    this.offset = offset;
    this.renderCrumbs();
    this.node.setAttribute('aria-busy', 'true');
    const sort = this.sort.value;
    try {
      const needle = this.filter.value.trim();
      const value = await browse({
        path: folder || '.',
        offset,
        limit: PAGE,
        sort,
        descending: this.descending,
        filter: needle,
        session: this.session
      });
      if (seq !== this.seq) {
        return;
      }
      this.node.removeAttribute('aria-busy');
      this.stamp = JSON.stringify(value.stamp);
      const entries = value.entries ?? [];
      const total = value.matchedEntries ?? value.totalEntries ?? entries.length;
      const last = offset + entries.length - 1;
      const nextAt = last < total ? last + 1 : null;
      const status = pageStatus(offset, entries.length, total, needle, sort, this.descending);
      this.show(status, entries, ''); // no model footer: these pages are not tool calls
      this.nextAt = nextAt;
      this.next.disabled = nextAt === null;
      this.pager.hidden = this.prev.disabled && this.next.disabled;
    } catch (error) {
      if (seq === this.seq) {
        this.node.removeAttribute('aria-busy');
        this.show(error instanceof ApiError ? `${error.status} ${error.code}: ${error.message}` : String(error), [], '');
      }
    }
  }

  private show(status: string, entries: IEntry[], footer: string): void {
    this.status.textContent = status;
    this.entries = entries;
    this.footer.textContent = footer;
    if (!footer) {
      this.nextAt = null;
    }
    this.prev.disabled = this.offsets.length === 0;
    this.next.disabled = this.nextAt === null;
    this.pager.hidden = this.prev.disabled && this.next.disabled;
    this.renderEntries();
  }

  private renderCrumbs(): void {
    const parts = this.folder ? this.folder.split('/') : [];
    const crumb = (label: string, path: string, current: boolean): HTMLElement =>
      h(
        'button',
        {
          class: 'dsh-sb-crumb',
          'data-path': path,
          'aria-current': current ? 'location' : null,
          onclick: () => this.go(path)
        },
        label
      );
    const items: HTMLElement[] = [crumb('root', '', parts.length === 0)];
    parts.forEach((part, i) => {
      items.push(h('span', { class: 'dsh-sb-crumb-sep' }, '/'));
      items.push(crumb(part, parts.slice(0, i + 1).join('/'), i === parts.length - 1));
    });
    fill(this.crumbs, ...items);
  }

  private renderEntries(): void {
    const needle = this.filter.value.trim().toLowerCase();
    const shown = needle ? this.entries.filter(e => e.name.toLowerCase().includes(needle)) : this.entries;
    fill(this.list, ...shown.map((entry, i) => this.row(entry, i === 0)));
    if (needle) {
      this.list.setAttribute('data-filtered', `${shown.length} of ${this.entries.length}`);
    } else {
      this.list.removeAttribute('data-filtered');
    }
  }

  /** Up and down, Home and End between the rows: the one focused becomes the rows' tab stop. */
  private onListKey(event: KeyboardEvent): void {
    const rows = Array.from(this.list.querySelectorAll<HTMLElement>('.dsh-sb-entry'));
    const at = rows.indexOf(event.target as HTMLElement);
    if (at < 0) {
      return;
    }
    const to =
      event.key === 'ArrowDown'
        ? Math.min(at + 1, rows.length - 1)
        : event.key === 'ArrowUp'
          ? Math.max(at - 1, 0)
          : event.key === 'Home'
            ? 0
            : event.key === 'End'
              ? rows.length - 1
              : null;
    if (to === null) {
      return;
    }
    event.preventDefault();
    rows[at].tabIndex = -1;
    rows[to].tabIndex = 0;
    rows[to].focus();
  }

  private row(entry: IEntry, first: boolean): HTMLElement {
    const folder = entry.type === 'directory';
    const path = join(this.folder, entry.name);
    const icon = (folder ? folderIcon : fileIcon).element({ tag: 'span', className: 'dsh-sb-icon' });
    const when = entry.mtime ? new Date(entry.mtime * 1000).toLocaleString() : '';
    return h(
      'div',
      {
        class: `dsh-sb-entry${folder ? ' dsh-sb-dir' : ''}`,
        role: 'listitem',
        tabindex: first ? 0 : -1,
        'data-name': entry.name,
        title: when ? `${path}\nmodified ${when}` : path,
        onclick: () => this.open(entry, path),
        onkeydown: (event: KeyboardEvent) => {
          if (event.key === 'Enter') {
            this.open(entry, path);
          }
        }
      },
      icon,
      h('span', { class: 'dsh-sb-name' }, folder ? `${entry.name}/` : entry.name),
      !folder && typeof entry.size === 'number' ? h('span', { class: 'dsh-sb-size' }, humanSize(entry.size, SIDEBAR_SIZES)) : null
    );
  }

  private open(entry: IEntry, path: string): void {
    if (entry.type === 'directory') {
      this.follow.checked = false; // browsing here now; the file browser is not followed
      this.go(path);
    } else {
      void openTarget(this.docManager, { path });
    }
  }
}
