// frame.js: what every view shares: title bar, error and notice lines, the body, the model's
// footer, the model view, one request at a time with a busy state, and the kernel-gone banner.
//
// Why it exists: each view must say what it shows, repeat the model's footer verbatim, show
// within 100 ms that a call runs, never queue clicks, and say plainly when its kernel is gone.
// It never builds rows (the views do) and never rewrites model text: it shows it as it came.

import { h } from "../common/dom";
import { copyButton, spillParts } from "./dom.js";

const SLOW_MS = 4000; // after this, the busy line says the kernel has not answered yet
export const STOP_MS = 1000; // after this, a call still running can be stopped (the stop button)
const STOP_GRACE_MS = 3000; // a stopped call whose answer never came is let go after this
export const POLL_MS = 2000; // a live view asks whether its subject changed this often, while on screen

export function createFrame(model, el, view) {
  const spinner = h("span", { class: "dsh-spinner", "aria-hidden": "true" });
  const busyText = h("span", { class: "dsh-busy-text", role: "status", "aria-live": "polite" });
  // A call that runs longer than STOP_MS (a broad search, a huge folder) can be stopped: the
  // button interrupts the kernel, as the notebook's own stop button does; the running rg is
  // killed and the view says the call was stopped. Only where the host gives the kernel to us.
  const stopButton = h("button", {
    class: "dsh-btn dsh-stop", type: "button", hidden: true, title: "stop this call (interrupts the kernel)",
    onclick: () => {
      const kernel = model.widget_manager && model.widget_manager.kernel;
      if (kernel && typeof kernel.interrupt === "function") void kernel.interrupt();
      // An interrupt that lands just as the call ends can swallow its answer: the view is not
      // left busy for ever, it lets go a few seconds later.
      const stopped = pending;
      setTimeout(() => {
        if (pending === stopped && stopped !== null) finish({ done: stopped.seq, ok: false });
      }, STOP_GRACE_MS);
    },
  }, "■ stop");
  const titleText = h("span", { class: "dsh-title-text" });
  const modelButton = h("button", {
    class: "dsh-btn dsh-model-toggle", type: "button", "aria-pressed": "false",
    title: "show exactly the text the model sees",
  }, "model view");
  const tools = h("span", { class: "dsh-tools" });
  const titleBar = h("div", { class: "dsh-titlebar" }, titleText, spinner, busyText, stopButton, tools, modelButton);
  const controls = h("div", { class: "dsh-controls" });
  const notice = h("div", { class: "dsh-notice", role: "status" });
  const error = h("div", { class: "dsh-error", role: "alert" });
  const body = h("div", { class: "dsh-body" });
  const footerText = h("pre", { class: "dsh-footer-text" });
  const footerNote = h("span", { class: "dsh-footer-note" });
  const footer = h("div", { class: "dsh-footer", "aria-label": "the model's footer" },
    h("span", { class: "dsh-footer-label" }, "the model's footer", footerNote), footerText);
  const modelBox = h("pre", { class: "dsh-model", "aria-label": "the model's text" });
  const gone = h("div", { class: "dsh-gone", role: "alert" },
    "This explorer's kernel has restarted or stopped, so it cannot fetch anything. Re-run this cell to explore again.");
  const root = h("div", {
    class: `dsh dsh-${view}`, role: "region",
    "aria-label": `dsh ${view}`,
  }, gone, titleBar, controls, notice, error, body, footer, modelBox);
  el.append(root);

  let seq = 0;
  let pending = null;
  // A request made after the answer's state is drawn but before its "done" (one task later) is
  // kept and sent at "done": the rows it was made on are the ones shown. One made before the
  // state came is dropped when the state comes, as the row it named may no longer be there.
  let waiting = null;
  let changes = 0;
  model.on("change", () => { changes += 1; });
  const doneHooks = [];
  const frame = { model, root, titleBar, tools, controls, body, footer, footerNote, request, onDone, update, isBusy, awaited, live };

  function isBusy() {
    return pending !== null;
  }

  /** What the request in flight asked to happen once it is done (its `after`), or null. */
  function awaited() {
    return pending ? pending.after : null;
  }

  /**
   * Send one action; false (nothing sent) when the kernel is gone. While another is pending it
   * waits for that one's "done" (the last one made wins) and is sent then only if no new state
   * came meanwhile. A `quiet` request (a live view's poll) shows no busy state, and a person's
   * request may replace it: a click never waits for a poll.
   */
  function request(action, args = {}, after = {}) {
    if (root.classList.contains("dsh-is-gone")) return false;
    if (pending && !pending.after.quiet) {
      if (after.quiet) return false;
      waiting = { action, args, after, changes };
      return true;
    }
    if (pending) {
      clearTimeout(pending.slow);
      clearTimeout(pending.stop);
    }
    seq += 1;
    pending = { seq, after, started: performance.now() };
    if (!after.quiet) {
      root.setAttribute("aria-busy", "true");
      root.classList.add("dsh-busy");
      pending.slow = setTimeout(() => {
        if (!busyText.textContent) busyText.textContent = "waiting for the kernel…"; // progress, if any, stays
      }, SLOW_MS);
      const kernel = model.widget_manager && model.widget_manager.kernel;
      if (kernel && typeof kernel.interrupt === "function") {
        pending.stop = setTimeout(() => { stopButton.hidden = false; }, STOP_MS);
      }
    }
    try {
      model.send({ action, seq, ...args });
    } catch (error) {
      markGone(); // the comm is closed: the kernel restarted or stopped
      return false;
    }
    return true;
  }

  function onDone(hook) {
    doneHooks.push(hook);
  }

  // The state update a request caused arrives before its "done"; ipywidgets applies updates
  // through a promise chain, so "done" is handled one task later, after the rows are drawn.
  model.on("msg:custom", msg => {
    // a long search says how far it got while it runs: shown in the busy line
    if (msg && typeof msg.progress === "string") {
      if (pending && !pending.after.quiet) busyText.textContent = msg.progress;
      return;
    }
    setTimeout(() => finish(msg), 0);
  });

  function finish(msg) {
    if (!pending || !msg || msg.done !== pending.seq) return;
    const finished = pending;
    clearTimeout(finished.slow);
    clearTimeout(finished.stop);
    stopButton.hidden = true;
    pending = null;
    root.removeAttribute("aria-busy");
    root.classList.remove("dsh-busy");
    busyText.textContent = "";
    root.dataset.lastMs = String(Math.round(performance.now() - finished.started));
    for (const hook of doneHooks) hook(finished.after, msg);
    const next = waiting;
    waiting = null;
    if (next && next.changes === changes) request(next.action, next.args, next.after);
  }

  modelButton.addEventListener("click", () => request("model_view", { on: !model.get("model_view") }));

  // A live view (a listing, the call log) asks the kernel every POLL_MS whether what it shows
  // changed, only while it is on screen: the page visible, the view in the viewport, nothing
  // pending. The kernel answers with a new state only when something changed.
  let onScreen = false;
  let timer = null;
  const seen = typeof IntersectionObserver === "function"
    ? new IntersectionObserver(entries => { onScreen = entries.some(e => e.isIntersecting); })
    : null;
  function live(everyMs = POLL_MS) {
    if (timer !== null) return;
    if (seen) seen.observe(root);
    else onScreen = true;
    timer = setInterval(() => {
      if (!onScreen || document.hidden || pending || !root.isConnected) return;
      request("poll", {}, { quiet: true });
    }, everyMs);
  }

  function update() {
    titleText.replaceChildren(
      h("b", { class: "dsh-tool" }, model.get("title")),
      model.get("subject") ? h("code", { class: "dsh-subject" }, model.get("subject")) : null,
      model.get("summary") ? h("span", { class: "dsh-summary" }, model.get("summary")) : null,
    );
    const err = model.get("error");
    error.textContent = err;
    error.hidden = !err;
    const note = model.get("notice");
    notice.replaceChildren();
    notice.hidden = !note;
    if (note) {
      notice.append(h("span", {}, note));
      if (view === "listing" && /changed/.test(note)) {
        notice.append(h("button", { class: "dsh-btn", type: "button", onclick: () => request("refresh") }, "refresh"));
      }
    }
    const foot = model.get("footer");
    // A saved result's path sits under Jupyter's runtime folder and is long: shown by its file
    // name, the whole path on hover and on the copy button (the model view keeps the text as is).
    const spill = spillParts(foot);
    if (spill) {
      footerText.replaceChildren(spill.before,
        h("span", { class: "dsh-spill-path", title: spill.full }, spill.short), copyButton(spill.full), spill.after);
    } else {
      footerText.textContent = foot;
    }
    footerNote.textContent = model.get("footer_note");
    footer.hidden = !foot;
    const on = model.get("model_view");
    modelButton.setAttribute("aria-pressed", on ? "true" : "false");
    modelButton.classList.toggle("dsh-on", on);
    modelBox.textContent = model.get("model_shown");
    modelBox.hidden = !on;
  }

  // The kernel is gone after a restart or a shutdown: the models of the old kernel never answer
  // again. JupyterLab's widget manager reports it through the kernel's status (watched when the
  // host exposes it), other hosts by marking the view disconnected; a send that fails says so too.
  function markGone() {
    root.classList.add("dsh-is-gone");
    waiting = null;
    if (pending) {
      clearTimeout(pending.slow);
      clearTimeout(pending.stop);
      stopButton.hidden = true;
      pending = null;
      root.removeAttribute("aria-busy");
      root.classList.remove("dsh-busy");
      busyText.textContent = "";
    }
  }
  const observer = new MutationObserver(() => {
    if (el.classList.contains("jupyter-widgets-disconnected")) markGone();
  });
  observer.observe(el, { attributes: true, attributeFilter: ["class"] });
  const kernel = model.widget_manager && model.widget_manager.kernel;
  const onStatus = (_kernel, state) => {
    if (state === "restarting" || state === "autorestarting" || state === "dead") markGone();
  };
  if (kernel && kernel.statusChanged && kernel.statusChanged.connect) kernel.statusChanged.connect(onStatus);
  frame.dispose = () => {
    observer.disconnect();
    if (timer !== null) clearInterval(timer);
    if (seen) seen.disconnect();
    if (kernel && kernel.statusChanged && kernel.statusChanged.disconnect) kernel.statusChanged.disconnect(onStatus);
  };
  return frame;
}

