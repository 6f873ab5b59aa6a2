/**
 * The sidebar's search: `grep` through the REST API, as the user types.
 *
 * - Toggles: match case (off sends `ignore_case: true`), whole word (the pattern wrapped as
 *   `\b(?:…)\b`), regex (off: the text escaped for ripgrep's regex syntax), use .gitignore (on
 *   by default: the call is posted with `respect_ignore_files: true`); include and exclude globs;
 *   a mode: matching lines, files only (`files_with_matches`) or counts (`count`); which part of
 *   a notebook's cells is searched (`notebook_scope`).
 * - Typing waits 200 ms of quiet before it asks. A keystroke aborts the request in flight (the
 *   server sees the client leave and stops its rg), and an answer that still arrives for an
 *   older search is dropped by its sequence number. The panel is `aria-busy` from the keystroke
 *   until the answer for the text in the box is shown, and the status line says "Searching…"
 *   (with how far it got, asked of the server every PROGRESS_MS) the whole time.
 * - The headline says what the counts are (`headline`): the whole result, a page of it, at least
 *   that many (a search stopped at the server's output limit, with a way to go on), how far a
 *   search stopped by the person got, or that it failed.
 * - Pages are asked in path order (`offset` 1, then the offset the tool's footer names), so page
 *   2 follows page 1; the footer under the results is the tool's own, as the model reads it.
 * - Paths are shortened in the middle (the file name stays), a match line is cut around its
 *   first match so that the highlight is in view however narrow the panel.
 * - A click on a match (or Enter on it or on a file's row) opens the file in the editor with the
 *   match selected and centred (a notebook: its cell made active).
 * - The chevron before the box shows the Replace field (as VS Code does); while it is shown the
 *   results are `replace`'s preview with the same options (`replace.ts`), not grep's.
 */

import { IDocumentManager } from '@jupyterlab/docmanager';

import { ApiError, callTool, IPage, IToolResult, progress } from './api';
import { fill, h } from './common/dom';
import { formatCount, plural } from './common/format';
import { pager } from './pager';
import { openTarget } from './open';
import { ReplaceView } from './replace';

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
  /** The search was stopped at the server's output limit (this many bytes): the counts are a floor. */
  partialAfterBytes?: number;
  /** Files named by .gitignore or .ignore rules were left out. */
  ignoreFiles?: boolean;
  offset?: number;
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
  /** Leave out the files the workspace's .gitignore and .ignore files name. */
  gitignore: boolean;
  scope: Scope;
}

export type Scope = 'sources' | 'outputs' | 'all';

export const DEBOUNCE_MS = 200;

/** Characters of a line shown before its first match when the panel's width is not known. */
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
  if (query.scope !== 'sources') {
    args.notebook_scope = query.scope;
  }
  return args;
}

/**
 * The status line for an answer: what its counts are. A whole result reads `4,163 matches in
 * 1,463 files`; a page of a larger one adds which part is shown; a search stopped at the output
 * limit reads `at least … matches in …+ files — stopped at …` with the limit.
 */
export function headline(value: IGrepValue, mode: Mode): string {
  const total = value.totalMatches ?? 0;
  const files = value.filesTotal ?? 0;
  if (!total) {
    return value.partialAfterBytes ? 'No whole file found before the output limit' : 'No matches';
  }
  if (value.partialAfterBytes) {
    return (
      `at least ${plural(total, 'match', 'matches')} in ${formatCount(files)}+ files — stopped at the ` +
      `output limit (${formatCount(value.partialAfterBytes)} bytes of matches)`
    );
  }
  const whole = `${plural(total, 'match', 'matches')} in ${plural(files, 'file', 'files')}`;
  const first = value.offset ?? 1;
  if (mode === 'content') {
    const shown = value.matches?.length ?? 0;
    return shown >= total ? whole : `${whole} — showing ${formatCount(first)}–${formatCount(first + shown - 1)}`;
  }
  const rows = value.fileCounts?.length ?? 0;
  return rows >= files ? whole : `${whole} — showing files ${formatCount(first)}–${formatCount(first + rows - 1)}`;
}

