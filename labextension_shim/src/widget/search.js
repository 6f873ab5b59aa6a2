// search.js: glob and grep pages like a search panel: collapsible groups with counts, lines in
// the code font with spacing kept and the matched text in its own <mark>, long lines shown
// around the match, and a file opened below the row that was clicked.
//
// Why it exists: to draw GlobView's and GrepView's one page of plain data. The page is the
// model's page (at most the cap): nothing is fetched except what a click opens, and the
// "open the full result" window pages the saved complete result through the kernel.

import { h } from "../common/dom";
import { copyButton, icon, rowIcon } from "./dom.js";
import { createFrame } from "./frame.js";
import { activate, bindKeys, firstRow, keepFocus } from "./keys.js";
import { renderWindow, revealHit } from "./window.js";

const WIDE = 160; // characters of a line shown around its first match
const BEFORE = 32; // of them, before the match (so the match is near the start, in view)

/** Sorted, merged [start, end] spans inside [0, length). */
export function cleanSpans(spans, length) {
  const out = [];
  for (const [a, b] of [...(spans || [])].sort((x, y) => x[0] - y[0])) {
    const start = Math.max(0, Math.min(a, length));
    const end = Math.max(start, Math.min(b, length));
    if (end <= start) continue;
    if (out.length && start <= out[out.length - 1][1]) out[out.length - 1][1] = Math.max(out[out.length - 1][1], end);
    else out.push([start, end]);
  }
  return out;
}

/** The line as code: the shown part around the first match, each match in a <mark>. */
export function matchLine(text, spans) {
  const marks = cleanSpans(spans, text.length);
  let from = 0;
  let to = text.length;
  if (text.length > WIDE) {
    const first = marks.length ? marks[0][0] : 0;
    from = Math.max(0, first - BEFORE);
    to = Math.min(text.length, from + WIDE);
  }
  const code = h("code", { class: "dsh-code" });
  if (from > 0) code.append(h("span", { class: "dsh-cut", title: `${from} characters before` }, "…"));
  let at = from;
  for (const [a, b] of marks) {
    if (b <= from || a >= to) continue;
    const start = Math.max(a, from);
    const end = Math.min(b, to);
    if (start > at) code.append(text.slice(at, start));
    code.append(h("mark", { class: "dsh-hl" }, text.slice(start, end)));
    at = end;
  }
  if (at < to) code.append(text.slice(at, to));
  if (to < text.length) code.append(h("span", { class: "dsh-cut", title: `${text.length - to} characters after` }, "…"));
  return code;
}

