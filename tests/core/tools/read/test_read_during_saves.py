"""``read`` never answers a file Jupyter is midway through saving (``core/fs/jupytersaves.py``).

Jupyter's contents manager saves a file in place: a copy to ``.~<name>``, the file truncated, the new
content written and synced, the copy removed (``atomic_writing``). The writers here are Jupyter's own
(``atomic_writing`` held open between the truncation and the write; a real ``FileContentsManager``
saving in a loop in another process); the reader is the public API.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

from jupyter_server.services.contents.fileio import atomic_writing

from dsh_jupyter.core.fs.jupytersaves import RECENT_S, saving

OLD = "".join(f"old line {i}\n" for i in range(1, 41))
NEW = "".join(f"new line {i}\n" for i in range(1, 41))


def lines_of(result) -> str:
    return "".join(line["text"] + "\n" for line in result.value["lines"])


def test_a_read_during_a_save_waits_for_the_new_content(ws, root):
    path = root / "notes.txt"
    path.write_text(OLD)
    inside = threading.Event()

    def save() -> None:
        with atomic_writing(str(path), text=False) as fh:  # the copy is made and the file emptied
            inside.set()
            time.sleep(0.3)  # a save that takes a while (a big file, a slow disk)
            fh.write(NEW.encode())

    writer = threading.Thread(target=save)
    writer.start()
    try:
        assert inside.wait(10)
        assert path.read_text() == "" and (root / ".~notes.txt").is_file()  # what a plain reader sees
        read = ws.run("read", file_path="notes.txt")
    finally:
        writer.join(10)
    assert not read.is_error, read.text
    assert lines_of(read) == NEW
    assert read.text.endswith("(End of file - total 40 lines)\n</content>")
    # what it read is what it recorded: an edit needs no new read
    edit = ws.run("edit", file_path="notes.txt", old_string="new line 1\n", new_string="first\n")
    assert not edit.is_error, edit.text


def test_reads_beside_a_loop_of_jupyter_saves_are_always_whole(ws, root, tmp_path):
    """A real FileContentsManager in another process saves two versions in turn, every 20 ms (a
    person presses Ctrl+S far less often), for 3 s; every read answers one of them, whole."""
    path = root / "busy.txt"
    path.write_text(OLD)
    stop, started = tmp_path / "stop", tmp_path / "started"
    script = textwrap.dedent(f"""
        import os
        import time
        from jupyter_server.services.contents.filemanager import FileContentsManager
        cm = FileContentsManager(root_dir={str(root)!r})
        texts, n = [{OLD!r}, {NEW!r}], 0
        while not os.path.exists({str(stop)!r}):
            n += 1
            cm.save({{"type": "file", "format": "text", "content": texts[n % 2]}}, "busy.txt")
            if n == 1:
                open({str(started)!r}, "w").close()
            time.sleep(0.02)
        print(n)
    """)
    saver = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    seen = {"old": 0, "new": 0}
    try:
        # the saves start once Jupyter is imported, which takes seconds on a busy machine
        wait_until = time.monotonic() + 60
        while not started.exists() and saver.poll() is None and time.monotonic() < wait_until:
            time.sleep(0.05)
        assert started.exists(), "the saving process did not start"
        deadline, cap = time.monotonic() + 3, time.monotonic() + 60  # 3 s and 11 reads, however busy
        while (time.monotonic() < deadline or sum(seen.values()) <= 10) and time.monotonic() < cap:
            read = ws.run("read", file_path="busy.txt")
            assert not read.is_error, read.text
            text = lines_of(read)
            assert text in (OLD, NEW), read.text
            seen["old" if text == OLD else "new"] += 1
    finally:
        stop.touch()
        saved = int(saver.communicate(timeout=30)[0])
    assert saved > 10 and sum(seen.values()) > 10, (saved, seen)


def test_only_a_recent_copy_means_a_save_under_way(root):
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        (root / "a.txt").write_text("a\n")
        assert saving(fd, "a.txt") is False
        (root / ".~a.txt").write_text("a\n")
        assert saving(fd, "a.txt") is True
        # a copy a contents manager left behind when it died is older: it means nothing
        assert saving(fd, "a.txt", now=time.time() + RECENT_S + 1) is False
        (root / ".~a.txt").unlink()
        (root / ".~a.txt").symlink_to(root / "a.txt")  # never followed
        assert saving(fd, "a.txt") is False
        (root / ".~a.txt").unlink()
        (root / ".~a.txt").mkdir()
        assert saving(fd, "a.txt") is False
    finally:
        os.close(fd)


def test_a_copy_that_stays_is_waited_for_once_then_the_file_is_read(ws, root):
    (root / "left.txt").write_text(OLD)
    (root / ".~left.txt").write_text("a copy a crashed save left behind\n")
    read = ws.run("read", file_path="left.txt")
    assert not read.is_error and lines_of(read) == OLD


def test_a_notebook_read_again_after_a_save_attaches_its_images_once(ws, root, tmp_path):
    """A notebook with one image output is saved in a loop by a real FileContentsManager in another
    process; a read that began before a save and is read again attaches the image once, not once
    per attempt (each answer attaches exactly the images its text says it attaches)."""
    import base64

    import nbformat
    from imagefiles import png  # tests/imagefiles.py

    data = {"image/png": base64.b64encode(png(4, 3)).decode()}
    versions = [
        nbformat.writes(
            nbformat.v4.new_notebook(
                cells=[
                    nbformat.v4.new_code_cell(
                        f"plot({n})" + "\n# pad" * 2000,
                        id="c",
                        outputs=[nbformat.v4.new_output("display_data", data=data)],
                    )
                ]
            )
        )
        for n in (1, 2)
    ]
    (root / "busy.ipynb").write_text(versions[0])
    stop, started = tmp_path / "stop", tmp_path / "started"
    script = textwrap.dedent(f"""
        import json, os, time
        from jupyter_server.services.contents.filemanager import FileContentsManager
        cm = FileContentsManager(root_dir={str(root)!r})
        models, n = [json.loads(v) for v in {versions!r}], 0
        while not os.path.exists({str(stop)!r}):
            n += 1
            cm.save({{"type": "notebook", "format": "json", "content": models[n % 2]}}, "busy.ipynb")
            if n == 1:
                open({str(started)!r}, "w").close()
            time.sleep(0.005)
        print(n)
    """)
    saver = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    reads = 0
    try:
        wait_until = time.monotonic() + 60
        while not started.exists() and saver.poll() is None and time.monotonic() < wait_until:
            time.sleep(0.05)
        assert started.exists(), "the saving process did not start"
        deadline, cap = time.monotonic() + 3, time.monotonic() + 60  # 3 s and 11 reads, however busy
        while (time.monotonic() < deadline or reads <= 10) and time.monotonic() < cap:
            read = ws.run("read", file_path="busy.ipynb", limit=1)
            assert not read.is_error, read.text
            assert len(read.images) == 1, (len(read.images), read.text[-300:])
            reads += 1
    finally:
        stop.touch()
        saved = int(saver.communicate(timeout=30)[0])
    assert saved > 10 and reads > 10, (saved, reads)
