// calls.js: the session's call log (one page of titles, filters by tool and failures, one call's
// exact text when expanded) and the saved results (named by their query, opened below).
//
// Why it exists: to draw CallLogView's and SpillsView's plain rows. The browser holds titles
// and at most the expanded call's text, which the kernel sends verbatim; nothing here rewrites it.

import { h } from "../common/dom";
import { humanSize } from "../common/format";
import { exactTime, relativeTime } from "./dom.js";
import { createFrame, pager } from "./frame.js";
import { bindKeys, firstRow, keepFocus } from "./keys.js";
import { renderWindow, revealHit } from "./window.js";

function clock(seconds) {
  return exactTime(seconds).slice(11);
}

export function renderCalls(model, el) {
  const frame = createFrame(model, el, "calls");
  frame.live(); // a changed folder, or a call that landed, shows without a click
  const { root, controls, body, request } = frame;
  const toolBox = h("select", { class: "dsh-select", "aria-label": "show calls of", "data-key": "tool-filter" });
  const errorsBox = h("input", { type: "checkbox", class: "dsh-check", "data-key": "errors-only" });
  const newest = h("button", {
    class: "dsh-btn", type: "button", "data-key": "newest", title: "show the newest calls (including those made since)",
    onclick: () => request("newest", {}, { focus: "first" }),
  }, "↻ newest");
  const pagerSlot = h("span", { class: "dsh-pager-slot" });
  const setFilter = () => request("filter", { tool: toolBox.value, errors_only: errorsBox.checked }, { focus: "keep" });
  toolBox.addEventListener("change", setFilter);
  errorsBox.addEventListener("change", setFilter);
  controls.append(h("div", { class: "dsh-toolbar" }, toolBox,
    h("label", { class: "dsh-check-label" }, errorsBox, "errors only"), newest, pagerSlot));

  const expand = row => request("expand", { number: Number(row.dataset.number) }, { focus: "keep" });
  bindKeys(root, { onEnter: expand });

  function draw() {
    frame.update();
    const tools = model.get("tools");
    if (toolBox.options.length !== tools.length + 1) {
      toolBox.replaceChildren(h("option", { value: "" }, "all tools"), ...tools.map(t => h("option", { value: t }, t)));
    }
    toolBox.value = model.get("tool_filter");
    errorsBox.checked = model.get("errors_only");
    pagerSlot.replaceChildren(pager(model.get("pager"), model.get("status"), {
      onPrev: () => request("page", { where: "previous" }, { focus: "first" }),
      onNext: () => request("page", { where: "next" }, { focus: "first" }),
      onJump: n => request("page", { where: n }, { focus: "first" }),
    }));
    const expanded = model.get("expanded");
    const list = h("div", { role: "grid", class: "dsh-grid dsh-calls-grid", "aria-label": "calls, newest last" });
    list.append(h("div", { role: "row", class: "dsh-head-row" },
      ["#", "time", "surface", "call", "duration", ""].map(c => h("div", { role: "columnheader", class: "dsh-col" }, c))));
    for (const call of model.get("calls")) {
      const open = expanded === call.number;
      list.append(h("div", {
        role: "row", class: `dsh-row dsh-call${call.error ? " dsh-failed" : ""}${open ? " dsh-opener" : ""}`,
        "data-row": "", "data-number": call.number, "data-key": `call:${call.number}`, tabindex: "-1",
        "aria-expanded": open ? "true" : "false", title: open ? "hide the text" : "show exactly the text the model got",
        onclick: event => expand(event.currentTarget),
      },
      h("div", { role: "gridcell", class: "dsh-cell dsh-num" }, call.number),
      h("div", { role: "gridcell", class: "dsh-cell dsh-time", title: exactTime(call.started) }, clock(call.started)),
      h("div", { role: "gridcell", class: "dsh-cell dsh-surface" }, call.surface),
      h("div", { role: "gridcell", class: "dsh-cell dsh-call-title" }, h("code", { class: "dsh-code" }, call.title)),
      h("div", { role: "gridcell", class: "dsh-cell dsh-ms", title: `${call.ms} ms` }, duration(call.ms)),
      h("div", { role: "gridcell", class: "dsh-cell dsh-flag" }, call.error ? h("span", { class: "dsh-badge-error" }, "ERROR") : "")));
      if (open) {
        list.append(h("div", { role: "row", class: "dsh-panel-row" }, h("div", { role: "gridcell" },
          h("pre", { class: "dsh-call-text", id: "dsh-panel", tabindex: "0", "aria-label": "the exact text of this call" },
            ...(call.tool === "edit" ? diffMarks(model.get("expanded_text")) : [model.get("expanded_text")])))));
      }
    }
    if (!model.get("calls").length) list.append(h("div", { class: "dsh-empty" }, "no calls"));
    body.replaceChildren(list);
  }

  frame.onDone(after => {
    if (after.focus === "first") firstRow(root, true);
    const text = root.querySelector("#dsh-panel");
    if (text) text.scrollIntoView({ block: "nearest" });
  });
  model.on("change", () => keepFocus(root, draw));
  draw();
  firstRow(root, false);
  return () => frame.dispose();
}