/**
 * A pager: previous / next / status / jump box. `state` is {prev, next, offset, noun}; the box
 * takes an entry (or a line) number and Enter jumps, like the go button.
 */
export function pager(state, status, { onPrev, onNext, onJump, onEnd = null, jumpLabel = "offset", key = "page" }) {
  const prev = h("button", {
    class: "dsh-btn dsh-prev", type: "button", disabled: !state.prev, title: "the page before this one",
    "data-key": `${key}-prev`,
    "aria-label": "previous page", onclick: onPrev,
  }, "‹ previous");
  const next = h("button", {
    class: "dsh-btn dsh-next", type: "button", disabled: !state.next, title: "the page after this one",
    "data-key": `${key}-next`,
    "aria-label": "next page", onclick: onNext,
  }, "next ›");
  // a read window's last page: read's negative offset, so a big file is not counted to get there
  const end = onEnd
    ? h("button", {
      class: "dsh-btn dsh-end", type: "button", disabled: !state.end, title: "the last lines of the file",
      "data-key": `${key}-end`, "aria-label": "last page", onclick: onEnd,
    }, "end »")
    : null;
  const box = h("input", {
    class: "dsh-jump", type: "text", inputmode: "numeric", size: "9", "aria-label": jumpLabel,
    placeholder: jumpLabel, value: state.offset ?? "", "data-key": `${key}-box`,
  });
  const go = () => {
    const n = parseInt(box.value.replace(/[,\s]/g, ""), 10);
    // a negative line counts from the end where the window reads files (-200: the last 200 lines)
    if (Number.isFinite(n) && (n >= 1 || (onEnd && n < 0))) onJump(n);
  };
  box.addEventListener("keydown", event => {
    if (event.key === "Enter") {
      event.preventDefault();
      event.stopPropagation();
      go();
    }
  });
  const goButton = h("button", { class: "dsh-btn", type: "button", onclick: go, title: `show the page at this ${jumpLabel}` }, "go");
  return h("div", { class: "dsh-pager", role: "group", "aria-label": "pager" },
    prev, next, end, h("span", { class: "dsh-status" }, status), h("label", { class: "dsh-jump-label" }, box, goButton));
}
