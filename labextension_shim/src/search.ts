/**
 * The sidebar's search: `grep` through the REST API, as the user types.
 *
 * - Toggles: match case (off sends `ignore_case: true`), whole word (the pattern wrapped as
 *   `\b(?:…)\b`), regex (off: the text escaped for ripgrep's regex syntax); include and exclude
 *   globs; a mode: matching lines, files only (`files_with_matches`) or counts (`count`).
 * - Typing waits 300 ms of quiet before it asks. A keystroke aborts the request in flight (the
 *   server sees the client leave and stops its rg), and an answer that still arrives for an
 *   older search is dropped by its sequence number. The panel is `aria-busy` from the keystroke
 *   until the answer for the text in the box is shown.
 * - Pages are asked in path order (`offset` 1, then the offset the tool's footer names), so page
 *   2 follows page 1; the footer under the results is the tool's own, as the model reads it.
 * - A click on a match opens the file in the editor with the match selected (a notebook: its
 *   cell made active).
 */

import { IDocumentManager } from '@jupyterlab/docmanager';

import { ApiError, callTool, IPage, IToolResult, progress } from './api';
import { fill, h } from './common/dom';
import { pager } from './pager';
import { openTarget } from './open';

/** A match in `grep`'s value (the page shown). */
export interface IGrepMatch {
  path: string;
  line: number;
  text: string;
  submatches?: [number, number][];
  cell?: number | null;
  cellId?: string | null;
  /** A match in the text of the cell's output K (grep's notebook_scope outputs or all). */
  output?: number | null;
}

export interface IGrepValue extends IPage {
  pattern: string;
  matches: IGrepMatch[];
  totalMatches: number;
  files: number;
  filesTotal: number;
  outputMode?: string;
  fileCounts?: { path: string; matches: number }[];
}

export type Mode = 'content' | 'files_with_matches' | 'count';

/** The search's arguments, as the form holds them. */
export interface IQuery {
  text: string;
  matchCase: boolean;
  wholeWord: boolean;
  regex: boolean;
  include: string;
  exclude: string;
  mode: Mode;
}

export const DEBOUNCE_MS = 300;

/** Characters of a line shown before its first match at most (the rest is cut with an ellipsis). */
const LEAD = 24;

/** `text` as a literal in ripgrep's (Rust) regex syntax. */
export function escapeRegex(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$#&\-~]/g, '\\$&');
}

