/**
 * The panel's Replace: `replace` through the REST API, previewed, chosen occurrence by occurrence,
 * then applied in one call.
 *
 * Why it exists: a person changes a name across files from the panel, sees every occurrence
 * before and after, leaves out the ones that must stay, and gets one all-or-nothing change.
 *
 * - The preview is `replace` without `occurrences`, with the search form's options (match case,
 *   regex or literal, whole word, include, exclude, .gitignore); its occurrences are grouped by
 *   file, each with a checkbox (all checked at first; a file's checkbox toggles its occurrences)
 *   and its line with the removed text struck and the new text marked.
 * - Apply sends the checked ids, or `"all"` with `expected_count` (the preview's total) when
 *   every occurrence is checked. Its result, or its refusal in plain words with the tool's own
 *   sentence, stays shown while the preview is asked again.
 * - A person's unchecked occurrences stay unchecked in the refreshed preview when their line is
 *   the same (the ids change with the file's version; the place and the new line do not).
 *
 * What it must never do: apply anything the person did not see checked in the preview shown
 * (the ids are the preview's; a file changed since then is refused by the tool), or reach the
 * disk other than through the tool.
 */

import { ApiError, callTool, IPage, IToolResult } from './api';
import { fill, h } from './common/dom';
import { formatCount, plural } from './common/format';
import { escapeRegex, IQuery, pathNode } from './search';

/** One occurrence of a preview's page. */
export interface IOccurrence {
  id: string;
  path: string;
  line: number;
  /** A notebook's cell (1-based); `line` is within its source. */
  cell?: number | null;
  /** The whole line as it is. */
  before: string;
  /** The line with this occurrence alone replaced. */
  after: string;
  /** The occurrence's `[start, end]` in `before` (characters, as grep's submatches); `after` holds its replacement from `start`. */
  span?: [number, number];
}

/** `replace`'s value: a preview's page, or (`applied`) what an apply changed. */
export interface IReplaceValue extends IPage {
  pattern: string;
  replacement: string;
  occurrences?: IOccurrence[];
  totalOccurrences?: number;
  files?: number;
  offset?: number;
  ignoreFiles?: boolean;
  unreadable?: number;
  tooLarge?: number;
  applied?: boolean;
  replacements?: number;
  changed?: { path: string; replacements: number }[];
}

/** A failed call's value. */
interface IErrorValue {
  code?: string;
  message?: string;
}

/**
 * The `replace` arguments for the search form and a replacement: plain text is sent `literal`
 * (the replacement then plain too); whole word wraps the escaped text as a regex, so a `$` of
 * the replacement is doubled to stay itself.
 */
export function replaceArgs(query: IQuery, replacement: string): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  if (query.regex) {
    args.pattern = query.wholeWord ? `\\b(?:${query.text})\\b` : query.text;
    args.replacement = replacement;
  } else if (query.wholeWord) {
    args.pattern = `\\b(?:${escapeRegex(query.text)})\\b`;
    args.replacement = replacement.replace(/\$/g, '$$$$');
  } else {
    args.pattern = query.text;
    args.replacement = replacement;
    args.literal = true;
  }
  if (!query.matchCase) {
    args.ignore_case = true;
  }
  if (query.include.trim()) {
    args.include = query.include.trim();
  }
  const excludes = query.exclude
    .split(',')
    .map(glob => glob.trim())
    .filter(glob => glob);
  if (excludes.length) {
    args.exclude = excludes.length === 1 ? excludes[0] : excludes;
  }
  return args;
}

/**
 * Where a line before and after differ: `[start, beforeEnd, afterEnd]`, the common start and
 * the ends of the removed and the new text (the common end is left out of both).
 */
export function changedSpan(before: string, after: string): [number, number, number] {
  let start = 0;
  const most = Math.min(before.length, after.length);
  while (start < most && before[start] === after[start]) {
    start++;
  }
  let tail = 0;
  while (
    tail < most - start &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  ) {
    tail++;
  }
  return [start, before.length - tail, after.length - tail];
}