/** What a search stopped by the person says, from its last progress (`23,730 matches in 5,120 files so far`). */
export function stoppedText(progress: string | null): string {
  const got = progress?.replace(/ so far$/, '');
  return got ? `Stopped after ${got}` : 'Stopped before it finished';
}

const STOP_AFTER_MS = 1000; // a search running longer than this can be stopped
const PROGRESS_MS = 250; // how often a running search asks how far it got
const FIRST_ROWS_MS = 100; // as often, until its first rows are shown

/**
 * Where the query matches in a line shown before the answer (the server's early rows carry no
 * spans): the text itself, or the pattern read as a JavaScript regex when it is one (close to
 * ripgrep's for the patterns people type); none when it cannot be read so.
 */
export function querySpans(text: string, query: IQuery): [number, number][] {
  let pattern = query.regex ? query.text : query.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (query.wholeWord) {
    pattern = `\\b(?:${pattern})\\b`;
  }
  let re: RegExp;
  try {
    re = new RegExp(pattern, query.matchCase ? 'gu' : 'giu');
  } catch {
    return [];
  }
  const spans: [number, number][] = [];
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null && m[0].length > 0 && spans.length < 20) {
    spans.push([m.index, m.index + m[0].length]);
  }
  return spans;
}

export const FIRST_RUN_HINT = [
  'Type a regular expression or plain text to search the lines of every file (ripgrep).',
  'Aa: match case · ab: whole word · .*: regular expression.',
  '.gitignore: leave out the files it names (on).',
  'Include / exclude take globs; the last list picks what a notebook search reads.',
  'Enter or a click on a row opens the file at the match.'
];

export class SearchView {
  readonly node: HTMLElement;
  private readonly input: HTMLInputElement;
  private readonly include: HTMLInputElement;
  private readonly exclude: HTMLInputElement;
  private readonly mode: HTMLSelectElement;
  private readonly scope: HTMLSelectElement;
  private readonly toggles: Record<'matchCase' | 'wholeWord' | 'regex' | 'gitignore', HTMLButtonElement>;
  private readonly status: HTMLElement;
  /** Grep's part of the panel (status, results, pager), hidden while Replace is shown. */
  private readonly found: HTMLElement;
  private readonly replaceToggle: HTMLButtonElement;
  private readonly replaceRow: HTMLElement;
  private readonly replacement: HTMLInputElement;
  private readonly replace: ReplaceView;
  private replacing = false;
  private readonly note: HTMLElement;
  private readonly actions: HTMLElement;
  private readonly results: HTMLElement;
  private readonly footer: HTMLElement;
  private readonly prev: HTMLButtonElement;
  private readonly next: HTMLButtonElement;
  private readonly pager: HTMLElement;
  private readonly skip: HTMLAnchorElement;
  private readonly stop: HTMLButtonElement;
  /** An indeterminate bar while a search runs (how much is left is not known). */
  private readonly bar: HTMLProgressElement;
  private watch: number | undefined; // the running search's stop button and progress polls
  private timer: number | undefined;
  private seq = 0;
  private controller: AbortController | null = null;
  /** What the running search's server said last about how far it got. */
  private lastProgress: string | null = null;
  /** Offsets of the pages before this one, for "previous". */
  private offsets: number[] = [];
  private offset = 1;
  private nextAt: number | null = null;
  /** The page shown, kept to cut its lines again when the panel's width changes. */
  private shown: { matches: IGrepMatch[]; width: number } | null = null;

