/**
 * Building elements, once for both front ends: the JupyterLab sidebar and the notebook widgets.
 *
 * Why it exists: both draw plain DOM from plain data, with no framework; one `h()` keeps them
 * drawing the same way. It never touches a widget model, a server or the document beyond the
 * element it makes.
 *
 * `h('div', {class: 'x', onclick: f, text: 'hi'}, child, 'text', [more])`: `class` sets the class
 * name, `text` the text content, a function becomes an event listener (its name without `on`),
 * `true` an empty attribute; null, undefined and false are left out, as attributes and as
 * children. Children may be nested arrays; anything not a node is appended as text.
 */

export type Child = Node | string | number | null | undefined | false | Child[];

export type Attrs = {
  [name: string]: string | number | boolean | null | undefined | ((event: any) => void);
};

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) {
      continue;
    }
    if (name === 'class') {
      el.className = String(value);
    } else if (name === 'text') {
      el.textContent = String(value);
    } else if (typeof value === 'function') {
      el.addEventListener(name.replace(/^on/, ''), value);
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(el, ...children);
  return el;
}

/** Append `children` to `el` (nested arrays flattened; null, undefined and false left out). */
export function append(el: Element, ...children: Child[]): void {
  for (const child of children.flat(Infinity as 1) as Child[]) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    el.append(child instanceof Node ? child : String(child));
  }
}

/** Replace everything inside `el`. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, ...children);
}
