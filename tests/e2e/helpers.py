"""Driving JupyterLab and the dsh widgets in Chromium, the way a person does, for the browser tests.

Each test opens one notebook of the prepared root (see conftest.py) by its URL with ``?reset``,
waits until the kernel is idle, runs all cells from the Run menu, then clicks or types in the
widget. Locators name what a person sees: rows (``[data-row]``), the pager status, the model's
footer. ``contrast`` measures WCAG contrast ratios of what is on screen, in the page.
"""

from __future__ import annotations

import re

ACTIVE = ".jp-NotebookPanel:not(.lm-mod-hidden)"
MAX_PNG_BYTES = 1_000_000


def expect():
    from playwright.sync_api import expect as _expect

    return _expect


def wait_for_kernel_idle(page) -> None:
    """The status bar says "<kernel> | Idle": the kernel has started and is not running anything."""
    page.wait_for_function(
        "() => /\\| Idle/.test(document.querySelector('#jp-main-statusbar')?.innerText || '')", timeout=90_000
    )


def wait_for_all_cells_run(page, scope: str = ACTIVE) -> None:
    page.wait_for_function(
        f"""() => {{
            const prompts = [...document.querySelectorAll('{scope} .jp-CodeCell .jp-InputPrompt')];
            return prompts.length > 0 && prompts.every(p => /^\\[\\d+\\]:$/.test(p.textContent.trim()));
        }}""",
        timeout=120_000,
    )


def open_notebook(page, lab, name: str) -> None:
    page.goto(f"{lab.url}lab/tree/{name}?reset&token={lab.token}")
    page.locator(f"{ACTIVE} .jp-Cell").first.wait_for()
    wait_for_kernel_idle(page)
    page.keyboard.press("Control+b")  # hide the file browser: more room for the widgets
    page.locator("#jp-left-stack").wait_for(state="hidden")


def run_all_cells(page) -> None:
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-item", has_text=re.compile(r"^Run All Cells")).click()
    wait_for_all_cells_run(page)
    wait_for_kernel_idle(page)


def run_notebook(page, lab, name: str) -> None:
    open_notebook(page, lab, name)
    run_all_cells(page)


def output(page, index: int):
    return page.locator(f"{ACTIVE} .jp-Cell").nth(index).locator(".jp-OutputArea-output")


def widget(page, index: int):
    """The dsh widget in cell ``index``'s output (its root element)."""
    return output(page, index).locator(".dsh").first


def rows(scope):
    return scope.locator("[data-row]")


def row(scope, label: str):
    return scope.locator(
        "[data-row]", has=scope.page.locator(".dsh-label", has_text=re.compile(rf"^{re.escape(label)}$"))
    )


def labels(scope) -> list[str]:
    return [t.strip() for t in scope.locator(".dsh-grid .dsh-row .dsh-label").all_inner_texts()]


def status(scope):
    """The main pager's status (``entries 1-200 of 210``): the first one, outside opened windows."""
    return scope.locator(".dsh-controls .dsh-status").first


def footer(scope):
    """The model's footer under the body, verbatim."""
    return scope.locator(":scope > .dsh-footer .dsh-footer-text")


def not_busy(scope) -> None:
    expect()(scope).not_to_have_attribute("aria-busy", "true", timeout=60_000)


def set_theme(page, name: str) -> None:
    """Switch JupyterLab's theme as Settings → Theme does (the app is exposed by the lab fixture)."""
    page.evaluate("name => window.jupyterapp.commands.execute('apputils:change-theme', {theme: name})", name)
    dark = name == "JupyterLab Dark"
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{str(not dark).lower()}'")
    page.wait_for_timeout(500)


def screenshot(page, top, path) -> None:
    """A 1200×800 shot of the page, scrolled so that ``top`` is at the top of the notebook."""
    top.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.mouse.move(1, 1)
    page.wait_for_timeout(400)
    page.screenshot(path=str(path))
    assert 10_000 < path.stat().st_size < MAX_PNG_BYTES, (path, path.stat().st_size)


# The WCAG 2 contrast ratio of an element's text against the first opaque background behind it.
_CONTRAST_JS = """el => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = c => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const blend = (top, under) => {
    const a = top.length > 3 ? top[3] : 1;
    return [0, 1, 2].map(i => top[i] * a + under[i] * (1 - a));
  };
  const layers = [];
  for (let n = el; n; n = n.parentElement) {
    const bg = rgb(getComputedStyle(n).backgroundColor);
    if (bg.length >= 3 && (bg.length === 3 || bg[3] > 0)) layers.push(bg);
    if (bg.length === 3 || bg[3] === 1) break;
  }
  let back = [255, 255, 255];
  for (const layer of layers.reverse()) back = blend(layer, back);
  const fore = blend(rgb(getComputedStyle(el).color), back);
  const [a, b] = [lum(fore), lum(back)].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}"""


def contrast(locator) -> float:
    return locator.evaluate(_CONTRAST_JS)
