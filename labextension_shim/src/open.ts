/**
 * Opening a search hit: a file in JupyterLab's editor with the cursor on the line, the match
 * selected and scrolled to the middle of the editor (not its bottom edge); a notebook with the
 * matching cell active and scrolled into view.
 */

import { IDocumentManager } from '@jupyterlab/docmanager';
import { NotebookPanel } from '@jupyterlab/notebook';

/** Where to go: `line` is 1-based; `start`/`end` are character columns of the match on it. */
export interface ITarget {
  path: string;
  line?: number;
  start?: number;
  end?: number;
  /** A notebook match: the cell's number (1-based, as grep and read number cells); `line` is within that cell. */
  cell?: number | null;
  /** A match in the text of that cell's output: the cell is made active, no source line selected. */
  output?: number | null;
}

/**
 * A line to go to opens the file in the text editor (a notebook's cell in the notebook); a file
 * with no line (an explorer or activity row, a files-mode hit) opens as JupyterLab's file browser
 * opens it, in its default viewer: a notebook as a notebook, never as its JSON.
 */
export async function openTarget(docManager: IDocumentManager, target: ITarget): Promise<void> {
  const notebook = target.path.endsWith('.ipynb') && typeof target.cell === 'number';
  const widget = docManager.openOrReveal(target.path, notebook ? 'Notebook' : target.line ? 'Editor' : undefined);
  if (!widget) {
    return;
  }
  await widget.context.ready;
  if (!target.line) {
    return;
  }
  const line = Math.max(0, target.line - 1);
  const start = target.start ?? 0;
  const end = target.end ?? start;
  if (widget instanceof NotebookPanel) {
    const nb = widget.content;
    const index = (target.cell ?? 1) - 1;
    if (index < 0 || index >= nb.widgets.length) {
      return;
    }
    nb.activeCellIndex = index;
    const cell = nb.activeCell;
    if (cell) {
      await nb.scrollToCell(cell);
    }
    if (typeof target.output === 'number') {
      return;
    }
    const editor = cell?.editor;
    editor?.setSelection({ start: { line, column: start }, end: { line, column: end } });
    return;
  }
  const editor = (widget as any).content?.editor;
  if (editor && typeof editor.setSelection === 'function') {
    editor.setSelection({ start: { line, column: start }, end: { line, column: end } });
    if (!centre(editor, line, start)) {
      editor.revealPosition?.({ line, column: start });
    }
    editor.focus?.();
  }
}

/**
 * Scroll CodeMirror's view so that the line is in the middle of the editor (JupyterLab's own
 * `revealPosition` scrolls it just into view, at the bottom edge). The effect is made by the
 * view's own class, so no second copy of CodeMirror is bundled. False when the editor is not
 * a CodeMirror 6 view.
 */
function centre(editor: any, line: number, column: number): boolean {
  const view = editor.editor;
  const scrollIntoView = view?.constructor?.scrollIntoView;
  if (typeof scrollIntoView !== 'function' || typeof editor.getOffsetAt !== 'function') {
    return false;
  }
  const offset = editor.getOffsetAt({ line, column });
  view.dispatch({ effects: scrollIntoView(offset, { y: 'center' }) });
  return true;
}
