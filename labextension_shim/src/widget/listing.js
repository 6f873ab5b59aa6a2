// listing.js: a directory page like a file browser: breadcrumb, name filter, sortable columns
// (name / size / modified, sorted by the kernel over the whole listing), compact rows with
// icons, human sizes and relative times, and a file's read window opened below its row.
//
// Why it exists: to draw ListingView's one page of plain rows. Sorting and filtering are
// requests (the page may not hold the entries a sort brings first); the model's own order is
// the default and is named as such. It never reorders or filters rows itself.

import { h } from "../common/dom";
import { humanSize } from "../common/format";
import { copyButton, exactTime, relativeTime, rowIcon } from "./dom.js";
import { createFrame, pager } from "./frame.js";
import { activate, bindKeys, firstRow, keepFocus } from "./keys.js";
import { renderWindow, revealHit } from "./window.js";

const COLUMNS = [["name", "name"], ["size", "size"], ["modified", "modified"]];
const FILTER_DELAY_MS = 250;

export function renderListing(model, el) {
  const frame = createFrame(model, el, "listing");
  frame.live(); // a changed folder, or a call that landed, shows without a click
  const { root, controls, body, request } = frame;
  const crumbs = h("nav", { class: "dsh-crumbs", "aria-label": "folders above this one" });
  const filter = h("input", {
    class: "dsh-filter", type: "search", placeholder: "filter names  ( / )", "aria-label": "filter names",
    "data-key": "filter", spellcheck: "false",
  });
  const refresh = h("button", {
    class: "dsh-btn", type: "button", title: "list this folder again", "data-key": "refresh",
    onclick: () => request("refresh", {}, { focus: "first" }),
  }, "↻ refresh");
  const order = h("span", { class: "dsh-order" });
  const pagerSlot = h("span", { class: "dsh-pager-slot" });
  controls.append(crumbs, h("div", { class: "dsh-toolbar" }, filter, refresh, pagerSlot), order);

  let timer = null;
  const sendFilter = () => {
    clearTimeout(timer);
    if (filter.value !== model.get("filter")) request("filter", { text: filter.value }, { focus: "keep" });
  };
  filter.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(sendFilter, FILTER_DELAY_MS);
  });
  filter.addEventListener("keydown", event => {
    if (event.key === "Enter") {
      event.preventDefault();
      event.stopPropagation();
      sendFilter();
    }
  });

  const open = index => request("open", { index }, { focus: "open", index });
  const up = () => (model.get("crumbs").length > 1 ? request("up", {}, { focus: "first" }) : false);
  bindKeys(root, {
    onEnter: row => open(Number(row.dataset.index)),
    onParent: up,
    onFilter: () => filter.focus(),
    onEscape: () => request("close", {}, { focus: "opener" }),
  });

  function drawCrumbs() {
    const list = model.get("crumbs");
    crumbs.replaceChildren(h("ol", {}, list.map(([label, path], i) => {
      const last = i === list.length - 1;
      return h("li", {}, h("button", {
        class: "dsh-crumb", type: "button", "aria-current": last ? "location" : null, disabled: last,
        title: `list ${path}`, onclick: () => request("crumb", { path }, { focus: "first" }),
      }, label));
    })));
  }

  function header() {
    const sort = model.get("sort");
    const desc = model.get("descending");
    const cells = COLUMNS.map(([key, label]) => {
      const active = sort === key;
      const state = active ? (desc ? "descending" : "ascending") : "none";
      return h("div", { role: "columnheader", class: `dsh-col dsh-col-${key}`, "aria-sort": state },
        h("button", {
          class: "dsh-sort", type: "button", "data-key": `sort-${key}`,
          title: `sort the whole listing by ${label}${active ? (desc ? " (now descending)" : " (now ascending)") : ""}`,
          onclick: () => request("sort", { key }, { focus: "keep" }),
        }, label, h("span", { class: "dsh-arrow", "aria-hidden": "true" }, active ? (desc ? "▼" : "▲") : "")));
    });
    const modelOrder = sort === "model" && !desc;
    cells[0].append(h("button", {
      class: modelOrder ? "dsh-model-order dsh-on" : "dsh-model-order", type: "button", "data-key": "sort-model",
      "aria-pressed": modelOrder ? "true" : "false", title: "the order the model sees (directories first)",
      onclick: () => request("sort", { key: "model", descending: false }, { focus: "keep" }),
    }, "model's order"));
    return h("div", { role: "row", class: "dsh-head-row" }, cells);
  }

  // Row elements are made once and refilled for every page: a page change rewrites 200 rows'
  // text instead of building 1,600 elements, which keeps a click near the cost of the call.
  const grid = h("div", { role: "grid", class: "dsh-grid" });
  const empty = h("div", { class: "dsh-empty" }, "no entries here");
  const pool = [];
  const icons = {};

  function makeRow() {
    const parts = {
      icon: h("span", { class: "dsh-icon-slot" }),
      label: h("span", { class: "dsh-label" }),
      copy: h("span", { class: "dsh-copy-slot" }),
      size: h("div", { role: "gridcell", class: "dsh-cell dsh-size" }),
      mtime: h("div", { role: "gridcell", class: "dsh-cell dsh-mtime" }),
      kind: "",
    };
    const el = h("div", { role: "row", "data-row": "", tabindex: "-1" },
      h("div", { role: "gridcell", class: "dsh-cell dsh-name" }, parts.icon, parts.label, parts.copy), parts.size, parts.mtime);
    el.addEventListener("click", () => open(Number(el.dataset.index)));
    el.dshParts = parts;
    return el;
  }

  function fillRow(el, entry, index, panel) {
    const p = el.dshParts;
    const opener = panel.anchor === `row:${index}`;
    el.className = `dsh-row dsh-${entry.type}${opener ? " dsh-opener" : ""}`;
    el.dataset.index = index;
    el.dataset.key = `row:${index}`;
    el.title = entry.target ? `${entry.label} -> ${entry.target} (not followed)`
      : entry.type === "directory" ? "list this folder" : entry.type === "file" ? "open it below" : "not a regular file";
    if (entry.type === "file") el.setAttribute("aria-expanded", opener ? "true" : "false");
    else el.removeAttribute("aria-expanded");
    if (opener) el.setAttribute("aria-controls", "dsh-panel");
    else el.removeAttribute("aria-controls");
    const pick = rowIcon(entry.type, entry.name);
    if (p.kind !== pick.key) {
      icons[pick.key] = icons[pick.key] || pick.make();
      p.icon.replaceChildren(icons[pick.key].cloneNode(true));
      p.kind = pick.key;
    }
    p.label.textContent = entry.label;
    const folder = model.get("path");
    const path = folder === "." ? entry.name : `${folder.replace(/\/$/, "")}/${entry.name}`;
    p.copy.replaceChildren(copyButton(path));
    p.size.textContent = humanSize(entry.size);
    p.mtime.textContent = relativeTime(entry.mtime);
    p.mtime.title = exactTime(entry.mtime);
  }

  let headKey = "";
  function drawBody() {
    const panel = model.get("panel");
    const list = model.get("rows");
    grid.setAttribute("aria-label", `entries of ${model.get("subject")}`);
    grid.setAttribute("aria-rowcount", model.get("matched") + 1);
    const key = `${model.get("sort")}:${model.get("descending")}`;
    if (key !== headKey || !grid.firstChild) {
      const head = header();
      if (grid.firstChild) grid.replaceChild(head, grid.firstChild);
      else grid.append(head);
      headKey = key;
    }
    for (const old of grid.querySelectorAll(":scope > .dsh-panel-row, :scope > .dsh-empty")) old.remove();
    while (pool.length < list.length) pool.push(makeRow());
    list.forEach((entry, index) => fillRow(pool[index], entry, index, panel));
    for (let i = 0; i < pool.length; i += 1) {
      const el = pool[i];
      if (i < list.length && el.parentNode !== grid) grid.append(el);
      else if (i >= list.length && el.parentNode === grid) el.remove();
    }
    let section = null;
    if (panel.anchor && panel.anchor.startsWith("row:")) {
      const at = Number(panel.anchor.slice(4));
      if (at < list.length) {
        section = renderWindow(panel, request, { closable: true, id: "dsh-panel" });
        pool[at].after(h("div", { role: "row", class: "dsh-panel-row" }, h("div", { role: "gridcell" }, section)));
      }
    }
    if (!list.length) grid.append(empty);
    if (grid.parentNode !== body) body.replaceChildren(grid);
    return section;
  }

  function draw() {
    frame.update();
    drawCrumbs();
    if (document.activeElement !== filter) filter.value = model.get("filter");
    order.textContent = model.get("order");
    pagerSlot.replaceChildren(pager(model.get("pager"), model.get("status"), {
      onPrev: () => request("page", { where: "previous" }, { focus: "first" }),
      onNext: () => request("page", { where: "next" }, { focus: "first" }),
      onJump: n => request("page", { where: n }, { focus: "first" }),
    }));
    return drawBody();
  }

  // A new page's rows are drawn when its state arrives, a task before its "done": the focus goes
  // to the first row then, so a key pressed meanwhile moves from there, and "done" leaves a row
  // the person has moved to since where it is (it used to take the focus back to the first row).
  const startsAtFirst = after =>
    after && (after.focus === "first" || (after.focus === "open" && !model.get("panel").anchor));
  let lastAnchor = "";
  frame.onDone(after => {
    if (after.focus === "first" && !after.placed) firstRow(root, true);
    const panel = model.get("panel");
    if (after.focus === "open" && panel.anchor) {
      const section = root.querySelector("#dsh-panel");
      if (section) {
        section.scrollIntoView({ block: "nearest" });
        revealHit(section);
        const close = section.querySelector(".dsh-close");
        if (close) close.focus({ preventScroll: true });
      }
    } else if (after.focus === "open" && !after.placed) {
      firstRow(root, true); // a folder was opened: its first row
    }
    if (after.focus === "opener" && lastAnchor.startsWith("row:")) {
      activate(root, root.querySelector(`[data-key="${lastAnchor}"]`));
    }
    lastAnchor = panel.anchor || "";
  });

  model.on("change", () => {
    keepFocus(root, draw);
    const after = frame.awaited();
    if (startsAtFirst(after) && !after.placed) {
      firstRow(root, true);
      after.placed = true;
    }
  });
  draw();
  firstRow(root, false);
  lastAnchor = model.get("panel").anchor || "";
  return () => frame.dispose();
}
