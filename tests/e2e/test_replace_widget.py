"""End to end: ``%dsh replace`` as a person checks it, in Chromium.

The preview shows each occurrence with the replaced text struck and the new text marked; the
person unchecks one, presses Apply, and exactly the checked occurrences change on disk; the
preview that follows shows the one left.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from nbformat import v4

from .helpers import expect, not_busy, output, run_notebook, screenshot, widget

pytestmark = [pytest.mark.browser, pytest.mark.slow]

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def test_a_person_unchecks_an_occurrence_and_applies_the_rest(page, lab, screenshot_dir):
    data = lab.root / "rename"
    data.mkdir(exist_ok=True)
    (data / "load.py").write_text("total = old_total(rows)\nprint(old_total)\n")
    (data / "notes.txt").write_text("old_total stays here\n")
    driver = v4.new_notebook(
        metadata={"kernelspec": KERNELSPEC},
        cells=[
            v4.new_code_cell("%load_ext dsh_jupyter"),
            v4.new_code_cell("%dsh replace old_total new_total --path rename"),
        ],
    )
    nbformat.write(driver, str(lab.root / "nbreplace.ipynb"))

    run_notebook(page, lab, "nbreplace.ipynb")
    w = widget(page, 1)
    expect()(w.locator(".dsh-summary")).to_have_text("3 occurrences in 2 files")
    first = w.locator(".dsh-occurrence").first
    expect()(first.locator("del")).to_have_text("old_total")
    expect()(first.locator("ins")).to_have_text("new_total")
    assert "line-through" in first.locator("del").evaluate("el => getComputedStyle(el).textDecorationLine")
    apply = w.locator("[data-key=apply]")
    expect()(apply).to_have_text("Apply 3 of 3")
    notes = w.locator(".dsh-group", has=page.locator(".dsh-label", has_text="rename/notes.txt"))
    notes.locator(".dsh-occurrence input[type=checkbox]").uncheck()
    expect()(apply).to_have_text("Apply 2 of 3")
    expect()(notes.locator(".dsh-group-head input[type=checkbox]")).not_to_be_checked()
    screenshot(page, output(page, 1), screenshot_dir / "replace-widget.png")
    apply.click()
    not_busy(w)
    expect()(w.locator(".dsh-applied")).to_have_text(re.compile(r'^Replaced 2 occurrences of "old_total" in 1 file:'))
    assert (data / "load.py").read_text() == "total = new_total(rows)\nprint(new_total)\n"
    assert (data / "notes.txt").read_text() == "old_total stays here\n"
    expect()(w.locator(".dsh-summary")).to_have_text("1 occurrence in 1 file")
    expect()(w.locator("[data-key=apply]")).to_have_text("Apply 1 of 1")
