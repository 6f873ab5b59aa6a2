// main.js: the anywidget entry point: picks the renderer for the view's `kind`.
//
// Why it exists: every dsh view shares one front end (these modules, bundled by esbuild into
// dsh_jupyter/kernel/widgets/static/widget.js and widget.css, which anywidget loads as `_esm` and
// `_css`); the kind says which renderer draws it. The read view is drawn here: it is one read window.

import "./dsh.css";
import { createFrame } from "./frame.js";
import { bindKeys, keepFocus } from "./keys.js";
import { renderWindow, revealHit } from "./window.js";
import { renderListing } from "./listing.js";
import { renderGlob, renderGrep } from "./search.js";
import { renderCalls, renderSpills } from "./calls.js";
import { renderReplace } from "./replace.js";

function renderRead(model, el) {
  const frame = createFrame(model, el, "read");
  frame.titleBar.classList.add("dsh-hidden-title"); // the window bar names the file
  bindKeys(frame.root, {});
  let first = true;
  function draw() {
    frame.update();
    // the frame already shows a failed call's error above the window and the model's footer below
    // it: the window repeats neither; its bar (what is read, back, outline, open in editor) goes in
    // the frame's title bar, so the view has one bar, not an empty one above the window's
    const section = renderWindow({ ...model.get("panel"), error: "", footer: "" }, frame.request);
    const bar = section.querySelector(".dsh-window-bar");
    if (bar) frame.tools.replaceChildren(bar);
    frame.body.replaceChildren(section);
    if (first) {
      requestAnimationFrame(() => revealHit(section));
      first = false;
    }
  }
  frame.onDone(() => {
    const section = frame.root.querySelector(".dsh-window");
    if (section) revealHit(section);
  });
  model.on("change", () => keepFocus(frame.root, draw, ".dsh-lines"));
  draw();
  return () => frame.dispose();
}

const RENDERERS = {
  listing: renderListing,
  read: renderRead,
  glob: renderGlob,
  grep: renderGrep,
  replace: renderReplace,
  calls: renderCalls,
  spills: renderSpills,
};

function render({ model, el }) {
  const draw = RENDERERS[model.get("kind")];
  if (!draw) {
    el.textContent = `dsh: no view for kind ${JSON.stringify(model.get("kind"))}`;
    return undefined;
  }
  return draw(model, el);
}

export default { render };
