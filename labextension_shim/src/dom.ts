/**
 * A tiny DOM helper for the sidebar: `h('div', {class: 'x', onclick: f}, child, 'text')`.
 * Plain DOM, no framework; attributes that are functions become event listeners.
 */

export type Child = Node | string | null | undefined | false;

export type Attrs = {
  [name: string]: string | number | boolean | null | undefined | ((event: any) => void);
};

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) {
      continue;
    }
    if (typeof value === 'function') {
      el.addEventListener(name.replace(/^on/, ''), value);
    } else if (name === 'class') {
      el.className = String(value);
    } else if (value === true) {
      el.setAttribute(name, '');
    } else {
      el.setAttribute(name, String(value));
    }
  }
  append(el, ...children);
  return el;
}

export function append(el: HTMLElement, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    el.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/** Replace everything inside `el`. */
export function fill(el: HTMLElement, ...children: Child[]): void {
  el.replaceChildren();
  append(el, ...children);
}

/** The sections' pager: previous and next buttons (both disabled until a page says otherwise). */
export function pager(
  onPage: (direction: 1 | -1) => void
): { prev: HTMLButtonElement; next: HTMLButtonElement; node: HTMLElement } {
  const prev = h('button', { class: 'dsh-sb-prev jp-mod-styled', disabled: true, onclick: () => onPage(-1) }, '‹ Previous');
  const next = h('button', { class: 'dsh-sb-next jp-mod-styled', disabled: true, onclick: () => onPage(1) }, 'Next ›');
  return { prev, next, node: h('div', { class: 'dsh-sb-pager', hidden: true }, prev, next) };
}
