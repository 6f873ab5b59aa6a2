"""Model text for ``read``.

A read window's footer tells which lines were shown and how to continue; a window that stops at
the byte cap says so rather than passing for the end of the file. An image answers one line: its
format, pixel size and bytes (the image itself is not text: surfaces that can, send it beside).
"""

from __future__ import annotations

from .cell_output import output_next_offset, output_page_footer, render_output
from .common import READ_OPEN_NOTES, count, envelope
from .notebook import notebook_next_offset, notebook_page_footer, render_notebook
from .outline import outline_next_offset, outline_page_footer, render_outline
from .readmany import many_page_footer, render_many

__all__ = ["image_summary", "read_footer", "read_next_offset", "read_page_footer", "render_read"]


def read_footer(first: int, last: int, total: int | None, capped: bool) -> str:
    if first < 0:
        return _from_end_footer(first, last, capped)
    if total is not None and last >= total:
        return f"(End of file - total {count(total, 'line')})"
    if capped:
        return f"(Output capped. Showing lines {first}-{last}. Use offset={last + 1} to continue.)"
    if total is None:
        return f"(Showing lines {first}-{last}. Use offset={last + 1} to continue.)"
    return f"(Showing lines {first}-{last} of {total}. Use offset={last + 1} to continue.)"


def _from_end_footer(first: int, last: int, capped: bool) -> str:
    """A window of a big file's last lines, numbered back from the end because the file was not
    counted (counting a 1 GiB log to number its last lines would cost the whole file)."""
    shown = last - first + 1
    if last == -1:
        return (
            f"(Showing the last {count(shown, 'line')}, numbered from the end: -1 is the last line; the file's "
            f"lines were not counted. Use offset={first - shown} with limit={shown} for the lines before.)"
        )
    cut = "Output capped. " if capped else ""
    return (
        f"({cut}Showing lines {first} to {last}, numbered from the end: -1 is the last line. "
        f"Use offset={last + 1} to continue.)"
    )


def image_summary(value: dict) -> str:
    """``(PNG image, 640x480 pixels, 20512 bytes)``: what an image file is (its bytes go beside the text)."""
    return f"({value['format']} image, {value['width']}x{value['height']} pixels, {count(value['bytes'], 'byte')})"


def read_page_footer(value: dict) -> str:
    """The footer of a ``read`` value (its ``footer``): the window's, after the notes that precede it."""
    if value.get("type") == "files":
        return many_page_footer(value)
    if value.get("type") == "notebook":
        return notebook_page_footer(value)
    if value.get("type") == "output":
        return output_page_footer(value)
    if value.get("type") == "outline":
        return outline_page_footer(value)
    if value.get("type") == "image":
        return image_summary(value)
    first = value["offset"]
    last = first + len(value["lines"]) - 1
    footer = read_footer(first, last, value["totalLines"], value["capped"])
    if value.get("note"):  # a .ipynb shown as text says why it is not shown as cells
        footer = f"{value['note']}\n{footer}"
    if value.get("open"):  # a person has it open in JupyterLab
        footer = f"{READ_OPEN_NOTES[value['open']]}\n{footer}"
    return footer


def read_next_offset(value: dict) -> int | None:
    """The offset the footer names to continue (its ``nextOffset``): None at the end of the file, for
    an image, and for the last lines of an uncounted file (whose footer points back, not on).
    Several files read at once have none: each file's value carries its own."""
    if value.get("type") == "files":
        return None
    if value.get("type") == "notebook":
        return notebook_next_offset(value)
    if value.get("type") == "output":
        return output_next_offset(value)
    if value.get("type") == "outline":
        return outline_next_offset(value)
    if value.get("type") == "image":
        return None
    first = value["offset"]
    last = first + len(value["lines"]) - 1
    if first < 0:
        return None if last == -1 else last + 1
    total = value["totalLines"]
    return None if total is not None and last >= total else last + 1


def render_read(value: dict) -> str:
    """``value``: path, offset, lines [{number, text}], totalLines (int|None), capped; or a notebook's
    cells, one of its outputs whole, or its outline; or an image's format, width, height and bytes;
    or several files (``file_paths``), each as it reads alone."""
    if value.get("type") == "files":
        return render_many(value, render_read)
    if value.get("type") == "notebook":
        return render_notebook(value)
    if value.get("type") == "output":
        return render_output(value)
    if value.get("type") == "outline":
        return render_outline(value)
    if value.get("type") == "image":
        return envelope(value["path"], "image", [], image_summary(value))
    lines = [f"{line['number']}: {line['text']}" for line in value["lines"]]
    return envelope(value["path"], "file", lines, read_page_footer(value))
