// keys.js: keyboard use of a view: arrow keys move between rows, Enter opens, Backspace or
// Alt+Up goes to the parent folder, "/" focuses the filter, Escape closes an opened window. One row at a time is tabbable (a
// roving tabindex), so Tab leaves the rows and reaches the pager.
//
// Why it exists: a person should be able to browse without the mouse, and keys pressed while
// the view has focus must not reach JupyterLab's notebook shortcuts: every plain key stops at the
// view's root, and so does Enter with any modifier (it would run the cell); JupyterLab's other
// Ctrl, Alt and Meta combinations, Tab and Escape go on. It never sends a request itself: it
// calls the view's handlers.

export const ROW = "[data-row]";

function visibleRows(root) {
  return [...root.querySelectorAll(ROW)].filter(row => row.offsetParent !== null);
}

/** Make `row` the tabbable one and, with `focus`, move the focus to it. */
export function activate(root, row, focus = true) {
  if (!row) return;
  for (const other of root.querySelectorAll(`${ROW}[tabindex="0"]`)) other.tabIndex = -1;
  row.tabIndex = 0;
  if (focus) row.focus({ preventScroll: false });
}

/** Give the first row the tab stop (and, with `focus`, the focus): a new page starts there. */
export function firstRow(root, focus) {
  // Only the first shown row is looked for: measuring all of them would lay out every row.
  const all = root.querySelectorAll(ROW);
  const first = [...all].find(row => row.offsetParent !== null);
  if (!first) return;
  const current = root.querySelector(`${ROW}[tabindex="0"]`);
  activate(root, focus || !current ? first : current, focus);
}

/**
 * Key handling on `root`: `handlers` has onEnter(row), onParent(), onFilter(), onEscape() (each
 * optional; onEscape is for a key pressed inside an opened window).
 * Keys typed in a text box are left to it, except Enter (the box handles it) and Escape (back
 * to the rows).
 */
export function bindKeys(root, handlers) {
  guardShortcuts();
  root.addEventListener("focusin", event => {
    const row = event.target.closest && event.target.closest(ROW);
    if (row && root.contains(row)) activate(root, row, false);
  });
  root.addEventListener("keydown", event => {
    const inBox = event.target.matches && event.target.matches("input, textarea, select");
    const row = event.target.closest && event.target.closest(ROW);
    let handled = false;
    if (inBox) {
      if (event.key === "Escape") {
        firstRow(root, true);
        handled = true;
      }
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (event.altKey && event.key === "ArrowUp") {
        if (handlers.onParent) handlers.onParent();
        handled = true;
      } else {
        const rows = visibleRows(root);
        const at = rows.indexOf(row);
        const to = at < 0 ? 0 : Math.min(rows.length - 1, Math.max(0, at + (event.key === "ArrowDown" ? 1 : -1)));
        activate(root, rows[to]);
        handled = rows.length > 0;
      }
    } else if (event.key === "Home" || event.key === "End") {
      const rows = visibleRows(root);
      activate(root, event.key === "Home" ? rows[0] : rows[rows.length - 1]);
      handled = rows.length > 0;
    } else if (event.key === "Enter" && row && handlers.onEnter) {
      handlers.onEnter(row);
      handled = true;
    } else if (event.key === "Escape" && handlers.onEscape && event.target.closest && event.target.closest(".dsh-window")) {
      handlers.onEscape(); // leave an opened window: it closes, the focus goes back to its row
      handled = true;
    } else if (event.key === "Backspace" && handlers.onParent) {
      handlers.onParent();
      handled = true;
    } else if (event.key === "c" && row && !event.ctrlKey && !event.metaKey && !event.altKey && row.querySelector(".dsh-copy")) {
      row.querySelector(".dsh-copy").click(); // copy the row's path
      handled = true;
    } else if (event.key === "/" && handlers.onFilter) {
      handlers.onFilter();
      handled = true;
    }
    if (handled) {
      event.preventDefault();
      event.stopPropagation();
    } else if (staysInside(event)) {
      // A key the view does not use still must not reach the notebook around it: JupyterLab reads
      // keys as they bubble up to the document, and in command mode m, r, x, d d, a, b, z, j and
      // k would change, cut, add or move cells, and Enter with any modifier would run one. Its
      // default action (typing, a select's choice) is kept; other combinations with Ctrl, Alt or
      // Meta (the command palette, save, switching tabs), Tab and an unused Escape go on.
      event.stopPropagation();
    }
  });
}

/**
 * Keys that stay inside a view must not reach the application's shortcuts either way it listens.
 * JupyterLab 4 reads keys as they bubble up to the document, so the view's root stops them (above);
 * Notebook 7 reads them on their way down (a capture listener on the document), before any element
 * of the view sees them. So one capture listener on the window, which runs before the document's,
 * marks the focused element itself with Lumino's `data-lm-suppress-shortcuts` for the length of
 * this one event (the element itself: a notebook shortcut's selector such as
 * `.jp-Notebook.jp-mod-commandMode :focus` matches the focused row, and Lumino looks for the mark
 * only on the way from the target to the element a selector matches). Only for these keys, only
 * for this event: Ctrl, Alt and Meta combinations (the command palette, save) still reach it.
 */
function guardShortcuts() {
  if (window.__dshShortcutGuard) return;
  window.__dshShortcutGuard = true;
  window.addEventListener("keydown", event => {
    const target = event.target instanceof Element ? event.target : null;
    if (!target || !target.closest(".dsh") || !(staysInside(event) || (event.altKey && event.key === "ArrowUp"))) return;
    if (target.hasAttribute("data-lm-suppress-shortcuts")) return;
    target.setAttribute("data-lm-suppress-shortcuts", "");
    setTimeout(() => target.removeAttribute("data-lm-suppress-shortcuts"), 0); // after this event only
  }, true);
}

function staysInside(event) {
  if (event.key === "Enter") return true; // Shift+Enter, Ctrl+Enter, Alt+Enter would run the cell
  if (event.ctrlKey || event.metaKey || event.altKey) return false;
  return event.key !== "Tab" && event.key !== "Escape";
}

/**
 * Redraw with `draw()` and keep the focus where it was: on the element with the same data-key
 * (a row, a pager button), else on `fallback` (a selector), else nowhere new.
 */
export function keepFocus(root, draw, fallback) {
  const active = root.contains(document.activeElement) ? document.activeElement : null;
  const key = active && active.closest("[data-key]") ? active.closest("[data-key]").dataset.key : null;
  draw();
  if (!active) return;
  const again = (key && root.querySelector(`[data-key="${CSS.escape(key)}"]`)) || (fallback && root.querySelector(fallback));
  if (again && again !== document.activeElement) again.focus({ preventScroll: true });
}