function renderSearch(model, el, kind) {
  const frame = createFrame(model, el, kind);
  const { root, tools, body, request } = frame;
  const collapsed = new Set(); // group keys the person folded (front-end state only)
  const header = h("div", { class: "dsh-search-header" });
  frame.controls.append(header);

  const fold = key => {
    if (collapsed.has(key)) collapsed.delete(key);
    else collapsed.add(key);
    keepFocus(root, draw);
  };
  const openRow = row => {
    const { action, group, index } = row.dataset;
    if (!action) { // a glob folder's head: Enter folds or unfolds it
      if (row.dataset.fold !== undefined) fold(row.dataset.fold);
      return;
    }
    const args = index === undefined ? { group: Number(group) } : { group: Number(group), index: Number(index) };
    request(action, args, { focus: "open" });
  };
  bindKeys(root, { onEnter: openRow, onEscape: () => request("close", {}, { focus: "opener" }) });
  root.addEventListener("keydown", event => {
    const head = event.target.closest && event.target.closest(".dsh-group-head");
    if (!head || (event.key !== "ArrowLeft" && event.key !== "ArrowRight")) return;
    const key = head.dataset.fold;
    if (event.key === "ArrowLeft") collapsed.add(key);
    else collapsed.delete(key);
    event.preventDefault();
    event.stopPropagation();
    keepFocus(root, draw);
  });

  function groupsOf() {
    if (kind === "grep") {
      return model.get("files").map((f, g) => ({
        key: f.path, label: f.label, count: f.count ?? f.matches.length, headAction: "open_path", group: g,
        items: f.matches.map(([line, text, spans, cell, context, output], i) => ({
          // a match in a notebook cell reads "3:2" (cell 3, line 2) and opens that cell, one in the
          // text of its output 1 "3:o1:2"; a context row is dimmed and unmarked, and opens the file
          // at its line as well
          key: `match:${g}:${i}`, action: "open_match", index: i,
          line: output ? `${cell}:o${output}:${line}` : cell ? `${cell}:${line}` : line,
          context: Boolean(context),
          content: matchLine(text, spans),
          title: context ? `context line ${line}; open here`
            : output ? `open cell ${cell} (line ${line} of its output ${output})`
            : cell ? `open cell ${cell} at line ${line}` : `open at line ${line}`,
        })),
      }));
    }
    return model.get("groups").map((grp, g) => ({
      key: grp.key, label: grp.label, count: grp.paths.length, headAction: null, group: g,
      items: grp.paths.map(([path, label], i) => ({
        key: `path:${g}:${i}`, action: "open_path", index: i,
        content: h("span", { class: "dsh-path" }, rowIcon("file", path).make(), h("span", { class: "dsh-label" }, label),
          copyButton(path)),
        title: "open it below",
      })),
    }));
  }

  // grep's toolbar: case, output mode and context lines; a change asks grep again ("refine"),
  // and the page that answers replaces this one.
  const MODES = [["content", "lines"], ["files_with_matches", "files"], ["count", "counts"]];
  const CONTEXTS = [0, 1, 2, 3, 5, 10];
  function refiners() {
    const options = model.get("options") || {};
    const refine = change => request("refine", { ...options, ...change }, {});
    const mode = options.output_mode || "content";
    // Aa pressed means "match case", as in JupyterLab's own search and the Workspace panel
    const caseButton = h("button", {
      class: "dsh-btn dsh-case", type: "button", "data-key": "case", "aria-pressed": options.ignore_case ? "false" : "true",
      "aria-label": "Match case",
      title: options.ignore_case ? "Match case (off: letters match in any case)" : "Match case (on: click to match letters in any case)",
      onclick: () => refine({ ignore_case: !options.ignore_case }),
    }, "Aa");
    const modeSelect = h("select", {
      class: "dsh-select dsh-mode", "aria-label": "output mode", title: "matching lines, or one row per file with its count",
      onchange: event => refine({ output_mode: event.target.value, context: event.target.value === "content" ? options.context : 0 }),
    }, ...MODES.map(([value, label]) => h("option", value === mode ? { value, selected: "" } : { value }, label)));
    const contextSelect = h("select", {
      class: "dsh-select dsh-context-lines", "aria-label": "context lines", title: "lines shown around each match",
      disabled: mode !== "content" ? "" : undefined,
      onchange: event => refine({ context: Number(event.target.value) }),
    }, ...CONTEXTS.map(n => h("option", n === (options.context || 0) ? { value: String(n), selected: "" } : { value: String(n) },
      n ? `±${n} lines` : "no context")));
    return h("span", { class: "dsh-refine" }, caseButton, modeSelect, contextSelect);
  }

  // glob: each group's paths in the tool's order (oldest first) or by name, sorted in the kernel
  function orderSelect() {
    const order = model.get("order") || "time";
    const options = [["time", "oldest first"], ["name", "by name"]];
    return h("select", {
      class: "dsh-select dsh-order-select", "aria-label": "order in each group", "data-key": "order",
      title: "the order of the paths in each group (the model's page is oldest first)",
      onchange: event => request("order", { order: event.target.value }, {}),
    }, ...options.map(([value, label]) => h("option", value === order ? { value, selected: "" } : { value }, label)));
  }

  function draw() {
    frame.update();
    header.textContent = kind === "grep" ? model.get("header") : "";
    header.hidden = !header.textContent;
    tools.replaceChildren(kind === "grep" ? refiners() : orderSelect(), model.get("spill")
      ? h("button", {
        class: "dsh-btn dsh-spill", type: "button", "data-key": "spill",
        title: `page through the complete saved result of ${model.get("spill_name")}`,
        "aria-expanded": model.get("panel").anchor === "spill" ? "true" : "false",
        onclick: () => request("spill", {}, { focus: "open" }),
      }, "open the full result")
      : "");
    const panel = model.get("panel");
    const list = h("div", { class: "dsh-groups", role: "tree", "aria-label": `${kind} results` });
    let section = null;
    if (panel.anchor === "spill") {
      section = renderWindow(panel, request, { closable: true, id: "dsh-panel" });
      list.append(section);
    }
    for (const grp of groupsOf()) {
      const open = !collapsed.has(grp.key);
      const toggle = h("button", {
        class: "dsh-toggle", type: "button", tabindex: "-1", "aria-label": open ? "collapse" : "expand",
        onclick: event => {
          event.stopPropagation();
          fold(grp.key);
        },
      }, open ? "▾" : "▸");
      const headProps = {
        class: `dsh-group-head${panel.anchor === `file:${grp.group}` ? " dsh-opener" : ""}`, role: "treeitem",
        "aria-expanded": open ? "true" : "false", "data-fold": grp.key, "data-key": `group:${grp.group}`,
      };
      // Every head is a row the arrow keys reach: a grep file's head opens the file, a glob
      // folder's head folds (Enter, or ArrowLeft/ArrowRight).
      Object.assign(headProps, { "data-row": "", tabindex: "-1", "data-group": grp.group });
      if (grp.headAction) headProps["data-action"] = grp.headAction;
      const head = h("div", headProps, toggle, kind === "grep" ? rowIcon("file", grp.key).make() : icon("folder"),
        h("span", { class: "dsh-label" }, grp.label), h("span", { class: "dsh-count" }, String(grp.count)),
        kind === "grep" ? copyButton(grp.key) : null);
      if (grp.headAction) {
        head.addEventListener("click", () => request(grp.headAction, { group: grp.group }, { focus: "open" }));
      }
      const items = h("div", { class: "dsh-items", role: "group" });
      if (panel.anchor === `file:${grp.group}`) {
        section = renderWindow(panel, request, { closable: true, id: "dsh-panel" });
        items.append(section);
      }
      if (open) {
        for (const item of grp.items) {
          const opener = panel.anchor === item.key;
          items.append(h("div", {
            class: `dsh-item${opener ? " dsh-opener" : ""}${item.context ? " dsh-context" : ""}`, role: "treeitem", "data-row": "", tabindex: "-1",
            "data-key": item.key, "data-action": item.action, "data-group": grp.group, "data-index": item.index,
            "aria-expanded": opener ? "true" : "false", title: item.title,
            onclick: () => request(item.action, { group: grp.group, index: item.index }, { focus: "open" }),
          }, item.line !== undefined ? h("span", { class: "dsh-ln" }, item.line) : null, item.content));
          if (opener) {
            section = renderWindow(panel, request, { closable: true, id: "dsh-panel" });
            items.append(section);
          }
        }
      }
      list.append(h("div", { class: "dsh-group", role: "none" }, head, items));
    }
    body.replaceChildren(list);
    return section;
  }

  frame.onDone(after => {
    if (after.focus !== "open") return;
    const section = root.querySelector("#dsh-panel");
    if (section) {
      section.scrollIntoView({ block: "nearest" });
      revealHit(section);
      const close = section.querySelector(".dsh-close");
      if (close) close.focus({ preventScroll: true });
    }
  });
  let lastAnchor = model.get("panel").anchor || "";
  frame.onDone(after => {
    if (after.focus === "opener") {
      const opener = lastAnchor && root.querySelector(`[data-key="${lastAnchor.startsWith("file:") ? `group:${lastAnchor.slice(5)}` : lastAnchor}"]`);
      if (opener) activate(root, opener);
      else firstRow(root, true);
    }
    lastAnchor = model.get("panel").anchor || "";
  });

  model.on("change", () => keepFocus(root, draw));
  draw();
  firstRow(root, false);
  return () => frame.dispose();
}

export function renderGlob(model, el) {
  return renderSearch(model, el, "glob");
}

export function renderGrep(model, el) {
  return renderSearch(model, el, "grep");
}