/** The `grep` arguments for a query and a page offset (1-based). */
export function grepArgs(query: IQuery, offset: number): Record<string, unknown> {
  let pattern = query.regex ? query.text : escapeRegex(query.text);
  if (query.wholeWord) {
    pattern = `\\b(?:${pattern})\\b`;
  }
  const args: Record<string, unknown> = { pattern, offset };
  if (!query.matchCase) {
    args.ignore_case = true;
  }
  if (query.include.trim()) {
    args.include = query.include.trim();
  }
  // exclude takes one glob or a list: the field's comma-separated globs
  const excludes = query.exclude
    .split(',')
    .map(glob => glob.trim())
    .filter(glob => glob);
  if (excludes.length) {
    args.exclude = excludes.length === 1 ? excludes[0] : excludes;
  }
  if (query.mode !== 'content') {
    args.output_mode = query.mode;
  }
  return args;
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

const STOP_AFTER_MS = 1000; // a search running longer than this can be stopped and says how far it got
const PROGRESS_MS = 500;

export class SearchView {
  readonly node: HTMLElement;
  private readonly input: HTMLInputElement;
  private readonly include: HTMLInputElement;
  private readonly exclude: HTMLInputElement;
  private readonly mode: HTMLSelectElement;
  private readonly toggles: Record<'matchCase' | 'wholeWord' | 'regex', HTMLButtonElement>;
  private readonly status: HTMLElement;
  private readonly results: HTMLElement;
  private readonly footer: HTMLElement;
  private readonly prev: HTMLButtonElement;
  private readonly next: HTMLButtonElement;
  private readonly pager: HTMLElement;
  private readonly stop: HTMLButtonElement;
  private watch: number | undefined; // the running search's stop button and progress polls
  private timer: number | undefined;
  private seq = 0;
  private controller: AbortController | null = null;
  /** Offsets of the pages before this one, for "previous". */
  private offsets: number[] = [];
  private offset = 1;
  private nextAt: number | null = null;

  constructor(
    private readonly docManager: IDocumentManager,
    private readonly session: string
  ) {
    const toggle = (label: string, title: string, cls: string): HTMLButtonElement =>
      h(
        'button',
        {
          class: `dsh-sb-toggle ${cls}`,
          title,
          'aria-label': title,
          'aria-pressed': 'false',
          onclick: (event: Event) => {
            const button = event.currentTarget as HTMLButtonElement;
            const on = button.getAttribute('aria-pressed') !== 'true';
            button.setAttribute('aria-pressed', String(on));
            this.search();
          }
        },
        label
      );
    this.toggles = {
      matchCase: toggle('Aa', 'Match case', 'dsh-sb-case'),
      wholeWord: toggle('ab', 'Match whole word', 'dsh-sb-word'),
      regex: toggle('.*', 'Use regular expression', 'dsh-sb-regex')
    };
    const onType = (): void => this.schedule();
    this.input = h('input', {
      class: 'dsh-sb-pattern jp-mod-styled',
      type: 'search',
      placeholder: 'Search (grep)',
      'aria-label': 'Search pattern',
      oninput: onType,
      onkeydown: (event: KeyboardEvent) => {
        if (event.key === 'Enter') {
          this.search();
        }
      }
    });
    this.include = h('input', {
      class: 'dsh-sb-include jp-mod-styled',
      type: 'text',
      placeholder: 'files to include: one glob, e.g. *.{py,md}',
      'aria-label': 'Files to include',
      oninput: onType
    });
    this.exclude = h('input', {
      class: 'dsh-sb-exclude jp-mod-styled',
      type: 'text',
      placeholder: 'files to exclude: globs, e.g. tests/**, *.min.js',
      'aria-label': 'Files to exclude',
      oninput: onType
    });
    this.mode = h(
      'select',
      { class: 'dsh-sb-mode jp-mod-styled', 'aria-label': 'Result mode', onchange: () => this.search() },
      h('option', { value: 'content' }, 'Matching lines'),
      h('option', { value: 'files_with_matches' }, 'Files only'),
      h('option', { value: 'count' }, 'Counts, most first')
    );
    this.status = h('div', { class: 'dsh-sb-status', 'aria-live': 'polite' });
    this.stop = h(
      'button',
      {
        class: 'dsh-sb-stop jp-mod-styled',
        hidden: true,
        title: 'stop this search (the server kills its rg)',
        onclick: () => {
          this.seq++;
          this.controller?.abort();
          this.controller = null;
          this.unwatch();
          this.node.removeAttribute('aria-busy');
          this.show('Stopped before it finished', [], '');
        }
      },
      '■ Stop'
    );
    this.results = h('div', { class: 'dsh-sb-results' });
    this.footer = h('div', { class: 'dsh-sb-footer' });
    ({ prev: this.prev, next: this.next, node: this.pager } = pager(direction => this.page(direction)));
    this.node = h(
      'div',
      { class: 'dsh-sb-search' },
      h(
        'div',
        { class: 'dsh-sb-row' },
        this.input,
        this.toggles.matchCase,
        this.toggles.wholeWord,
        this.toggles.regex
      ),
      h('div', { class: 'dsh-sb-row' }, this.include),
      h('div', { class: 'dsh-sb-row' }, this.exclude),
      h('div', { class: 'dsh-sb-row' }, this.mode),
      h('div', { class: 'dsh-sb-row' }, this.status, this.stop),
      this.results,
      this.footer,
      this.pager
    );
  }

  focus(): void {
    this.input.focus();
  }

  query(): IQuery {
    const pressed = (b: HTMLButtonElement): boolean => b.getAttribute('aria-pressed') === 'true';
    return {
      text: this.input.value,
      matchCase: pressed(this.toggles.matchCase),
      wholeWord: pressed(this.toggles.wholeWord),
      regex: pressed(this.toggles.regex),
      include: this.include.value,
      exclude: this.exclude.value,
      mode: this.mode.value as Mode
    };
  }

  /**
   * Search after the typing pauses. The search in flight, if any, is for a text that is gone:
   * it is aborted now, and the panel is busy until the new one answers.
   */
  private schedule(): void {
    window.clearTimeout(this.timer);
    this.seq++;
    this.controller?.abort();
    this.controller = null;
    this.node.setAttribute('aria-busy', 'true');
    this.timer = window.setTimeout(() => this.search(), DEBOUNCE_MS);
  }

  /** A new search from its first page. */
  private search(): void {
    window.clearTimeout(this.timer);
    this.offsets = [];
    void this.run(1);
  }

  private page(direction: 1 | -1): void {
    if (direction === 1 && this.nextAt !== null) {
      this.offsets.push(this.offset);
      void this.run(this.nextAt);
    } else if (direction === -1 && this.offsets.length) {
      void this.run(this.offsets.pop()!);
    }
  }

  private async run(offset: number): Promise<void> {
    const seq = ++this.seq;
    this.controller?.abort();
    this.controller = null;
    const query = this.query();
    this.offset = offset;
    this.nextAt = null;
    if (!query.text) {
      this.node.removeAttribute('aria-busy');
      this.show('', [], '');
      return;
    }
    const controller = new AbortController();
    this.controller = controller;
    this.node.setAttribute('aria-busy', 'true');
    const progressId = `sidebar-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
    this.watchRunning(seq, progressId);
    let result: IToolResult<IGrepValue>;
    try {
      result = await callTool<IGrepValue>(
        'grep',
        grepArgs(query, offset),
        this.session,
        controller.signal,
        progressId
      );
    } catch (error) {
      if (seq !== this.seq) {
        return; // a newer search started; this one was aborted or is stale
      }
      this.unwatch();
      this.node.removeAttribute('aria-busy');
      const message = error instanceof ApiError ? `${error.status} ${error.code}: ${error.message}` : String(error);
      this.show('', [h('div', { class: 'dsh-sb-error' }, message)], '');
      return;
    }
    if (seq !== this.seq) {
      return; // stale: a newer search started while this one ran
    }
    this.unwatch();
    this.controller = null;
    this.node.removeAttribute('aria-busy');
    this.render(result, query);
  }

  /**
   * A search still running after STOP_AFTER_MS shows "■ Stop", and every PROGRESS_MS the status
   * line says how far it got ("Searching… 1,204 matches in 310 files so far"), asked of
   * `GET progress/{id}` with the id it was posted with.
   */
  private watchRunning(seq: number, progressId: string): void {
    this.unwatch();
    const started = Date.now();
    this.watch = window.setInterval(() => {
      if (seq !== this.seq) {
        this.unwatch();
        return;
      }
      if (Date.now() - started < STOP_AFTER_MS) {
        return;
      }
      this.stop.hidden = false;
      void progress(progressId).then(
        now => {
          if (seq === this.seq && now.running) {
            this.status.textContent = `Searching… ${now.progress ?? 'nothing found yet'}`;
          }
        },
        () => undefined // the answer itself will say what went wrong
      );
    }, PROGRESS_MS);
  }

  private unwatch(): void {
    window.clearInterval(this.watch);
    this.watch = undefined;
    this.stop.hidden = true;
  }

  private show(status: string, rows: Node[], footer: string): void {
    this.status.textContent = status;
    fill(this.results, ...rows);
    this.footer.textContent = footer;
    this.prev.disabled = this.offsets.length === 0;
    this.next.disabled = this.nextAt === null;
    this.pager.hidden = this.prev.disabled && this.next.disabled;
  }

  private render(result: IToolResult<IGrepValue>, query: IQuery): void {
    if (result.isError) {
      this.show('', [h('div', { class: 'dsh-sb-error' }, result.text)], '');
      return;
    }
    const value = result.value;
    const footer = value.footer;
    this.nextAt = value.nextOffset;
    const total = value.totalMatches ?? 0;
    const files = value.filesTotal ?? 0;
    if (!total) {
      this.show('No matches', [], footer);
      return;
    }
    const status = `${count(total, 'match', 'matches')} in ${count(files, 'file', 'files')}`;
    const rows =
      query.mode === 'content' ? this.matchRows(value.matches ?? []) : this.fileRows(value.fileCounts ?? []);
    this.show(status, rows, footer);
  }

  /** Matches grouped by file (the page is in path order, so a file's matches are together). */
  private matchRows(matches: IGrepMatch[]): Node[] {
    const groups: { path: string; matches: IGrepMatch[] }[] = [];
    for (const m of matches) {
      const last = groups[groups.length - 1];
      if (last && last.path === m.path) {
        last.matches.push(m);
      } else {
        groups.push({ path: m.path, matches: [m] });
      }
    }
    return groups.map(group =>
      h(
        'div',
        { class: 'dsh-sb-file', 'data-path': group.path },
        h(
          'div',
          { class: 'dsh-sb-file-head', title: group.path, onclick: () => this.open(group.matches[0]) },
          h('span', { class: 'dsh-sb-path' }, group.path),
          h('span', { class: 'dsh-sb-count' }, String(group.matches.length))
        ),
        ...group.matches.map(m => this.matchRow(m))
      )
    );
  }

  private matchRow(m: IGrepMatch): HTMLElement {
    const where =
      typeof m.cell !== 'number'
        ? String(m.line)
        : typeof m.output === 'number'
          ? `Cell ${m.cell}, output ${m.output}, line ${m.line}`
          : `Cell ${m.cell}, line ${m.line}`;
    const text = h('span', { class: 'dsh-sb-text' });
    // Leading indentation is dropped, and a match far into a long line is shown with a little
    // of what comes before it, so that the match itself is in view.
    const spans = m.submatches ?? [];
    let at = m.text.length - m.text.trimStart().length;
    if (spans.length && spans[0][0] - at > LEAD) {
      at = spans[0][0] - LEAD / 2;
      text.append('…');
    }
    for (const [start, end] of spans) {
      if (start < at || end > m.text.length) {
        continue;
      }
      text.append(m.text.slice(at, start), h('mark', {}, m.text.slice(start, end)));
      at = end;
    }
    text.append(m.text.slice(at));
    return h(
      'div',
      {
        class: 'dsh-sb-match',
        'data-line': m.line,
        role: 'button',
        tabindex: 0,
        title: `${m.path}:${m.line}`,
        onclick: () => this.open(m),
        onkeydown: (event: KeyboardEvent) => {
          if (event.key === 'Enter') {
            this.open(m);
          }
        }
      },
      h('span', { class: 'dsh-sb-line' }, where),
      text
    );
  }

  private fileRows(counts: { path: string; matches: number }[]): Node[] {
    return counts.map(row =>
      h(
        'div',
        {
          class: 'dsh-sb-file dsh-sb-file-only',
          'data-path': row.path,
          role: 'button',
          tabindex: 0,
          title: row.path,
          onclick: () => this.open({ path: row.path, line: 0, text: '' })
        },
        h('span', { class: 'dsh-sb-path' }, row.path),
        h('span', { class: 'dsh-sb-count' }, String(row.matches))
      )
    );
  }

  private open(m: IGrepMatch): void {
    const first = m.submatches?.[0];
    void openTarget(this.docManager, {
      path: m.path,
      line: m.line || undefined,
      start: first?.[0],
      end: first?.[1],
      cell: m.cell,
      output: m.output
    });
  }
}