  constructor(
    private readonly docManager: IDocumentManager,
    private readonly session: string
  ) {
    const toggle = (label: string, title: string, cls: string, pressed = false): HTMLButtonElement =>
      h(
        'button',
        {
          class: `dsh-sb-toggle ${cls}`,
          title,
          'aria-label': title,
          'aria-pressed': String(pressed),
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
      regex: toggle('.*', 'Use regular expression', 'dsh-sb-regex'),
      gitignore: toggle(
        '.gitignore',
        'Use .gitignore: leave out the files named by the workspace\'s .gitignore and .ignore files',
        'dsh-sb-gitignore',
        true
      )
    };
    const onType = (): void => this.schedule();
    const field = (cls: string, placeholder: string, label: string, hint: string): HTMLInputElement =>
      h('input', {
        class: `${cls} jp-mod-styled`,
        type: 'text',
        placeholder,
        title: hint,
        'aria-label': label,
        oninput: onType
      });
    this.input = h('input', {
      class: 'dsh-sb-pattern jp-mod-styled',
      type: 'search',
      placeholder: 'Search',
      title: 'Search the lines of every file (grep, ripgrep syntax); Enter searches at once',
      'aria-label': 'Search pattern',
      oninput: onType,
      onkeydown: (event: KeyboardEvent) => {
        if (event.key === 'Enter') {
          this.search();
        }
      }
    });
    this.include = field(
      'dsh-sb-include',
      'Include',
      'Files to include',
      'Files to include: one glob, e.g. *.{py,md}'
    );
    this.exclude = field(
      'dsh-sb-exclude',
      'Exclude',
      'Files to exclude',
      'Files to exclude: globs separated by commas, e.g. tests/**, *.min.js'
    );
    this.mode = h(
      'select',
      {
        class: 'dsh-sb-mode jp-mod-styled',
        'aria-label': 'Result mode',
        title: 'What a result shows: matching lines, files only, or files by count',
        onchange: () => this.search()
      },
      h('option', { value: 'content' }, 'Matching lines'),
      h('option', { value: 'files_with_matches' }, 'Files only'),
      h('option', { value: 'count' }, 'Counts, most first')
    );
    this.scope = h(
      'select',
      {
        class: 'dsh-sb-scope jp-mod-styled',
        'aria-label': 'Notebook cells searched',
        title: "What of a notebook's cells is searched: their sources, the text of their outputs, or both",
        onchange: () => this.search()
      },
      h('option', { value: 'sources' }, 'Notebook sources'),
      h('option', { value: 'outputs' }, 'Notebook outputs'),
      h('option', { value: 'all' }, 'Sources and outputs')
    );
    this.status = h('div', { class: 'dsh-sb-status', role: 'status', 'aria-live': 'polite' });
    this.note = h('div', { class: 'dsh-sb-note' });
    this.actions = h('div', { class: 'dsh-sb-actions', hidden: true });
    this.stop = h(
      'button',
      {
        class: 'dsh-sb-stop jp-mod-styled',
        hidden: true,
        title: 'Stop this search (the server kills its rg)',
        'aria-label': 'Stop this search',
        onclick: () => {
          const got = this.lastProgress;
          this.seq++;
          this.controller?.abort();
          this.controller = null;
          this.unwatch();
          this.node.removeAttribute('aria-busy');
          this.show(stoppedText(got), [], '');
        }
      },
      '■ Stop'
    );
    this.bar = h('progress', { class: 'dsh-sb-progress', hidden: true, 'aria-label': 'Searching' });
    this.results = h('div', { class: 'dsh-sb-results', role: 'list', 'aria-label': 'Search results' });
    this.footer = h('div', { class: 'dsh-sb-footer' });
    ({ prev: this.prev, next: this.next, node: this.pager } = pager(direction => this.page(direction)));
    this.pager.setAttribute('role', 'navigation');
    this.pager.setAttribute('aria-label', 'Result pages');
    this.skip = h(
      'a',
      {
        class: 'dsh-sb-skip',
        href: '#',
        hidden: true,
        title: 'Skip to the pager (Alt+End from anywhere in the search)',
        onclick: (event: Event) => {
          event.preventDefault();
          this.focusPager();
        }
      },
      'Skip to the pager'
    );
    this.replacement = h('input', {
      class: 'dsh-sb-replacement jp-mod-styled',
      type: 'text',
      placeholder: 'Replace',
      title:
        'What each occurrence becomes: plain text, or with a regular expression $1 or ${name} for a group ($$ for a $)',
      'aria-label': 'Replace with',
      oninput: onType,
      onkeydown: (event: KeyboardEvent) => {
        if (event.key === 'Enter') {
          this.search();
        }
      }
    });
    this.replace = new ReplaceView(this.session, busy => {
      if (busy) {
        this.node.setAttribute('aria-busy', 'true');
      } else {
        this.node.removeAttribute('aria-busy');
      }
    });
    this.replaceRow = h(
      'div',
      { class: 'dsh-sb-row dsh-sb-replace-row', id: 'dsh-sb-replace-row', hidden: true },
      this.replacement
    );
    this.replaceToggle = h(
      'button',
      {
        class: 'dsh-sb-toggle dsh-sb-replace-toggle',
        title: 'Toggle Replace: change the matches across files, previewed first',
        'aria-label': 'Toggle Replace',
        'aria-expanded': 'false',
        'aria-controls': 'dsh-sb-replace-row',
        onclick: () => this.setReplacing(!this.replacing)
      },
      '▸'
    );
    this.found = h('div', { class: 'dsh-sb-found' });
    this.node = h(
      'div',
      {
        class: 'dsh-sb-search',
        role: 'search',
        'aria-label': 'Search the workspace',
        onkeydown: (event: KeyboardEvent) => {
          if (event.altKey && event.key === 'End' && !this.pager.hidden) {
            event.preventDefault();
            this.focusPager();
          }
        }
      },
      h(
        'div',
        { class: 'dsh-sb-row' },
        this.replaceToggle,
        this.input,
        this.toggles.matchCase,
        this.toggles.wholeWord,
        this.toggles.regex
      ),
      this.replaceRow,
      h('div', { class: 'dsh-sb-row' }, this.include),
      h('div', { class: 'dsh-sb-row' }, this.exclude),
      h('div', { class: 'dsh-sb-row' }, this.mode, this.toggles.gitignore),
      h('div', { class: 'dsh-sb-row' }, this.scope),
      this.found,
      this.replace.node
    );
    fill(
      this.found,
      h('div', { class: 'dsh-sb-row' }, this.status, this.stop),
      this.bar,
      this.note,
      this.actions,
      this.skip,
      this.results,
      this.footer,
      this.pager
    );
    // A narrower or wider panel shows a different part of each long line: cut them again.
    new ResizeObserver(() => this.refit()).observe(this.results);
    this.show('', [], '');
  }

  focus(): void {
    this.input.focus();
  }

  /**
   * Show or hide the Replace field. Shown, the results are the replace preview (the mode and
   * the notebook scope are hidden: they do not apply, replace reads cell sources only); hidden,
   * grep's again.
   */
  setReplacing(on: boolean): void {
    this.replacing = on;
    this.replaceToggle.setAttribute('aria-expanded', String(on));
    this.replaceToggle.textContent = on ? '▾' : '▸';
    this.replaceRow.hidden = !on;
    this.found.hidden = on;
    this.replace.node.hidden = !on;
    this.mode.hidden = on;
    this.scope.hidden = on;
    window.clearTimeout(this.timer);
    this.seq++;
    this.controller?.abort();
    this.controller = null;
    this.unwatch();
    this.replace.cancel();
    this.node.removeAttribute('aria-busy');
    if (on) {
      this.replacement.focus();
    }
    this.search();
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
      mode: this.mode.value as Mode,
      gitignore: pressed(this.toggles.gitignore),
      scope: this.scope.value as Scope
    };
  }

