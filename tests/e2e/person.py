"""A person in JupyterLab, played in Chromium with Playwright's keyboard, for the person-and-agent trials.

The person keeps one JupyterLab page open for many trials: each trial opens a file (a text file
in the editor, or a notebook on a kernel the lab already runs, so no kernel starts per trial),
clicks at the end of their own line or cell, types (Playwright's keyboard, a few characters at a
time with pauses drawn from the trial's ``random.Random``), saves with Ctrl+S and closes the tab.
Everything else only looks: the document's text as the editor shows it and as its model holds it,
whether it is unsaved, the path its tab has, and every JupyterLab dialog that ever appeared, which
a ``MutationObserver`` installed before the page's own scripts records as it appears (a dialog
that came and went between two looks is still counted).

The page's JupyterLab is reached through ``window.jupyterapp`` (the lab runs with
``--LabApp.expose_app_in_browser=True``). Nothing here changes a document except through the
keyboard; opening and closing go through JupyterLab's own commands, as its menus do.
"""

from __future__ import annotations

import contextlib
import time

__all__ = ["Person", "letters"]

# Every .jp-Dialog that appears in the page, recorded as it appears (its text, cut).
DIALOG_WATCH = """(() => {
  window.__dshDialogs = [];
  const seen = new WeakSet();
  const look = () => {
    for (const d of document.querySelectorAll('.jp-Dialog')) {
      if (!seen.has(d)) { seen.add(d); window.__dshDialogs.push((d.innerText || '').slice(0, 300)); }
    }
  };
  new MutationObserver(look).observe(document, {childList: true, subtree: true});
})();"""

_WIDGET = """const widget = (path) => {
  for (const w of window.jupyterapp.shell.widgets('main')) {
    if (w.context && !w.isDisposed && w.context.path === path) { return w; }
  }
  return null;
};"""


def _js(body: str) -> str:
    return f"(arg) => {{ {_WIDGET} {body} }}"


OPEN = _js("""window.jupyterapp.commands.execute('docmanager:open', arg); return true;""")
READY = _js("""const w = widget(arg.path);
  if (!w || !w.context.isReady) { return false; }
  const c = w.context;
  if (c.__dshSaves === undefined) {  // saves under way (the person's, an autosave, a tab's own)
    c.__dshSaves = 0;
    c.saveState.connect((_, state) => {
      if (state === 'started') { c.__dshSaves++; }
      else if (state === 'completed' || state === 'failed') { c.__dshSaves = Math.max(0, c.__dshSaves - 1); }
    });
  }
  if (!arg.notebook) { return !!(w.content.editor && w.content.editor.doc); }
  const s = w.context.sessionContext;
  return w.content.widgets.length > 0 && !!(s.session && s.session.kernel) && s.kernelDisplayStatus === 'idle';""")
# What the person sees: the editor's text (a notebook: each cell's editor, or its model where the
# cell is not drawn), the model's text, unsaved or not, the tab's path.
SEEN = _js("""const w = widget(arg);
  if (!w) { return null; }
  const m = w.context.model;
  if (Array.isArray(m.sharedModel.cells)) {
    const shown = w.content.widgets.map(
      c => c.editor && c.editor.doc ? c.editor.doc.toString() : c.model.sharedModel.getSource());
    return {shown, model: m.sharedModel.cells.map(c => c.getSource()), ids: m.sharedModel.cells.map(c => c.getId()),
            dirty: m.dirty, path: w.context.path};
  }
  return {shown: w.content.editor.doc.toString(), model: m.sharedModel.getSource(), dirty: m.dirty,
          path: w.context.path};""")
# Where the keyboard types now: the focused editor's line (0-based), column and line length; in
# a notebook, the active cell's index too. Null when no editor of the document has the focus.
CURSOR = _js("""const w = widget(arg);
  if (!w) { return null; }
  let editor = null, cell = null;
  if (w.content.editor) { editor = w.content.editor; }
  else if (w.content.activeCell && w.content.mode === 'edit') {
    editor = w.content.activeCell.editor;
    cell = w.content.activeCellIndex;
  }
  if (!editor || !editor.hasFocus()) { return null; }
  const at = editor.getCursorPosition();
  return {line: at.line, column: at.column, length: editor.getLine(at.line).length, cell};""")
SAVING = _js("""const w = widget(arg); return !!w && w.context.__dshSaves > 0;""")
ARM_SAVE = _js("""const w = widget(arg);
  const c = w.context;
  window.__dshSaveStarted = false;
  window.__dshSave = new Promise(resolve => {
    const seen = (_, state) => {
      if (state === 'started') { window.__dshSaveStarted = true; }
      else if (window.__dshSaveStarted && (state === 'completed' || state === 'failed')) {
        c.saveState.disconnect(seen);
        resolve(state);
      }
    };
    c.saveState.connect(seen);
    setTimeout(() => resolve('no save within 60 s'), 60000);
  });
  return true;""")
CLOSE = _js("""const w = widget(arg); if (w) { w.close(); } return true;""")


