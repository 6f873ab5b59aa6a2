/**
 * Changing an open document's model to new content by the smallest change, and giving that
 * change back: what a tab does when it takes an agent's change (see tabs.ts).
 *
 * Text goes through the shared model's `updateSource` over the differing middle only, so a
 * person's cursor elsewhere stays where it is. A notebook whose cells are the same (count, types,
 * ids, outputs and metadata) and whose metadata is the same but for the kernel's `language_info`
 * gets each changed cell's source set the same way; any other change loads the whole notebook
 * (`fromJSON`), which is what a notebook with cells added or removed needs.
 *
 * Nothing here waits: every function runs within the caller's one synchronous turn. It never
 * touches a model whose content is not what the caller expects (`giveBack` reverts a change only
 * over text nobody has typed into since).
 */

/** What one document looked like before and after a change was applied to it. */
export interface IChange {
  model: any;
  notebook: boolean;
  before: string;
  after: string;
}

/** A replacement of `end - start` UTF-16 units at `start` by `value`. */
export interface ISpan {
  start: number;
  end: number;
  value: string;
}

/** Whether `model` is a notebook's (cells), not a text file's. */
export function isNotebookModel(model: any): boolean {
  return Array.isArray(model?.sharedModel?.cells);
}

/** The document's content as one string: a file's text, or a notebook's JSON. */
export function snapshot(model: any): string {
  return isNotebookModel(model)
    ? stableJSON(model.toJSON())
    : String(model.sharedModel.getSource());
}

/**
 * The one span that turns `old` into `next`: everything between their common prefix and common
 * suffix (never splitting a surrogate pair). Null when they are equal.
 */
export function middle(old: string, next: string): ISpan | null {
  if (old === next) {
    return null;
  }
  let start = 0;
  const limit = Math.min(old.length, next.length);
  while (start < limit && old.charCodeAt(start) === next.charCodeAt(start)) {
    start++;
  }
  if (start > 0 && isHigh(old.charCodeAt(start - 1))) {
    start--;
  }
  let tail = 0;
  while (
    tail < limit - start &&
    old.charCodeAt(old.length - 1 - tail) === next.charCodeAt(next.length - 1 - tail)
  ) {
    tail++;
  }
  if (tail > 0 && isLow(old.charCodeAt(old.length - tail))) {
    tail--;
  }
  return { start, end: old.length - tail, value: next.slice(start, next.length - tail) };
}