/**
 * The occurrence itself in its line, `[start, beforeEnd, afterEnd]`: the value's `span`, so that
 * the whole matched text is struck and the whole new text marked; the least difference between
 * the lines when there is no span that fits them (a line cut at grep_max_line_bytes).
 */
export function occurrenceSpan(o: IOccurrence): [number, number, number] {
  const span = o.span;
  if (span && span[0] <= span[1] && span[1] <= o.before.length) {
    const afterEnd = o.after.length - (o.before.length - span[1]);
    if (afterEnd >= span[0] && o.after.slice(0, span[0]) === o.before.slice(0, span[0])) {
      return [span[0], span[1], afterEnd];
    }
  }
  return changedSpan(o.before, o.after);
}

/** Characters kept before and after a change on a long line (the rest becomes `…`). */
const LEAD = 12;
const TRAIL = 30;

/** An occurrence's place as the tool names it: `12`, or `Cell 2, line 1` in a notebook. */
export function place(o: IOccurrence): string {
  return typeof o.cell === 'number' ? `Cell ${o.cell}, line ${o.line}` : String(o.line);
}

/** What a refusal means for the person, by its code; the tool's own sentence follows it. */
export function refusalWords(code: string | undefined): string {
  switch (code) {
    case 'FS_NOT_OBSERVED':
      return 'Nothing was replaced: a file changed since the preview. The preview below is new: check it and apply again.';
    case 'REPLACE_COUNT_CHANGED':
      return 'Nothing was replaced: the occurrences changed since the preview. The preview below is new: check it and apply again.';
    case 'FS_OPEN_UNSAVED':
      return 'Nothing was replaced: a file open in JupyterLab has unsaved changes. Save or close it, or uncheck its occurrences, and apply again.';
    case 'FS_OPEN_UNANSWERED':
      return 'Nothing was replaced: the page that has a file open did not answer in time. Apply again.';
    case 'REPLACE_TOO_MANY':
      return 'Nothing was replaced: the change is larger than one call may make. Narrow it with include, exclude or the checkboxes.';
    default:
      return 'Nothing was replaced.';
  }
}

/** The key an occurrence keeps across previews: its place and its new line. */
function placeKey(o: IOccurrence): string {
  return `${o.path}\u0000${o.cell ?? ''}\u0000${o.line}\u0000${o.after}`;
}

export class ReplaceView {
  readonly node: HTMLElement;
  private readonly status: HTMLElement;
  private readonly message: HTMLElement;
  private readonly apply: HTMLButtonElement;
  private readonly list: HTMLElement;
  private readonly more: HTMLButtonElement;
  private seq = 0;
  private controller: AbortController | null = null;
  private args: Record<string, unknown> | null = null;
  private gitignore = true;
  private total = 0;
  private nextAt: number | null = null;
  private occurrences: IOccurrence[] = [];
  /** The occurrences the person unchecked, by their place (kept across previews). */
  private readonly unchecked = new Set<string>();
  private applying = false;

  constructor(
    private readonly session: string,
    private readonly setBusy: (busy: boolean) => void
  ) {
    this.status = h('div', { class: 'dsh-sb-replace-status', role: 'status', 'aria-live': 'polite' });
    this.message = h('div', { class: 'dsh-sb-replace-message', hidden: true });
    this.apply = h(
      'button',
      {
        class: 'dsh-sb-apply jp-mod-styled jp-mod-accept',
        disabled: true,
        title: 'Replace the checked occurrences, all or nothing',
        onclick: () => void this.applyChecked()
      },
      'Replace'
    );
    this.list = h('div', { class: 'dsh-sb-replace-list', role: 'group', 'aria-label': 'Replace preview' });
    this.more = h(
      'button',
      {
        class: 'dsh-sb-more jp-mod-styled',
        hidden: true,
        title: 'Show the next page of occurrences',
        onclick: () => void this.loadMore()
      },
      'Show more'
    );
    this.node = h(
      'div',
      { class: 'dsh-sb-replace', hidden: true },
      h('div', { class: 'dsh-sb-row' }, this.status, this.apply),
      this.message,
      this.list,
      this.more
    );
  }