  private focusPager(): void {
    (this.next.disabled ? this.prev : this.next).focus();
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
    this.unwatch();
    if (this.replacing) {
      this.replace.cancel();
    }
    if (this.input.value) {
      this.node.setAttribute('aria-busy', 'true');
      this.status.textContent = 'Searching…';
    }
    this.timer = window.setTimeout(() => this.search(), DEBOUNCE_MS);
  }

  /** A new search from its first page (with Replace shown: a new preview). */
  private search(): void {
    window.clearTimeout(this.timer);
    if (this.replacing) {
      this.replace.reset(); // what the last apply said is about another search
      void this.replace.preview(this.query(), this.replacement.value);
      return;
    }
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
      this.unwatch();
      this.node.removeAttribute('aria-busy');
      this.show('', [], '');
      return;
    }
    const controller = new AbortController();
    this.controller = controller;
    this.node.setAttribute('aria-busy', 'true');
    this.status.textContent = 'Searching…';
    const progressId = `sidebar-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
    this.watchRunning(seq, progressId, query, offset === 1);
    let result: IToolResult<IGrepValue>;
    try {
      result = await callTool<IGrepValue>(
        'grep',
        grepArgs(query, offset),
        this.session,
        controller.signal,
        progressId,
        query.gitignore ? { respect_ignore_files: true } : undefined
      );
    } catch (error) {
      if (seq !== this.seq) {
        return; // a newer search started; this one was aborted or is stale
      }
      this.unwatch();
      this.controller = null;
      this.node.removeAttribute('aria-busy');
      const message = error instanceof ApiError ? `${error.status} ${error.code}: ${error.message}` : String(error);
      this.show('Search failed', [h('div', { class: 'dsh-sb-error', role: 'alert' }, message)], '');
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
   * While a search runs, every PROGRESS_MS the status line says how far it got ("Searching…
   * 1,204 matches in 310 files so far"), asked of `GET progress/{id}` with the id it was posted
   * with; after STOP_AFTER_MS it shows "■ Stop".
   */
  private watchRunning(seq: number, progressId: string, query: IQuery, first: boolean): void {
    this.unwatch();
    const started = Date.now();
    let early = 0; // early rows shown
    let asking = false;
    const ask = (): void => {
      if (seq !== this.seq) {
        this.unwatch();
        return;
      }
      if (Date.now() - started >= STOP_AFTER_MS) {
        this.stop.hidden = false;
      }
      if (asking) {
        return; // one question at a time
      }
      asking = true;
      void progress(progressId).then(
        now => {
          asking = false;
          if (seq !== this.seq || this.controller === null || !now.running) {
            return;
          }
          this.lastProgress = now.progress;
          this.status.textContent = `Searching… ${now.progress ?? ''}`.trimEnd();
          // the first page of matching lines: the first files rg finished, while it goes on
          if (first && query.mode === 'content' && now.rows && now.rows.length > early) {
            const had = early;
            early = now.rows.length;
            this.showEarly(now.rows, query);
            if (!had) {
              window.clearInterval(this.watch);
              this.watch = window.setInterval(ask, PROGRESS_MS);
            }
          }
        },
        () => {
          asking = false; // the answer itself will say what went wrong
        }
      );
    };
    this.watch = window.setInterval(ask, FIRST_ROWS_MS);
    this.bar.hidden = false;
  }

  /** A running search's first rows, in path order, marked as early until the answer replaces them. */
  private showEarly(rows: IGrepMatch[], query: IQuery): void {
    const sorted = [...rows].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
    const matches = sorted.map(m => ({ ...m, submatches: querySpans(m.text, query) }));
    const width = this.columns();
    this.shown = { matches, width };
    this.results.classList.add('dsh-sb-early');
    this.results.setAttribute('aria-busy', 'true');
    fill(this.results, ...this.matchRows(matches, width));
  }

  private unwatch(): void {
    window.clearInterval(this.watch);
    this.watch = undefined;
    this.lastProgress = null;
    this.stop.hidden = true;
    this.bar.hidden = true;
  }

  private show(status: string, rows: Node[], footer: string, note = '', actions: Node[] = []): void {
    this.results.classList.remove('dsh-sb-early');
    this.results.removeAttribute('aria-busy');
    this.status.textContent = status;
    this.note.textContent = note;
    this.note.hidden = !note;
    fill(this.actions, ...actions);
    this.actions.hidden = actions.length === 0;
    if (!status && !rows.length && !this.input.value) {
      rows = [h('div', { class: 'dsh-sb-hint' }, ...FIRST_RUN_HINT.map(line => h('p', {}, line)))];
    }
    fill(this.results, ...rows);
    this.footer.textContent = footer;
    this.prev.disabled = this.offsets.length === 0;
    this.next.disabled = this.nextAt === null;
    this.pager.hidden = this.prev.disabled && this.next.disabled;
    this.skip.hidden = this.pager.hidden;
  }

  private render(result: IToolResult<IGrepValue>, query: IQuery): void {
    this.shown = null;
    if (result.isError) {
      this.show('Search failed', [h('div', { class: 'dsh-sb-error', role: 'alert' }, result.text)], '');
      return;
    }
    const value = result.value;
    this.nextAt = value.nextOffset;
    const note = value.ignoreFiles ? 'Files named by .gitignore or .ignore rules were left out.' : '';
    const actions = value.partialAfterBytes ? this.goOn(query) : [];
    if (!value.totalMatches) {
      this.show(headline(value, query.mode), [], value.footer, note, actions);
      return;
    }
    let rows: Node[];
    if (query.mode === 'content') {
      const width = this.columns();
      this.shown = { matches: value.matches ?? [], width };
      rows = this.matchRows(this.shown.matches, width);
    } else {
      rows = this.fileRows(value.fileCounts ?? []);
    }
    this.show(headline(value, query.mode), rows, value.footer, note, actions);
  }

  /** What a search stopped at the output limit offers: narrow it, or count every file's matches. */
  private goOn(query: IQuery): Node[] {
    const items: Node[] = [
      h('span', {}, 'Other files may match too. '),
      h(
        'button',
        {
          class: 'dsh-sb-narrow jp-mod-styled',
          title: 'Narrow the search: name the files to include or exclude',
          onclick: () => this.include.focus()
        },
        'Narrow the search'
      )
    ];
    if (query.mode === 'content') {
      items.push(
        h(
          'button',
          {
            class: 'dsh-sb-count-all jp-mod-styled',
            title: 'Search every file, counting its matches instead of showing their lines (with progress)',
            onclick: () => {
              this.mode.value = 'files_with_matches';
              this.search();
            }
          },
          'Count in every file'
        )
      );
    }
    return items;
  }

  /** How many characters of a match line the panel shows (its text column in the code font). */
  private columns(): number {
    const probe = h('span', { class: 'dsh-sb-match dsh-sb-probe' }, h('span', { class: 'dsh-sb-text' }, 'M'.repeat(10)));
    this.results.append(probe);
    const char = (probe.firstChild as HTMLElement).getBoundingClientRect().width / 10;
    const width = this.results.clientWidth;
    probe.remove();
    if (!char || !width) {
      return 0;
    }
    // the line number takes about 6 characters and the gaps and indent another 3
    return Math.max(12, Math.floor(width / char) - 9);
  }

  private refit(): void {
    if (!this.shown) {
      return;
    }
    const width = this.columns();
    if (!width || width === this.shown.width) {
      return;
    }
    this.shown.width = width;
    const rows = this.matchRows(this.shown.matches, width);
    fill(this.results, ...rows);
  }

  /** Matches grouped by file (the page is in path order, so a file's matches are together). */
  private matchRows(matches: IGrepMatch[], width: number): Node[] {
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
        { class: 'dsh-sb-file', 'data-path': group.path, role: 'listitem' },
        h(
          'div',
          {
            class: 'dsh-sb-file-head',
            title: group.path,
            role: 'button',
            tabindex: 0,
            'aria-label': `${group.path}, ${plural(group.matches.length, 'match', 'matches')} on this page`,
            onclick: () => this.open(group.matches[0]),
            onkeydown: (event: KeyboardEvent) => {
              if (event.key === 'Enter') {
                this.open(group.matches[0]);
              }
            }
          },
          pathNode(group.path),
          h('span', { class: 'dsh-sb-count' }, formatCount(group.matches.length))
        ),
        ...group.matches.map(m => this.matchRow(m, width))
      )
    );
  }

  private matchRow(m: IGrepMatch, width: number): HTMLElement {
    const where =
      typeof m.cell !== 'number'
        ? String(m.line)
        : typeof m.output === 'number'
          ? `Cell ${m.cell}, output ${m.output}, line ${m.line}`
          : `Cell ${m.cell}, line ${m.line}`;
    const text = h('span', { class: 'dsh-sb-text' });
    const [from, to] = lineWindow(m.text, m.submatches ?? [], width - (where.length > 6 ? where.length - 6 : 0));
    if (m.text.slice(0, from).trim()) {
      text.append('…'); // more than the indentation is left out before
    }
    let at = from;
    for (const [start, end] of m.submatches ?? []) {
      if (start < at || end > m.text.length || start >= to) {
        continue;
      }
      text.append(m.text.slice(at, start), h('mark', {}, m.text.slice(start, end)));
      at = end;
    }
    text.append(m.text.slice(at, Math.max(at, to)));
    if (to < m.text.length) {
      text.append('…');
    }
    return h(
      'div',
      {
        class: 'dsh-sb-match',
        'data-line': m.line,
        role: 'button',
        tabindex: 0,
        title: `${m.path}:${m.line}\n${m.text.trim().slice(0, 500)}`,
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
          'aria-label': `${row.path}, ${plural(row.matches, 'match', 'matches')}`,
          onclick: () => this.open({ path: row.path, line: 0, text: '' }),
          onkeydown: (event: KeyboardEvent) => {
            if (event.key === 'Enter') {
              this.open({ path: row.path, line: 0, text: '' });
            }
          }
        },
        pathNode(row.path),
        h('span', { class: 'dsh-sb-count' }, formatCount(row.matches))
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

/**
 * A path shortened in the middle when the panel is narrow: its folders are cut with an ellipsis
 * and its file name stays whole (`src/comp…/main.py`); the whole path is the row's tooltip.
 */
export function pathNode(path: string): HTMLElement {
  const slash = path.lastIndexOf('/');
  return h(
    'span',
    { class: 'dsh-sb-path' },
    slash >= 0 ? h('span', { class: 'dsh-sb-folders' }, path.slice(0, slash + 1)) : null,
    h('span', { class: 'dsh-sb-filename' }, path.slice(slash + 1))
  );
}

/**
 * Which characters `[from, to)` of a line to show in `width` characters: leading indentation
 * dropped; a line that does not fit is shown from its start when its first match is in view
 * there, else around the first match, centred, so that the match is never cut (a match longer
 * than the width shows its start). `width` 0 (not known): up to LEAD characters
 * before the first match, the end cut by the panel.
 */
export function lineWindow(text: string, spans: [number, number][], width: number): [number, number] {
  const indent = text.length - text.trimStart().length;
  const first = spans[0];
  if (!width) {
    const from = first && first[0] - indent > LEAD ? first[0] - LEAD / 2 : indent;
    return [from, text.length];
  }
  if (text.length - indent <= width || !first) {
    return [indent, Math.min(text.length, indent + width)];
  }
  const [start, end] = first;
  const room = width - 2; // the ellipses
  if (end <= indent + room - 1) {
    return [indent, indent + room + 1]; // the match is in view from the line's start
  }
  if (end - start >= room) {
    return [start, start + room];
  }
  let from = Math.max(indent, start - Math.floor((room - (end - start)) / 2));
  let to = from + room;
  if (to > text.length) {
    to = text.length;
    from = Math.max(indent, to - room);
  }
  return [from, to];
}