class Person:
    """One JupyterLab page, and what a person does in it (see the module docstring)."""

    def __init__(self, page, lab) -> None:
        self.page, self.lab = page, lab
        self.console: list[str] = []  # the page's console errors, for a failure's message

    def start(self) -> None:
        self.page.on("console", lambda m: self.console.append(m.text[:500]) if m.type == "error" else None)
        self.page.add_init_script(DIALOG_WATCH)
        self.page.goto(f"{self.lab.url}lab?reset&token={self.lab.token}")
        self.page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=90_000)
        self.page.evaluate("() => window.jupyterapp.restored.then(() => true)")

    # -- looking ---------------------------------------------------------------------------------

    def dialogs(self) -> list[str]:
        """Every dialog that appeared in this page since it loaded."""
        return self.page.evaluate("() => window.__dshDialogs")

    def seen(self, path: str) -> dict | None:
        return self.page.evaluate(SEEN, path)

    def cursor(self, path: str) -> dict | None:
        return self.page.evaluate(CURSOR, path)

    def wait(self, predicate, timeout: float = 30.0, what: str = "the page"):
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} did not happen within {timeout} s")
            time.sleep(0.05)

    # -- doing -----------------------------------------------------------------------------------

    def open(self, path: str, notebook: bool, kernel_id: str | None = None) -> None:
        """Open ``path`` (a notebook on the running kernel ``kernel_id``) and wait until it is shown."""
        args: dict = {"path": path}
        if kernel_id is not None:
            args["kernel"] = {"id": kernel_id}
        self.page.evaluate(OPEN, args)
        self.page.wait_for_function(READY, arg={"path": path, "notebook": notebook}, polling=50, timeout=60_000)

    def click_end_of(self, path: str, notebook: bool, index: int) -> None:
        """Click into line ``index`` of the open file (cell ``index`` of a notebook) and press End:
        the keyboard then types at the end of that line."""
        current = ".jp-MainAreaWidget:not(.lm-mod-hidden)"
        if notebook:
            target = self.page.locator(f"{current} .jp-Notebook .jp-Cell").nth(index).locator(".cm-content")
        else:
            target = self.page.locator(f"{current} .jp-FileEditor .cm-line").nth(index)
        target.click()
        self.page.keyboard.press("End")
        at = self.wait(lambda: self.cursor(path), timeout=10, what=f"the keyboard's focus in {path}")
        line, cell = (0, index) if notebook else (index, None)
        assert (at["line"], at["cell"], at["column"]) == (line, cell, at["length"]), (path, index, at)

    def type(self, text: str, rng, pause=(0.03, 0.15)) -> None:
        """Type ``text`` a few characters at a time (1 to 4), pausing between (seconds, drawn from ``rng``)."""
        i = 0
        while i < len(text):
            n = rng.randint(1, 4)
            self.page.keyboard.type(text[i : i + n])
            i += n
            time.sleep(rng.uniform(*pause))

    def press_save(self) -> None:
        """Ctrl+S, without waiting for the save (a person typing on)."""
        self.page.keyboard.press("Control+s")

    def save(self, path: str, unanswered_ok: bool = False) -> bool:
        """Ctrl+S, and wait until that save has finished: True. A save still under way is waited for
        first: JupyterLab ignores Ctrl+S while its own last one is saving.

        With ``unanswered_ok`` (collaboration), a save the page started and the server never
        answered is False rather than a failure: jupyter-collaboration replies to a save request
        after its save task, and a task cancelled by the next change's autosave can leave the
        request without a reply (seen once in about a hundred trials on a loaded machine); the room
        still saves the document after each change, which the trial's checks then see on disk."""
        try:
            self.wait(lambda: not self.page.evaluate(SAVING, path), timeout=30, what=f"the save of {path} under way")
        except AssertionError:
            if unanswered_ok:
                return False
            raise
        assert self.page.evaluate(ARM_SAVE, path) is True
        # A Ctrl+S that starts no save within 10 s (seen once in about a hundred trials, on a moved
        # file's tab) is pressed again, as a person would; the trial still checks what was saved.
        for _ in range(3):
            self.page.keyboard.press("Control+s")
            with contextlib.suppress(Exception):
                self.page.wait_for_function("() => window.__dshSaveStarted", polling=50, timeout=10_000)
                break
        state = self.page.evaluate("() => window.__dshSave")
        if unanswered_ok and state == "no save within 60 s" and self.page.evaluate("() => window.__dshSaveStarted"):
            return False
        assert state == "completed", (path, state)
        return True

    def close(self, path: str) -> None:
        """Close the tab, as its close icon does, and wait until it is gone."""
        self.page.evaluate(CLOSE, path)
        self.wait(lambda: self.seen(path) is None, timeout=30, what=f"the tab of {path} closing")

    def dismiss_dialogs(self) -> None:
        """Close whatever dialog is showing (after a trial that met one: the next starts clean)."""
        for _ in range(5):
            if not self.page.locator(".jp-Dialog").count():
                return
            self.page.keyboard.press("Escape")
            self.page.wait_for_timeout(200)


def letters(rng, n: int) -> str:
    """``n`` characters a person types: lowercase letters and single spaces (no bracket or quote
    an editor would close by itself, no newline an editor would indent)."""
    out = []
    for _ in range(n):
        out.append(" " if out and out[-1] != " " and rng.random() < 0.15 else rng.choice("abcdefghijklmnopqrstuvwxyz"))
    return "".join(out)