  /** The form changed: drop what is shown and the person's choices. */
  reset(): void {
    this.unchecked.clear();
    this.sayMessage(null);
  }

  /** Stop the preview in flight (a newer one is coming); an apply in flight goes on and is said. */
  cancel(): void {
    this.seq++;
    this.controller?.abort();
    this.controller = null;
  }

  /** A preview of the form's query and replacement, from its first page. */
  async preview(query: IQuery, replacement: string): Promise<void> {
    this.cancel();
    const seq = this.seq;
    this.args = query.text ? replaceArgs(query, replacement) : null;
    this.gitignore = query.gitignore;
    if (!this.args) {
      this.occurrences = [];
      this.total = 0;
      this.nextAt = null;
      this.status.textContent = '';
      fill(this.list);
      this.update();
      this.setBusy(false);
      return;
    }
    this.setBusy(true);
    this.status.textContent = 'Previewing…';
    await this.firstPage(seq);
  }

  /** The preview's first page for the form's arguments, shown (or its failure), unless a newer
   * request took its place (``seq``). */
  private async firstPage(seq: number): Promise<void> {
    if (!this.args) {
      return;
    }
    const result = await this.call({ ...this.args, offset: 1 }, seq);
    if (!result) {
      return;
    }
    this.setBusy(false);
    if (result.isError) {
      this.occurrences = [];
      this.total = 0;
      this.nextAt = null;
      this.status.textContent = 'Preview failed';
      fill(this.list, h('div', { class: 'dsh-sb-error', role: 'alert' }, result.text));
      this.update();
      return;
    }
    this.occurrences = result.value.occurrences ?? [];
    this.showPreview(result.value);
  }

  private async loadMore(): Promise<void> {
    if (!this.args || this.nextAt === null) {
      return;
    }
    const seq = ++this.seq;
    this.setBusy(true);
    const result = await this.call({ ...this.args, offset: this.nextAt }, seq);
    if (!result) {
      return;
    }
    this.setBusy(false);
    if (result.isError) {
      this.sayMessage(result.text, true);
      return;
    }
    this.occurrences = this.occurrences.concat(result.value.occurrences ?? []);
    this.showPreview(result.value);
  }

  /**
   * One call, or null when a newer one took its place or it failed over HTTP (said: a preview's
   * failure in the list, an apply's in the message, and the preview asked again).
   */
  private async call(args: Record<string, unknown>, seq: number): Promise<IToolResult<IReplaceValue> | null> {
    const applying = args.occurrences !== undefined;
    const controller = new AbortController();
    if (!applying) {
      this.controller = controller; // an apply is never aborted: its answer is always said
    }
    try {
      const result = await callTool<IReplaceValue>(
        'replace',
        args,
        this.session,
        controller.signal,
        undefined,
        this.gitignore ? { respect_ignore_files: true } : undefined
      );
      return applying || seq === this.seq ? result : null;
    } catch (error) {
      if (!applying && seq !== this.seq) {
        return null;
      }
      this.setBusy(false);
      const message = error instanceof ApiError ? `${error.status} ${error.code}: ${error.message}` : String(error);
      if (args.occurrences !== undefined) {
        this.sayMessage(`The replace failed before its answer came back: ${message}`, true);
        void this.again(); // whether anything changed, the new preview shows
        return null;
      }
      this.status.textContent = 'Preview failed';
      fill(this.list, h('div', { class: 'dsh-sb-error', role: 'alert' }, message));
      return null;
    } finally {
      if (this.controller === controller) {
        this.controller = null;
      }
    }
  }