function isHigh(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLow(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/**
 * Apply `content` (a file's text, or a notebook's JSON) to `model`; what it looked like before
 * and after. A text file's line endings follow the document as JupyterLab loaded it: a model
 * without carriage returns (JupyterLab keeps CRLF files as LF and writes CRLF back) gets `\n`.
 */
export function applyContent(model: any, content: string): IChange {
  const notebook = isNotebookModel(model);
  const before = snapshot(model);
  if (notebook) {
    setNotebook(model, JSON.parse(content));
  } else {
    const current = String(model.sharedModel.getSource());
    const text = current.includes('\r') ? content : content.replace(/\r\n?/g, '\n');
    setText(model, text);
  }
  return { model, notebook, before, after: snapshot(model) };
}

function setText(model: any, text: string): void {
  const span = middle(String(model.sharedModel.getSource()), text);
  if (span) {
    model.sharedModel.updateSource(span.start, span.end, span.value);
  }
}

function setNotebook(model: any, next: any): void {
  const current = model.toJSON();
  if (!sameShape(current, next)) {
    model.fromJSON(next);
    return;
  }
  const cells = model.sharedModel.cells;
  const update = (): void => {
    next.cells.forEach((cell: any, index: number) => {
      const shared = cells[index];
      const old = String(shared.getSource());
      const span = middle(old, joined(cell.source));
      if (span) {
        shared.updateSource(span.start, span.end, span.value);
      }
    });
  };
  if (typeof model.sharedModel.transact === 'function') {
    model.sharedModel.transact(update);
  } else {
    update();
  }
}

/**
 * Whether two notebooks differ in their cells' sources only, the notebooks' `language_info` aside.
 *
 * The front end copies `language_info` from the kernel into the page's notebook as it connects,
 * and the server writes no save that changes nothing else (server/contents_guard.py), so a page
 * holds a `language_info` the file lacks until the next real change is saved. An agent's content,
 * made from the file, lacks it too; the cells' sources are still set in place (the person's cursor
 * and the cells' widgets stay), and the page's `language_info` is kept and saved with the change.
 */
export function sameShape(a: any, b: any): boolean {
  if (!a || !b || !Array.isArray(a.cells) || !Array.isArray(b.cells) || a.cells.length !== b.cells.length) {
    return false;
  }
  const outer = (nb: any): string => {
    // the kernel's language_info is the page's to set: the file often lacks what the page holds
    const { language_info: _kernel, ...metadata } = nb.metadata ?? {};
    return stableJSON({ nbformat: nb.nbformat, nbformat_minor: nb.nbformat_minor, metadata });
  };
  if (outer(a) !== outer(b)) {
    return false;
  }
  return a.cells.every((cell: any, i: number) => stableJSON(withoutSource(cell)) === stableJSON(withoutSource(b.cells[i])));
}

function withoutSource(cell: any): any {
  const { source: _source, ...rest } = cell ?? {};
  const metadata = { ...(rest.metadata ?? {}) };
  delete metadata.trusted; // JupyterLab's own mark, never the file's
  const out: any = { ...rest, metadata };
  if (Array.isArray(rest.outputs)) {
    out.outputs = rest.outputs.map((o: any) => ({
      ...o,
      ...(o.text !== undefined ? { text: joined(o.text) } : {}),
      ...(o.data ? { data: Object.fromEntries(Object.entries(o.data).map(([k, v]) => [k, joinedIfText(v)])) } : {})
    }));
  }
  return out;
}

/** nbformat's multiline strings: a list of lines is the same as the lines joined. */
function joined(value: unknown): string {
  return Array.isArray(value) ? value.join('') : String(value ?? '');
}

function joinedIfText(value: unknown): unknown {
  return Array.isArray(value) && value.every(v => typeof v === 'string') ? value.join('') : value;
}

/** JSON with keys in a fixed order, so two equal values give one string. */
export function stableJSON(value: unknown): string {
  return JSON.stringify(sorted(value));
}

function sorted(value: any): any {
  if (Array.isArray(value)) {
    return value.map(sorted);
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map(k => [k, sorted(value[k])]));
  }
  return value;
}

/**
 * Give `change` back: restore the content it replaced. When the document still holds exactly
 * what the change made, it is restored and marked saved again (true). When the person typed
 * since, a text file's change is given back only where the typing did not touch it, and the
 * document stays unsaved (false); otherwise it is left as it is (false).
 */
export function giveBack(change: IChange): boolean {
  const { model } = change;
  const now = snapshot(model);
  if (now === change.after) {
    if (change.notebook) {
      setNotebook(model, JSON.parse(change.before));
    } else {
      setText(model, change.before);
    }
    model.dirty = false;
    return true;
  }
  if (!change.notebook) {
    const span = revertSpan(change.before, change.after, now);
    if (span) {
      model.sharedModel.updateSource(span.start, span.end, span.value);
    }
  }
  return false;
}

/**
 * In `now` (which is `after` with a person's typing), the span that undoes the change from
 * `before` to `after`, when the typing lies wholly before or after it; null otherwise.
 */
export function revertSpan(before: string, after: string, now: string): ISpan | null {
  const taken = middle(before, after);
  const typed = middle(after, now);
  if (!taken || !typed) {
    return null;
  }
  const takenEnd = taken.start + taken.value.length; // in `after`
  const original = before.slice(taken.start, taken.end);
  let shift = 0;
  if (typed.end <= taken.start) {
    shift = typed.value.length - (typed.end - typed.start);
  } else if (typed.start < takenEnd) {
    return null; // the person typed into the change itself
  }
  const start = taken.start + shift;
  const end = takenEnd + shift;
  return now.slice(start, end) === taken.value ? { start, end, value: original } : null;
}
