// window.js: a read window (a file, or a saved full result) drawn from one page of lines: line
// numbers, the code font with spacing kept, the marked line scrolled into view, its own pager
// with "jump to line", the model's footer, "open in the editor" when the JupyterLab extension
// answers, and a close button when it was opened from a row. An image file's window shows the
// picture (sent base64 with its page) in place of lines.
//
// Why it exists: the same window is the whole view of `%dsh read` and the panel a listing or a
// search opens in place. It draws what the kernel sent; it fetches nothing itself.

import { h } from "../common/dom";
import { copyButton } from "./dom.js";
import { pager } from "./frame.js";

/**
 * Whether dsh-jupyter's JupyterLab extension is in this page and can open files in the editor.
 * The extension answers a "dsh-jupyter:probe" event synchronously by filling in its detail.
 */
export function shimAnswers() {
  const detail = {};
  document.dispatchEvent(new CustomEvent("dsh-jupyter:probe", { detail }));
  return Boolean(detail.openInEditor);
}

/** Open `path` in the editor at `line`; `span` ([start, end] characters of it, a match) is selected. */
function openInEditor(path, line, span) {
  const detail = { path, line };
  if (span && span.length === 2 && span[1] > span[0]) {
    detail.column = span[0];
    detail.length = span[1] - span[0];
  }
  document.dispatchEvent(new CustomEvent("dsh-jupyter:open-in-editor", { detail }));
}

/**
 * The window element for `state` (see windows.py: ReadWindow.state). `send(action, args, after)`
 * asks the kernel; `closable` adds the close button (a panel), `id` names it for aria-controls.
 */
export function renderWindow(state, send, { closable = false, id = "" } = {}) {
  const act = (op, extra = {}) => send("window", { op, ...extra }, { focus: "window" });
  const bar = h("div", { class: "dsh-window-bar" },
    h("b", { class: "dsh-tool" }, state.title),
    h("code", { class: "dsh-subject" }, state.name || state.subject),
    state.path ? copyButton(state.path) : null,
    state.back ? h("button", { class: "dsh-btn", type: "button", "data-key": "win-back", onclick: () => act("back") }, `‹ back to the ${state.back}`) : null,
    // a notebook's cells and its outline switch into each other (the other opens with "back")
    state.switch ? h("button", {
      class: "dsh-btn dsh-switch", type: "button", "data-key": "win-switch",
      title: state.switch === "outline" ? "show this notebook's outline: its headings and the cells they start at" : "show this notebook's cells from the first one of this page",
      onclick: () => act(state.switch),
    }, state.switch === "outline" ? "outline" : "cells") : null,
    h("span", { class: "dsh-grow" }),
    state.editor && shimAnswers()
      ? h("button", {
        class: "dsh-btn dsh-editor", type: "button",
        title: state.highlight
          ? "open this file in JupyterLab's editor with the marked line (the match) selected"
          : "open this file in JupyterLab's editor at the first line shown",
        onclick: () => openInEditor(state.editor, state.highlight || state.offset, state.highlight ? state.highlightSpan : null),
      }, "open in editor")
      : null,
    closable
      ? h("button", {
        class: "dsh-btn dsh-close", type: "button", "data-key": "win-close", "aria-label": "close this window", title: "close",
        onclick: () => send("close", {}, { focus: "opener" }),
      }, "✕ close")
      : null,
  );
  const nav = pager(state, state.status, {
    onPrev: () => act("previous"),
    onNext: () => act("next"),
    onJump: line => act("jump", { line }),
    onEnd: state.kind === "read" ? () => act("last") : null,
    jumpLabel: state.unit || "line",
    key: "win",
  });
  const width = state.lines.reduce((w, row) => Math.max(w, String(row[0]).length), 1);
  const lines = h("div", { class: "dsh-lines", role: "list", "aria-label": `lines of ${state.subject}`, tabindex: "0" });
  lines.style.setProperty("--dsh-ln-width", `${width + 1}ch`);
  const links = state.links || [];
  // a notebook's rows are [number, text, kind]: a cell's header, its source lines, its outputs
  state.lines.forEach(([number, text, kind], i) => {
    const hit = state.hitRow !== undefined && state.hitRow !== null ? i === state.hitRow : number === state.highlight;
    const link = links[i];
    const code = link
      ? h("a", { class: "dsh-code dsh-link", href: "#", title: "open this", onclick: event => {
        event.preventDefault();
        act("link", { index: i });
      } }, text)
      : h("span", { class: "dsh-code" }, text);
    const cls = "dsh-line" + (kind ? ` dsh-nb-${kind}` : "") + (hit ? " dsh-hit" : "");
    lines.append(h("div", { class: cls, role: "listitem", "data-line": number },
      h("span", { class: "dsh-ln", "aria-hidden": "true" }, number), code));
  });
  const parts = [bar, nav];
  if (state.error) parts.push(h("div", { class: "dsh-error", role: "alert" }, state.error));
  // an image file: the picture itself, at its own size at most, in place of lines
  parts.push(state.image
    ? h("div", { class: "dsh-image-box" },
      h("img", {
        class: "dsh-image", src: `data:${state.image.mimeType};base64,${state.image.data}`,
        alt: `${state.subject}: ${state.image.summary}`, width: state.image.width, height: state.image.height,
      }))
    : lines);
  if (state.footer) parts.push(h("pre", { class: "dsh-window-footer", "aria-label": "the model's footer" }, state.footer));
  const section = h("section", { class: "dsh-window", role: "region", id: id || null, "aria-label": `${state.title} ${state.subject}` }, ...parts);
  return section;
}

/** After the window is in the page: bring the marked line into the middle of its scroll area. */
export function revealHit(section) {
  const hit = section.querySelector(".dsh-hit");
  const lines = section.querySelector(".dsh-lines");
  if (hit && lines) lines.scrollTop = Math.max(0, hit.offsetTop - lines.offsetTop - lines.clientHeight / 3);
}