  private showPreview(value: IReplaceValue): void {
    this.total = value.totalOccurrences ?? 0;
    this.nextAt = value.nextOffset;
    const files = value.files ?? 0;
    const notes: string[] = [];
    if (value.unreadable) {
      notes.push(`${plural(value.unreadable, 'file', 'files')} could not be read and ${value.unreadable === 1 ? 'was' : 'were'} left out.`);
    }
    if (value.tooLarge) {
      notes.push(`${plural(value.tooLarge, 'file', 'files')} larger than edit_max_bytes ${value.tooLarge === 1 ? 'was' : 'were'} left out.`);
    }
    if (value.ignoreFiles) {
      notes.push('Files named by .gitignore or .ignore rules were left out.');
    }
    if (!this.total) {
      this.status.textContent = 'No occurrences';
    } else {
      const whole = `${plural(this.total, 'occurrence', 'occurrences')} in ${plural(files, 'file', 'files')}`;
      const shown = this.occurrences.length;
      this.status.textContent = shown >= this.total ? whole : `${whole} — showing 1–${formatCount(shown)}`;
    }
    fill(
      this.list,
      notes.length ? h('div', { class: 'dsh-sb-replace-note' }, notes.join(' ')) : null,
      ...this.fileGroups()
    );
    this.update();
  }

  /** The occurrences shown, grouped by file (a page is in path order). */
  private fileGroups(): HTMLElement[] {
    const groups: { path: string; items: IOccurrence[] }[] = [];
    for (const o of this.occurrences) {
      const last = groups[groups.length - 1];
      if (last && last.path === o.path) {
        last.items.push(o);
      } else {
        groups.push({ path: o.path, items: [o] });
      }
    }
    return groups.map(group => {
      const boxes: HTMLInputElement[] = [];
      const fileBox = h('input', {
        type: 'checkbox',
        class: 'dsh-sb-file-check',
        'aria-label': `Replace in ${group.path}`,
        onchange: () => {
          for (const o of group.items) {
            if (fileBox.checked) {
              this.unchecked.delete(placeKey(o));
            } else {
              this.unchecked.add(placeKey(o));
            }
          }
          boxes.forEach(box => (box.checked = fileBox.checked));
          this.update();
        }
      });
      const rows = group.items.map(o => {
        const box = h('input', {
          type: 'checkbox',
          class: 'dsh-sb-occ-check',
          'aria-label': `Replace at ${group.path}, ${typeof o.cell === 'number' ? place(o) : `line ${o.line}`}`,
          onchange: () => {
            if (box.checked) {
              this.unchecked.delete(placeKey(o));
            } else {
              this.unchecked.add(placeKey(o));
            }
            this.update();
          }
        });
        box.checked = !this.unchecked.has(placeKey(o));
        boxes.push(box);
        return h(
          'label',
          {
            class: 'dsh-sb-occ',
            'data-id': o.id,
            'data-line': o.line,
            title: `${o.path}:${place(o)}\n- ${o.before.trim().slice(0, 500)}\n+ ${o.after.trim().slice(0, 500)}`
          },
          box,
          h('span', { class: 'dsh-sb-line' }, place(o)),
          diffNode(o)
        );
      });
      const head = h(
        'div',
        { class: 'dsh-sb-file-head dsh-sb-replace-head', title: group.path },
        fileBox,
        pathNode(group.path),
        h('span', { class: 'dsh-sb-count' }, formatCount(group.items.length))
      );
      return h(
        'div',
        {
          class: 'dsh-sb-file',
          'data-path': group.path,
          role: 'group',
          'aria-label': `${group.path}, ${plural(group.items.length, 'occurrence', 'occurrences')}`
        },
        head,
        ...rows
      );
    });
  }

