"""End to end: notebooks in the widgets, in Chromium.

A grep over a folder with a notebook: the match reads ``2:1`` (cell 2, line 1), and clicking it
opens the read window at that cell, its line marked and in view, the cells drawn with a header
row each, the source in the code font and the outputs as the model sees them, never an image.
"""

from __future__ import annotations

import base64
import re

import nbformat
import pytest
from nbformat import v4

from .helpers import expect, output, run_notebook, screenshot, widget

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(300)).decode()
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def test_a_grep_match_in_a_cell_opens_the_cell(page, lab, screenshot_dir):
    data = lab.root / "nbdata"
    data.mkdir(exist_ok=True)
    nbformat.write(
        v4.new_notebook(
            cells=[
                v4.new_markdown_cell("# Thresholds", id="intro"),
                v4.new_code_cell(
                    "limit_value = 3\nplot(limit_value)",
                    id="calc",
                    execution_count=7,
                    outputs=[
                        v4.new_output("stream", name="stdout", text="plotted\n"),
                        v4.new_output("display_data", data={"image/png": PNG}),
                    ],
                ),
            ]
        ),
        str(data / "analysis.ipynb"),
    )
    driver = v4.new_notebook(
        metadata={"kernelspec": KERNELSPEC},
        cells=[v4.new_code_cell("%load_ext dsh_jupyter"), v4.new_code_cell("%dsh grep limit_value nbdata")],
    )
    nbformat.write(driver, str(lab.root / "nbgrep.ipynb"))

    run_notebook(page, lab, "nbgrep.ipynb")
    w = widget(page, 1)
    expect()(w.locator(".dsh-search-header")).to_have_text("Found 2 matches")
    match = w.locator(".dsh-item", has=page.locator(".dsh-ln", has_text=re.compile(r"^2:2$")))
    expect()(match.locator("mark.dsh-hl")).to_have_text("limit_value")
    match.click()
    panel = w.locator("#dsh-panel")
    expect()(panel.locator(".dsh-pager .dsh-status").first).to_have_text("cells 2-2 of 2")
    hit = panel.locator(".dsh-hit")
    expect()(hit.locator(".dsh-code")).to_have_text("plot(limit_value)")
    expect()(panel.locator(".dsh-nb-cell .dsh-code")).to_have_text(["code cell 2 · id calc · In [7]"])
    outputs = panel.locator(".dsh-nb-output .dsh-code")
    expect()(outputs).to_have_text(
        [
            "[output 1: stream stdout]",
            "| plotted",
            "[output 2: display_data]",
            "[image/png: 308 bytes, not attached: not a valid PNG, JPEG, GIF or WebP image]",
        ]
    )
    assert "monospace" in hit.locator(".dsh-code").evaluate("el => getComputedStyle(el).fontFamily")
    assert panel.locator("img").count() == 0 and PNG[:24] not in panel.inner_text()
    box = hit.bounding_box()
    assert 0 <= box["y"] <= page.viewport_size["height"] - box["height"], box
    screenshot(page, output(page, 1), screenshot_dir / "notebook.png")
