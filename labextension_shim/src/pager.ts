/**
 * The sidebar sections' pager: previous and next buttons under a page of rows.
 */

import { h } from './common/dom';

/** The sections' pager: previous and next buttons (both disabled until a page says otherwise). */
export function pager(
  onPage: (direction: 1 | -1) => void
): { prev: HTMLButtonElement; next: HTMLButtonElement; node: HTMLElement } {
  const prev = h('button', { class: 'dsh-sb-prev jp-mod-styled', disabled: true, onclick: () => onPage(-1) }, '‹ Previous');
  const next = h('button', { class: 'dsh-sb-next jp-mod-styled', disabled: true, onclick: () => onPage(1) }, 'Next ›');
  return { prev, next, node: h('div', { class: 'dsh-sb-pager', hidden: true }, prev, next) };
}