  /** The file checkboxes' states, the Apply button's words and whether it may be pressed. */
  private update(): void {
    for (const group of Array.from(this.list.querySelectorAll<HTMLElement>('.dsh-sb-file'))) {
      const boxes = Array.from(group.querySelectorAll<HTMLInputElement>('.dsh-sb-occ-check'));
      const on = boxes.filter(box => box.checked).length;
      const fileBox = group.querySelector<HTMLInputElement>('.dsh-sb-file-check');
      if (fileBox) {
        fileBox.checked = on === boxes.length;
        fileBox.indeterminate = on > 0 && on < boxes.length;
      }
    }
    const checked = this.checkedIds();
    const all = this.allChecked();
    const count = all ? this.total : checked.length;
    this.apply.textContent = !count
      ? 'Replace'
      : all
        ? `Replace all ${formatCount(count)}`
        : `Replace ${formatCount(count)} of ${formatCount(this.total)}`;
    this.apply.disabled = this.applying || !count;
    this.apply.hidden = !this.total;
    this.more.hidden = this.nextAt === null;
  }

  /** Every occurrence is checked, those on pages not shown included (they are checked at first). */
  private allChecked(): boolean {
    return this.total > 0 && this.occurrences.every(o => !this.unchecked.has(placeKey(o)));
  }

  private checkedIds(): string[] {
    return this.occurrences.filter(o => !this.unchecked.has(placeKey(o))).map(o => o.id);
  }

  /** Apply the checked occurrences, say what happened in place, then preview again. */
  private async applyChecked(): Promise<void> {
    if (!this.args || this.applying) {
      return;
    }
    const args: Record<string, unknown> = { ...this.args };
    if (this.allChecked()) {
      args.occurrences = 'all';
      args.expected_count = this.total;
    } else {
      args.occurrences = this.checkedIds();
    }
    this.cancel();
    const seq = this.seq;
    this.applying = true;
    this.update();
    this.setBusy(true);
    this.status.textContent = 'Replacing…';
    let result: IToolResult<IReplaceValue> | null;
    try {
      result = await this.call(args, seq);
    } finally {
      this.applying = false;
    }
    if (!result) {
      this.update();
      return;
    }
    if (result.isError) {
      const error = result.value as unknown as IErrorValue;
      this.sayMessage(`${refusalWords(error?.code)}\n${result.text.replace(/^Error: /, '')}`, true);
    } else {
      this.sayMessage(result.text, false);
    }
    await this.again(); // the newest preview asked (the form's, if it changed meanwhile), after the change
  }

  /**
   * The last preview asked (its arguments are the form's newest) again, keeping the message of
   * what was just done: a preview that ran while the apply did may show files as they were.
   */
  private async again(): Promise<void> {
    if (!this.args) {
      return;
    }
    this.cancel();
    const seq = this.seq;
    await this.firstPage(seq);
  }

  private sayMessage(text: string | null, refusal = false): void {
    this.message.hidden = !text;
    this.message.textContent = text ?? '';
    this.message.className = `dsh-sb-replace-message ${refusal ? 'dsh-sb-refusal' : 'dsh-sb-done'}`;
    this.message.setAttribute('role', refusal ? 'alert' : 'status');
  }
}

/**
 * An occurrence's line: the text before the change, the removed text struck (`del`), the new
 * text marked (`ins`), the rest; cut to LEAD characters before the change and TRAIL after it
 * (`…` where cut), and wrapped by the panel, so that the change is always in view whole.
 */
export function diffNode(o: IOccurrence): HTMLElement {
  const [start, beforeEnd, afterEnd] = occurrenceSpan(o);
  const indent = o.before.length - o.before.trimStart().length;
  let from = Math.min(indent, start);
  const text = h('span', { class: 'dsh-sb-text' });
  if (start - from > LEAD) {
    from = start - LEAD;
    text.append('…');
  }
  text.append(o.before.slice(from, start));
  if (beforeEnd > start) {
    text.append(h('del', { class: 'dsh-sb-removed' }, o.before.slice(start, beforeEnd)));
  }
  if (afterEnd > start) {
    text.append(h('ins', { class: 'dsh-sb-added' }, o.after.slice(start, afterEnd)));
  }
  const rest = o.before.slice(beforeEnd);
  text.append(rest.length > TRAIL ? rest.slice(0, TRAIL) + '…' : rest);
  return text;
}
