// replace.js: a replace preview page as a person checks it: occurrences grouped by file, the
// replaced text struck and the new text marked on one line, a box per occurrence and per file, and
// Apply, which sends the checked ids of the page shown.
//
// Why it exists: to draw ReplaceView's plain rows. Which boxes are unchecked is the browser's
// own state, reset whenever the page's occurrences change (an apply, a page, a refresh): nothing is
// applied that was not on screen and checked when Apply was pressed.

import { h } from "../common/dom";
import { copyButton, rowIcon } from "./dom.js";
import { createFrame, pager } from "./frame.js";
import { bindKeys, keepFocus } from "./keys.js";

const HEAD = 40; // characters kept before the change (the rest cut, so the change is in view)

/** One occurrence's line: `head`, the removed text struck, the added text marked, `tail`. */
export function changeLine({ head, removed, added, tail }) {
  const code = h("code", { class: "dsh-code" });
  if (head.length > HEAD) {
    code.append(h("span", { class: "dsh-cut", title: `${head.length - HEAD + 8} characters before` }, "…"), head.slice(-(HEAD - 8)));
  } else code.append(head);
  if (removed) code.append(h("del", { class: "dsh-diff-del", title: "replaced" }, removed));
  if (added) code.append(h("ins", { class: "dsh-diff-add", title: "becomes" }, added));
  code.append(tail);
  return code;
}

export function renderReplace(model, el) {
  const frame = createFrame(model, el, "replace");
  const { root, tools, body, request } = frame;
  const unchecked = new Set();
  let shownKey = "";
  const applied = h("div", { class: "dsh-applied", role: "status", "aria-live": "polite" });
  const pagerSlot = h("span", { class: "dsh-pager-slot" });
  frame.controls.append(applied, pagerSlot);
  // Enter on an occurrence's row flips its box (Space does so on the box itself)
  bindKeys(root, { onEnter: row => row.dataset.id && toggle([row.dataset.id], unchecked.has(row.dataset.id)) });

  const ids = () => model.get("files").flatMap(f => f.items.map(item => item.id));
  const toggle = (which, on) => {
    for (const id of which) {
      if (on) unchecked.delete(id);
      else unchecked.add(id);
    }
    keepFocus(root, draw);
  };

  function draw() {
    frame.update();
    const all = ids();
    const key = all.join(",");
    if (key !== shownKey) { // a new page or preview: every box checked again
      unchecked.clear();
      shownKey = key;
    }
    const checked = all.filter(id => !unchecked.has(id));
    applied.textContent = model.get("applied");
    applied.hidden = !applied.textContent;
    pagerSlot.replaceChildren(model.get("status") ? pager(model.get("pager"), model.get("status"), {
      onPrev: () => request("page", { where: "previous" }, {}),
      onNext: () => request("page", { where: "next" }, {}),
      onJump: n => request("page", { where: n }, {}),
      jumpLabel: "occurrence",
    }) : "");
    tools.replaceChildren(
      h("button", {
        class: "dsh-btn dsh-refresh", type: "button", "data-key": "refresh", title: "preview again (nothing is changed)",
        onclick: () => request("refresh", {}, {}),
      }, "↻ preview again"),
      h("button", {
        class: "dsh-btn dsh-apply", type: "button", "data-key": "apply", disabled: !checked.length,
        title: `change the ${checked.length} checked ${checked.length === 1 ? "occurrence" : "occurrences"} of this page`,
        onclick: () => request("apply", { ids: checked }, {}),
      }, `Apply ${checked.length} of ${all.length}`),
    );
    const list = h("div", { class: "dsh-groups", role: "tree", "aria-label": "occurrences to replace" });
    model.get("files").forEach((file, g) => {
      const fileIds = file.items.map(item => item.id);
      const on = fileIds.filter(id => !unchecked.has(id)).length;
      const box = h("input", {
        type: "checkbox", class: "dsh-check", "data-key": `file-check:${g}`, "aria-label": `replace in ${file.label}`,
        onchange: event => toggle(fileIds, event.target.checked),
      });
      box.checked = on === fileIds.length;
      box.indeterminate = on > 0 && on < fileIds.length;
      const head = h("div", { class: "dsh-group-head", role: "treeitem", "aria-expanded": "true", "data-key": `group:${g}` },
        box, rowIcon("file", file.path).make(), h("span", { class: "dsh-label" }, file.label),
        h("span", { class: "dsh-count" }, String(file.count)), copyButton(file.path));
      const items = h("div", { class: "dsh-items", role: "group" });
      for (const item of file.items) {
        const itemBox = h("input", {
          type: "checkbox", class: "dsh-check", "data-key": `check:${item.id}`, "aria-label": `replace at ${item.place}`,
          onchange: event => toggle([item.id], event.target.checked),
        });
        itemBox.checked = !unchecked.has(item.id);
        items.append(h("div", {
          class: `dsh-item dsh-occurrence${itemBox.checked ? "" : " dsh-skipped"}`, role: "treeitem", "data-row": "", tabindex: "-1",
          "data-key": `occurrence:${item.id}`, "data-id": item.id, title: item.place.includes(":") ? `cell ${item.place.replace(":", ", line ")}` : `line ${item.place}`,
        }, itemBox, h("span", { class: "dsh-ln" }, item.place), changeLine(item)));
      }
      list.append(h("div", { class: "dsh-group", role: "none" }, head, items));
    });
    body.replaceChildren(list);
  }

  model.on("change", () => keepFocus(root, draw));
  draw();
  return () => frame.dispose();
}
