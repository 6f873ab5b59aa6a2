/**
 * A document saved while the person typed stays unsaved.
 *
 * JupyterLab's document context takes the content it saves when the save starts, and when the
 * server has written it marks the document saved (`model.dirty = false`), whatever the person
 * typed while the request was under way. That typing is then in no file, yet the tab shows no
 * unsaved mark, JupyterLab's autosave passes the document by, closing the tab asks nothing, and
 * this page would report the document clean: a tab "without unsaved changes" would take an
 * agent's change and lay the file's text over the typing. So for every document this page holds
 * its own copy of (tabwatch.ts), the content each save starts with is kept — the `started` signal
 * runs synchronously, before the context reads the model — and when that save completes while the
 * document holds anything else, the document is marked unsaved again.
 *
 * It never marks a document saved and never changes its content; saves that overlap are matched
 * first in, first out, so a save that finishes out of order can only leave a document marked
 * unsaved, never one marked saved that is not.
 */

import type { DocumentRegistry } from '@jupyterlab/docregistry';

import { snapshot } from './tabchange';

/** Watch `context`'s saves (once per context): typing during a save leaves it unsaved. */
export function keepTypingUnsaved(context: DocumentRegistry.Context): void {
  const started: string[] = [];
  context.saveState.connect((_, state) => {
    if (state === 'started') {
      started.push(snapshot(context.model));
      return;
    }
    if (state !== 'completed' && state !== 'failed') {
      return;
    }
    const saved = started.shift();
    if (state === 'completed' && saved !== undefined && !context.isDisposed && snapshot(context.model) !== saved) {
      context.model.dirty = true;
    }
  });
}