export function renderSpills(model, el) {
  const frame = createFrame(model, el, "spills");
  const { root, body, request } = frame;
  const open = row => request("open", { index: Number(row.dataset.index) }, { focus: "open" });
  bindKeys(root, { onEnter: open });

  function draw() {
    frame.update();
    const panel = model.get("panel");
    const list = h("div", { role: "grid", class: "dsh-grid dsh-spills-grid", "aria-label": "saved results" });
    list.append(h("div", { role: "row", class: "dsh-head-row" },
      ["saved by", "tool", "size", "saved"].map(c => h("div", { role: "columnheader", class: "dsh-col" }, c))));
    model.get("spills").forEach((spill, index) => {
      const opener = panel.anchor === `spill:${index}`;
      list.append(h("div", {
        role: "row", class: `dsh-row${opener ? " dsh-opener" : ""}`, "data-row": "", "data-index": index,
        "data-key": `spill:${index}`, tabindex: "-1", title: spill.locator, onclick: () => open({ dataset: { index } }),
        "aria-expanded": opener ? "true" : "false",
      },
      h("div", { role: "gridcell", class: "dsh-cell dsh-name" }, h("code", { class: "dsh-code" }, spill.name)),
      h("div", { role: "gridcell", class: "dsh-cell" }, spill.tool),
      h("div", { role: "gridcell", class: "dsh-cell dsh-size" }, humanSize(spill.size)),
      h("div", { role: "gridcell", class: "dsh-cell dsh-mtime", title: exactTime(spill.created) }, relativeTime(spill.created))));
      if (opener) {
        list.append(h("div", { role: "row", class: "dsh-panel-row" }, h("div", { role: "gridcell" },
          renderWindow(panel, request, { closable: true, id: "dsh-panel" }))));
      }
    });
    body.replaceChildren(list);
  }

  frame.onDone(after => {
    const section = root.querySelector("#dsh-panel");
    if (after.focus === "open" && section) {
      section.scrollIntoView({ block: "nearest" });
      revealHit(section);
    }
  });
  model.on("change", () => keepFocus(root, draw));
  draw();
  firstRow(root, false);
  return () => frame.dispose();
}

/** A duration whole in its column: 12.3 ms under a second, 2.35 s from one second, 95 s from 100 s. */
/**
 * An edit's text as nodes: its diff's added, removed and hunk lines in spans that colour them; the
 * text itself is unchanged (the spans' text joined is the text).
 */
export function diffMarks(text) {
  const kinds = { "+": "dsh-diff-add", "-": "dsh-diff-del", "@": "dsh-diff-hunk" };
  return text.split("\n").map((line, i, all) => {
    const end = i < all.length - 1 ? "\n" : "";
    const kind = kinds[line[0]];
    if (i === 0 || !kind || line.startsWith("+++ ") || line.startsWith("--- ")) return line + end;
    return h("span", { class: kind }, line + end);
  });
}

export function duration(ms) {
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  return s < 100 ? `${s.toFixed(2)} s` : `${Math.round(s)} s`;
}
