// dom.js: the widgets' own element helpers and formats (times, file-type icons, copy buttons).
//
// Why it exists: every view draws its rows from plain data; these helpers keep that short and
// the formats the same everywhere. `h()` and `humanSize` are shared with the JupyterLab sidebar
// (../common/). They never touch the model or send anything.

import { h } from "../common/dom";
// JupyterLab's own icons (@jupyterlab/ui-components), bundled as SVG text: they draw with any
// font, where a character such as U+29C9 shows as a box with common fonts.
import copySvg from "@jupyterlab/ui-components/style/icons/toolbar/copy.svg";
import checkSvg from "@jupyterlab/ui-components/style/icons/toolbar/check.svg";

/** Epoch seconds as "5 min ago", "3 days ago", "in the future"; "" for none. */
export function relativeTime(seconds, now = Date.now()) {
  if (seconds === null || seconds === undefined) return "";
  const diff = (now - seconds * 1000) / 1000;
  if (diff < -60) return "in the future";
  if (diff < 45) return "just now";
  const steps = [[60, "second"], [60, "min"], [24, "hour"], [30, "day"], [12, "month"], [Infinity, "year"]];
  let value = diff;
  for (let i = 0; i < steps.length; i += 1) {
    const [size, name] = steps[i];
    if (value < size || i === steps.length - 1) {
      const n = Math.max(1, Math.round(value));
      const word = name === "min" ? "min" : n === 1 ? name : `${name}s`;
      return `${n} ${word} ago`;
    }
    value /= size;
  }
  return "";
}

/** Epoch seconds as the exact local date and time (the tooltip of a relative time). */
export function exactTime(seconds) {
  if (seconds === null || seconds === undefined) return "";
  const d = new Date(seconds * 1000);
  const pad = n => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

const CODE = /\.(py|ipynb|js|mjs|ts|tsx|jsx|json|ya?ml|toml|c|h|cc|cpp|hpp|rs|go|java|rb|sh|sql|css|html?)$/i;
const TEXT = /\.(md|rst|txt|log|csv|tsv|cfg|ini)$/i;
const IMAGE = /\.(png|jpe?g|gif|svg|webp|bmp|ico)$/i;

// 16x16 outlines drawn with currentColor; the colour comes from the stylesheet per kind.
const PATHS = {
  folder: "M1.5 3.5h4.2l1.5 1.6h7.3v8.4H1.5z",
  file: "M3.5 1.5h6l3 3v10h-9z M9.5 1.5v3h3",
  code: "M3.5 1.5h6l3 3v10h-9z M9.5 1.5v3h3 M6.5 8l-1.5 1.8 1.5 1.8 M9.5 8l1.5 1.8-1.5 1.8",
  text: "M3.5 1.5h6l3 3v10h-9z M9.5 1.5v3h3 M5.5 8h5 M5.5 10h5 M5.5 12h3",
  image: "M2.5 2.5h11v11h-11z M2.5 11l3.5-3.5 3 3 2-2 2.5 2.5",
  link: "M6.5 9.5l3-3 M7 5l1.2-1.2a2.3 2.3 0 013.3 3.3L10.3 8.3 M9 11l-1.2 1.2a2.3 2.3 0 01-3.3-3.3L5.7 7.7",
};

/** Which icon a row gets: folder, link, or by the name's extension. */
export function iconKind(type, name) {
  if (type === "directory") return "folder";
  if (type === "other") return "link";
  if (CODE.test(name)) return "code";
  if (TEXT.test(name)) return "text";
  if (IMAGE.test(name)) return "image";
  return "file";
}

// JupyterLab's own file-type icons, when its dsh extension is on the page: it answers the
// "dsh-jupyter:probe" event with `fileIcon(name)` -> {name, svg} from the document registry (the
// icons of the file browser). Asked once per page; each icon parsed once per file type.
let labIcons;
const labParsed = new Map();

function labIconFor(name) {
  if (labIcons === undefined) {
    const detail = {};
    document.dispatchEvent(new CustomEvent("dsh-jupyter:probe", { detail }));
    labIcons = typeof detail.fileIcon === "function" ? detail.fileIcon : null;
  }
  if (!labIcons) return null;
  let found = null;
  try {
    found = labIcons(name);
  } catch (error) {
    return null;
  }
  if (!found || !found.svg) return null;
  if (!labParsed.has(found.name)) {
    const doc = new DOMParser().parseFromString(found.svg, "image/svg+xml");
    const svg = doc.documentElement;
    if (svg.nodeName.toLowerCase() !== "svg") return null;
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("class", "dsh-icon dsh-icon-lab");
    svg.setAttribute("data-lab-icon", found.name);
    labParsed.set(found.name, document.importNode(svg, true));
  }
  return labParsed.get(found.name);
}

/** The icon of a row: JupyterLab's icon for the file's type when it has one, else `iconKind`'s. */
export function rowIcon(type, name) {
  if (type === "file") {
    const lab = labIconFor(name);
    if (lab) return { key: `lab:${lab.getAttribute("data-lab-icon")}`, make: () => lab.cloneNode(true) };
  }
  const kind = iconKind(type, name);
  return { key: kind, make: () => icon(kind) };
}

/** A small inline SVG icon (aria-hidden: the row's name says what it is). */
export function icon(kind) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", `dsh-icon dsh-icon-${kind}`);
  const path = document.createElementNS(ns, "path");
  path.setAttribute("d", PATHS[kind] || PATHS.file);
  svg.append(path);
  return svg;
}

/** Put `text` on the clipboard (the async API where the page may use it, else a hidden box). */
export function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const box = document.createElement("textarea");
  box.value = text;
  box.setAttribute("readonly", "");
  box.style.position = "fixed";
  box.style.opacity = "0";
  document.body.append(box);
  box.select();
  try {
    document.execCommand("copy");
  } finally {
    box.remove();
  }
  return Promise.resolve();
}

/**
 * A small "copy path" button for a row: copies `path` (as the tools take it), says "copied" for
 * a moment, and never opens the row it sits in.
 */
export function copyButton(path) {
  const button = h("button", {
    class: "dsh-copy", type: "button", tabindex: "-1", title: `copy path: ${path}`,
    "aria-label": `copy the path ${path}`, "data-copy": path,
  });
  button.innerHTML = copySvg; // bundled, constant SVG: no page data goes into markup
  button.addEventListener("click", event => {
    event.stopPropagation();
    copyText(path).then(() => {
      button.innerHTML = checkSvg;
      button.title = "copied";
      setTimeout(() => { button.innerHTML = copySvg; button.title = `copy path: ${path}`; }, 1200);
    }, () => { button.title = "the browser refused the clipboard"; });
  });
  return button;
}

const SPILL = /^(.*stored at: )(\S+?)(\. Use read[\s\S]*)$/;

/**
 * A footer's saved-result path, short: the text before it, the file's name, the text after it
 * and the full path (for the hover and the copy). Null when the footer names no saved result.
 */
export function spillParts(footer) {
  const found = SPILL.exec(footer || "");
  if (!found) return null;
  const full = found[2];
  return { before: found[1], short: `…/${full.split("/").pop()}`, after: found[3], full };
}
