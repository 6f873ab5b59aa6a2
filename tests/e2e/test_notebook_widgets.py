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


def test_a_notebooks_outline_opens_its_sections_and_an_output_opens_whole(page, lab, screenshot_dir):
    data = lab.root / "nbdata"
    data.mkdir(exist_ok=True)
    log = "".join(f"epoch {i}\n" for i in range(1, 2501))
    cells = [v4.new_markdown_cell("# Training", id="train-h")]
    cells += [v4.new_code_cell(f"prepare_{i}()", id=f"p{i}") for i in range(1, 4)]
    cells.append(v4.new_code_cell("fit()", id="fit", outputs=[v4.new_output("stream", name="stdout", text=log)]))
    cells.append(v4.new_markdown_cell("## Results", id="results"))
    cells.append(v4.new_code_cell("report()", id="report"))
    nbformat.write(v4.new_notebook(cells=cells), str(data / "training.ipynb"))
    driver = v4.new_notebook(
        metadata={"kernelspec": KERNELSPEC},
        cells=[v4.new_code_cell("%load_ext dsh_jupyter"), v4.new_code_cell("%dsh read nbdata/training.ipynb")],
    )
    nbformat.write(driver, str(lab.root / "nboutline.ipynb"))

    run_notebook(page, lab, "nboutline.ipynb")
    w = widget(page, 1)
    status = w.locator(".dsh-pager .dsh-status").first
    expect()(status).to_have_text("cells 1-7 of 7")
    # the output's header row opens the output whole, paged by its lines, with "back"
    w.locator(".dsh-nb-output a.dsh-link", has_text="[output 1: stream stdout]").click()
    expect()(status).to_have_text("lines 1-2,000 of 2,500")
    expect()(w.locator(".dsh-line .dsh-code").first).to_have_text("epoch 1")
    w.locator("[data-key=win-next]").first.click()
    expect()(status).to_have_text("lines 2,001-2,500 of 2,500")
    w.locator("[data-key=win-back]").click()
    expect()(status).to_have_text("cells 1-7 of 7")
    # the outline: a row per heading and code cell, each opening its cells
    w.locator("[data-key=win-switch]").click()
    expect()(status).to_have_text("outline of cells 1-7 of 7")
    expect()(w.locator(".dsh-nb-heading .dsh-code")).to_have_text(
        ['[cell 1 id="train-h", section of 7 cells] # Training', '[cell 6 id="results", section of 2 cells] ## Results']
    )
    screenshot(page, output(page, 1), screenshot_dir / "notebook-outline.png")
    w.locator(".dsh-nb-heading a.dsh-link", has_text="## Results").click()
    expect()(status).to_have_text("cells 6-7 of 7")
    expect()(w.locator(".dsh-nb-cell .dsh-code").first).to_have_text("markdown cell 6 · id results")
