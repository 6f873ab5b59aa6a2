"""``move``: exact texts of every answer, what is on disk after each, and the observations that
follow a moved file or folder; the renames of ``fs.rename`` and their fallbacks on real files."""

from __future__ import annotations

import json
import os

import pytest
from conftest import assert_error, jupyter_folders_in

from dsh_jupyter import Workspace
from dsh_jupyter.core.fs.rename import Changed, check_then_rename, link_then_unlink, move_over, move_to_free_name
from dsh_jupyter.core.state.gate import observation_key

HIDDEN = "hidden files are not shown here; the server's ContentsManager.allow_hidden setting allows them"
PROTECTED = "Jupyter's own folders (runtime, data, config) and this tool's state are never shown"


@pytest.fixture(params=[True, False], ids=["openat2", "walk"])
def make_ws(request, root, state_file):
    """Every test runs with both path resolvers: openat2 (RESOLVE_BENEATH) and the O_NOFOLLOW walk."""

    def factory(root_dir=None, session: str = "s1", state_path=None, **settings) -> Workspace:
        settings.setdefault("openat2", request.param)
        return Workspace(root_dir or root, session=session, state_path=state_path or state_file, **settings)

    return factory


@pytest.fixture
def files(root):
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("beta\n")
    (root / "d" / "sub").mkdir(parents=True)
    (root / "d" / "sub" / "x.txt").write_text("x\n")
    (root / "d" / "y.txt").write_text("y\n")
    return root


def names(folder) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def move(ws, source, destination, **kw):
    return ws.run("move", source=source, destination=destination, **kw)


def observed(ws, path) -> str | None:
    return ws.store.observed_version(ws.key(), observation_key(os.path.realpath(path)))


# -- successes ------------------------------------------------------------------------------------


def test_a_file_is_renamed(ws, files):
    r = move(ws, "a.txt", "c.txt")
    assert r.text == "Moved file a.txt to c.txt."
    assert r.value == {
        "source": "a.txt",
        "destination": "c.txt",
        "type": "file",
        "replaced": False,
        "createdParents": False,
        "nextOffset": None,
        "footer": "",
    }
    assert not (files / "a.txt").exists() and (files / "c.txt").read_text() == "alpha\n"


def test_a_file_moves_into_new_folders_which_are_created(ws, files):
    r = move(ws, "a.txt", "new/deep/a.txt")
    assert r.text == "Moved file a.txt to new/deep/a.txt, creating the missing parent directories."
    assert r.value["createdParents"] is True
    assert (files / "new" / "deep" / "a.txt").read_text() == "alpha\n"


def test_a_file_moves_into_an_existing_folder(ws, files):
    assert move(ws, "a.txt", "d/sub/a.txt").text == "Moved file a.txt to d/sub/a.txt."
    assert (files / "d" / "sub" / "a.txt").read_text() == "alpha\n"


def test_a_folder_moves_with_everything_in_it(ws, files):
    r = move(ws, "d", "e/d2")
    assert r.text == "Moved directory d to e/d2, creating the missing parent directories."
    assert r.value["type"] == "directory"
    assert names(files) == ["a.txt", "b.txt", "e", "e/d2", "e/d2/sub", "e/d2/sub/x.txt", "e/d2/y.txt"]


def test_display_paths_are_relative_to_the_session_cwd(ws, files):
    ws.create_session("s1", cwd="d")
    assert move(ws, "../a.txt", "sub/a.txt").text == "Moved file ../a.txt to sub/a.txt."
    assert (files / "d" / "sub" / "a.txt").exists()


def test_a_name_that_could_forge_structure_is_quoted(ws, files):
    r = move(ws, "a.txt", "two\nlines.txt")
    assert r.text == 'Moved file a.txt to "two\\u000alines.txt".'
    assert (files / "two\nlines.txt").exists()


def test_a_symlink_inside_the_root_moves_as_a_link(ws, files):
    os.symlink("b.txt", files / "link")
    r = move(ws, "link", "link2")
    assert r.text == "Moved link to link2."
    assert r.value["type"] == "other"
    assert os.readlink(files / "link2") == "b.txt" and (files / "b.txt").read_text() == "beta\n"


# -- the destination exists ---------------------------------------------------------------------


def test_an_existing_file_is_not_replaced_without_overwrite(ws, files):
    ws.run("read", file_path="b.txt")  # even a file this session has read
    assert_error(
        move(ws, "a.txt", "b.txt"),
        "FS_EXISTS",
        'cannot move to "b.txt": a file of that name exists; to replace it, read it in this session and set overwrite',
    )
    assert (files / "a.txt").read_text() == "alpha\n" and (files / "b.txt").read_text() == "beta\n"


def test_overwrite_of_a_file_this_session_has_not_read_is_refused(ws, files):
    assert_error(
        move(ws, "a.txt", "b.txt", overwrite=True),
        "FS_NOT_OBSERVED",
        'cannot overwrite "b.txt": read it first in this session',
    )
    assert (files / "a.txt").read_text() == "alpha\n" and (files / "b.txt").read_text() == "beta\n"


def test_overwrite_of_a_file_read_in_another_session_is_refused(make_ws, files):
    make_ws(session="other").run("read", file_path="b.txt")
    assert_error(
        move(make_ws(), "a.txt", "b.txt", overwrite=True),
        "FS_NOT_OBSERVED",
        'cannot overwrite "b.txt": read it first in this session',
    )


def test_overwrite_of_a_file_that_changed_since_it_was_read_is_refused(ws, files):
    ws.run("read", file_path="b.txt")
    (files / "b.txt").write_text("changed by someone\n")
    assert_error(
        move(ws, "a.txt", "b.txt", overwrite=True),
        "FS_NOT_OBSERVED",
        'cannot overwrite "b.txt": it changed since this session last read it; read it again',
    )
    assert (files / "b.txt").read_text() == "changed by someone\n"


def test_overwrite_replaces_a_file_this_session_has_read(ws, files):
    ws.run("read", file_path="b.txt")
    r = move(ws, "a.txt", "b.txt", overwrite=True)
    assert r.text == "Moved file a.txt to b.txt, replacing the file that was there."
    assert r.value == {
        "source": "a.txt",
        "destination": "b.txt",
        "type": "file",
        "replaced": True,
        "createdParents": False,
        "nextOffset": None,
        "footer": "",
    }
    assert names(files) == ["b.txt", "d", "d/sub", "d/sub/x.txt", "d/y.txt"]
    assert (files / "b.txt").read_text() == "alpha\n"
    # what this session read of the old b.txt is not an observation of the new one
    assert_error(
        ws.run("edit", file_path="b.txt", old_string="alpha", new_string="A"),
        "FS_NOT_OBSERVED",
        'cannot write "b.txt": read it first in this session',
    )


def test_overwrite_is_not_needed_for_a_free_name(ws, files):
    assert move(ws, "a.txt", "c.txt", overwrite=True).text == "Moved file a.txt to c.txt."


def test_a_directory_is_never_replaced(ws, files):
    (files / "e").mkdir()
    message = 'cannot move to "e": a directory of that name exists, and move never replaces a directory'
    assert_error(move(ws, "a.txt", "e"), "FS_EXISTS", message)
    assert_error(move(ws, "a.txt", "e", overwrite=True), "FS_EXISTS", message)
    assert_error(move(ws, "d", "e", overwrite=True), "FS_EXISTS", message)
    assert (files / "a.txt").exists() and list((files / "e").iterdir()) == []


def test_a_directory_never_replaces_a_file(ws, files):
    ws.run("read", file_path="b.txt")
    assert_error(
        move(ws, "d", "b.txt", overwrite=True),
        "FS_EXISTS",
        'cannot move to "b.txt": a file of that name exists, and a directory never replaces a file',
    )
    assert (files / "b.txt").read_text() == "beta\n" and (files / "d").is_dir()


def test_only_regular_files_are_replaced(ws, files):
    os.mkfifo(files / "fifo")
    os.symlink("b.txt", files / "link")
    for name in ("fifo", "link"):
        assert_error(
            move(ws, "a.txt", name, overwrite=True),
            "FS_EXISTS",
            f'cannot move to "{name}": something that is not a regular file has that name, and move '
            "replaces regular files only",
        )
    assert (files / "a.txt").exists() and os.readlink(files / "link") == "b.txt"


def test_a_file_without_write_permission_is_not_replaced(ws, files):
    ws.run("read", file_path="b.txt")
    os.chmod(files / "b.txt", 0o444)
    assert_error(
        move(ws, "a.txt", "b.txt", overwrite=True),
        "FS_PERMISSION_DENIED",
        'cannot overwrite "b.txt": permission denied',
    )
    assert (files / "b.txt").read_text() == "beta\n"


# -- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        ({"destination": "c.txt"}, "source is required"),
        ({"source": "a.txt"}, "destination is required"),
        ({"source": "", "destination": "c.txt"}, "source must be a non-empty string"),
        ({"source": "a.txt", "destination": "  "}, "destination must be a non-empty string"),
        ({"source": 7, "destination": "c.txt"}, "source must be a string"),
        ({"source": "a.txt", "destination": ["c.txt"]}, "destination must be a string"),
        ({"source": "a.txt", "destination": "c.txt", "overwrite": "yes"}, "overwrite must be true or false"),
        ({"source": "a.txt", "destination": "c\0.txt"}, "destination must not contain a NUL character"),
        (
            {"source": "a.txt", "destination": "c.txt", "force": True},
            'unknown argument "force" (this tool takes: source, destination, overwrite)',
        ),
    ],
)
def test_argument_errors(ws, files, args, message):
    assert_error(ws.call("move", args), "ARGUMENT_INVALID", message)
    assert names(files) == ["a.txt", "b.txt", "d", "d/sub", "d/sub/x.txt", "d/y.txt"]


def test_a_missing_source(ws, files):
    assert_error(move(ws, "nope.txt", "c.txt"), "FS_NOT_FOUND", 'cannot move "nope.txt": not found')
    assert_error(move(ws, "nope/a.txt", "c.txt"), "FS_NOT_FOUND", 'cannot move "nope/a.txt": not found')
    assert_error(move(ws, "nope.txt", "new/c.txt"), "FS_NOT_FOUND", 'cannot move "nope.txt": not found')
    assert not (files / "new").exists()


def test_paths_outside_the_root(ws, files, tmp_path):
    (tmp_path / "outside.txt").write_text("outside\n")
    assert_error(
        move(ws, "../outside.txt", "c.txt"),
        "FS_OUTSIDE_ROOT",
        'cannot move "../outside.txt": path is outside the workspace',
    )
    assert_error(
        move(ws, str(tmp_path / "outside.txt"), "c.txt"),
        "FS_OUTSIDE_ROOT",
        f'cannot move "{tmp_path / "outside.txt"}": path is outside the workspace',
    )
    assert_error(
        move(ws, "a.txt", "../moved.txt"),
        "FS_OUTSIDE_ROOT",
        'cannot move to "../moved.txt": path is outside the workspace',
    )
    assert_error(
        move(ws, "a.txt", "/tmp/moved.txt"),
        "FS_OUTSIDE_ROOT",
        'cannot move to "/tmp/moved.txt": path is outside the workspace',
    )
    assert (tmp_path / "outside.txt").read_text() == "outside\n" and (files / "a.txt").exists()
    assert not (tmp_path / "moved.txt").exists()


def test_a_prefix_sibling_of_the_root_is_outside(ws, files):
    sibling = files.parent / (files.name + "-evil")
    sibling.mkdir()
    assert_error(
        move(ws, "a.txt", f"../{files.name}-evil/a.txt"),
        "FS_OUTSIDE_ROOT",
        f'cannot move to "../{files.name}-evil/a.txt": path is outside the workspace',
    )
    assert list(sibling.iterdir()) == []


def test_a_symlink_that_leads_outside_is_refused_at_either_end(ws, files, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    os.symlink(outside / "secret.txt", files / "out_file")
    os.symlink(outside, files / "out_dir")
    before = names(outside)
    assert_error(
        move(ws, "out_file", "c.txt"), "FS_OUTSIDE_ROOT", 'cannot move "out_file": path is outside the workspace'
    )
    assert_error(
        move(ws, "out_dir/secret.txt", "c.txt"),
        "FS_OUTSIDE_ROOT",
        'cannot move "out_dir/secret.txt": path is outside the workspace',
    )
    assert_error(
        move(ws, "a.txt", "out_dir/a.txt"),
        "FS_OUTSIDE_ROOT",
        'cannot move to "out_dir/a.txt": path is outside the workspace',
    )
    assert_error(
        move(ws, "a.txt", "out_dir/new/a.txt"),
        "FS_OUTSIDE_ROOT",
        'cannot move to "out_dir/new/a.txt": path is outside the workspace',
    )
    for overwrite in (False, True):
        assert_error(
            move(ws, "a.txt", "out_file", overwrite=overwrite),
            "FS_OUTSIDE_ROOT",
            'cannot move to "out_file": path is outside the workspace',
        )
    assert names(outside) == before and (outside / "secret.txt").read_text() == "secret\n"
    assert os.readlink(files / "out_file") == str(outside / "secret.txt") and (files / "a.txt").exists()


def test_a_symlink_loop_at_either_end(ws, files):
    os.symlink("loop2", files / "loop1")
    os.symlink("loop1", files / "loop2")
    assert_error(move(ws, "loop1", "c"), "FS_SYMLINK_LOOP", 'cannot move "loop1": symbolic link loop')
    assert_error(
        move(ws, "a.txt", "loop1/a.txt"), "FS_SYMLINK_LOOP", 'cannot move to "loop1/a.txt": symbolic link loop'
    )


def test_a_parent_of_the_destination_is_a_file(ws, files):
    assert_error(
        move(ws, "a.txt", "b.txt/a.txt"),
        "FS_NOT_DIRECTORY",
        'cannot move to "b.txt/a.txt": a parent is not a directory',
    )
    assert_error(
        move(ws, "a.txt", "b.txt/x/a.txt"),
        "FS_NOT_DIRECTORY",
        'cannot move to "b.txt/x/a.txt": a parent is not a directory',
    )


def test_a_folder_cannot_move_into_itself(ws, files):
    for dest in ("d/sub/d", "d/new/deeper/d", "d/sub"):
        assert_error(
            move(ws, "d", dest), "ARGUMENT_INVALID", f'cannot move "d" to "{dest}": a directory cannot move into itself'
        )
    assert names(files) == ["a.txt", "b.txt", "d", "d/sub", "d/sub/x.txt", "d/y.txt"]  # no folder made


def test_the_source_and_the_destination_are_the_same(ws, files):
    for source, dest, shown in [
        ("a.txt", "a.txt", "a.txt"),
        ("a.txt", "./d/../a.txt", "a.txt"),
        ("d", "d/", "d"),
        ("d/sub", "d/./sub", "d/sub"),
    ]:
        for overwrite in (False, True):
            assert_error(
                move(ws, source, dest, overwrite=overwrite),
                "ARGUMENT_INVALID",
                f'cannot move "{shown}": the source and the destination are the same',
            )
    os.symlink("d", files / "d_link")  # the same place through a symlinked folder
    assert_error(
        move(ws, "d/y.txt", "d_link/y.txt"),
        "ARGUMENT_INVALID",
        'cannot move "d/y.txt": the source and the destination are the same',
    )
    assert (files / "a.txt").read_text() == "alpha\n" and (files / "d" / "y.txt").exists()


def test_the_root_cannot_move(ws, files):
    assert_error(move(ws, ".", "elsewhere"), "ARGUMENT_INVALID", 'cannot move ".": it is the workspace root')
    assert not (files / "elsewhere").exists()


def test_trailing_slashes(ws, files):
    assert_error(move(ws, "a.txt/", "c.txt"), "FS_NOT_DIRECTORY", 'cannot move "a.txt/": not a directory')
    assert_error(
        move(ws, "a.txt", "e/"),
        "ARGUMENT_INVALID",
        'destination must name the new path itself, not a folder to move into; "e/" ends with "/"',
    )
    assert move(ws, "d/", "e/").text == "Moved directory d to e."


def test_a_folder_without_write_permission(ws, files):
    os.chmod(files / "d", 0o555)
    try:
        assert_error(move(ws, "d/y.txt", "y.txt"), "FS_PERMISSION_DENIED", 'cannot move "d/y.txt": permission denied')
        assert_error(
            move(ws, "a.txt", "d/a.txt"), "FS_PERMISSION_DENIED", 'cannot move to "d/a.txt": permission denied'
        )
    finally:
        os.chmod(files / "d", 0o755)
    assert (files / "d" / "y.txt").exists() and (files / "a.txt").exists()


def test_a_saved_search_result_is_read_only(make_ws, files):
    ws = make_ws(glob_max_results=1)
    locator = ws.run("glob", pattern="*.txt").value["spill"]
    assert_error(
        move(ws, locator, "copy.txt"), "FS_READ_ONLY", f'cannot move "{locator}": saved search results are read-only'
    )
    assert_error(
        move(ws, "a.txt", locator), "FS_READ_ONLY", f'cannot move to "{locator}": saved search results are read-only'
    )
    assert os.path.exists(locator) and (files / "a.txt").exists()


def test_the_state_file_being_unavailable_refuses_the_move(ws, files):
    ws.store = None
    assert_error(
        move(ws, "a.txt", "c.txt"), "STATE_UNAVAILABLE", 'cannot move "a.txt": the session state is unavailable'
    )
    assert (files / "a.txt").exists() and not (files / "c.txt").exists()


# -- hidden and protected places --------------------------------------------------------------------


@pytest.fixture
def home(root, monkeypatch):
    """A home-like root: dotfiles, and Jupyter's runtime, data and config folders in it."""
    (root / ".env").write_text("SECRET=1\n")
    (root / ".config").mkdir()
    (root / ".config" / "app.ini").write_text("x=1\n")
    (root / "notes.txt").write_text("hello\n")
    runtime = jupyter_folders_in(root, monkeypatch)
    (runtime / "jpserver-1.json").write_text(json.dumps({"token": "t0ken"}))
    (root / ".jupyter" / "jupyter_server_config.py").write_text("c = 1\n")
    return root


def test_hidden_paths_are_refused_at_either_end_where_hidden_files_are(make_ws, home):
    ws = make_ws(allow_hidden=False)
    before = names(home)
    for source, dest, verb, shown in [
        (".env", "env.txt", "move", ".env"),
        (".config/app.ini", "app.ini", "move", ".config/app.ini"),
        (".config", "config", "move", ".config"),
        ("notes.txt", ".notes.txt", "move to", ".notes.txt"),
        ("notes.txt", ".config/notes.txt", "move to", ".config/notes.txt"),
        ("notes.txt", ".new/notes.txt", "move to", ".new/notes.txt"),
    ]:
        assert_error(move(ws, source, dest), "FS_HIDDEN", f'cannot {verb} "{shown}": {HIDDEN}')
    os.symlink(".env", home / "env_link")  # a link does not make a hidden file movable by another name
    assert_error(move(ws, "env_link", "e"), "FS_HIDDEN", f'cannot move "env_link": {HIDDEN}')
    assert names(home) == sorted([*before, "env_link"])


def test_hidden_paths_move_where_hidden_files_are_shown(make_ws, home):
    ws = make_ws(allow_hidden=True)
    assert move(ws, ".env", ".env.bak").text == "Moved file .env to .env.bak."
    assert move(ws, "notes.txt", ".config/notes.txt").text == "Moved file notes.txt to .config/notes.txt."


def test_protected_folders_never_move_and_nothing_moves_into_them(make_ws, home):
    ws = make_ws(allow_hidden=True)
    before = names(home)
    assert_error(move(ws, ".jupyter", "jupyter"), "FS_PROTECTED", f'cannot move ".jupyter": {PROTECTED}')
    assert_error(
        move(ws, ".jupyter/jupyter_server_config.py", "c.py"),
        "FS_PROTECTED",
        f'cannot move ".jupyter/jupyter_server_config.py": {PROTECTED}',
    )
    assert_error(
        move(ws, "notes.txt", ".jupyter/notes.txt"), "FS_PROTECTED", f'cannot move to ".jupyter/notes.txt": {PROTECTED}'
    )
    assert_error(
        move(ws, "notes.txt", ".local/share/jupyter/runtime/new/notes.txt"),
        "FS_PROTECTED",
        f'cannot move to ".local/share/jupyter/runtime/new/notes.txt": {PROTECTED}',
    )
    # a folder that holds a protected one would take it along
    for folder in (".local", ".local/share"):
        assert_error(
            move(ws, folder, "elsewhere"),
            "FS_PROTECTED",
            f'cannot move "{folder}": it holds a protected folder (Jupyter\'s runtime, data or config '
            "folder, or this tool's state), and those never move",
        )
    assert names(home) == before


# -- the session's observations follow what moved ------------------------------------------------


def test_a_moved_file_can_be_edited_without_a_new_read(ws, files):
    ws.run("read", file_path="a.txt")
    assert move(ws, "a.txt", "new/c.txt").is_error is False
    r = ws.run("edit", file_path="new/c.txt", old_string="alpha", new_string="ALPHA")
    assert r.text.split("\n")[0] == "The file new/c.txt has been updated successfully."
    assert (files / "new" / "c.txt").read_text() == "ALPHA\n"
    assert observed(ws, files / "a.txt") is None  # the old path is no longer observed


def test_a_file_that_moves_back_keeps_its_observation(ws, files):
    ws.run("read", file_path="a.txt")
    move(ws, "a.txt", "c.txt")
    move(ws, "c.txt", "a.txt")
    assert not ws.run("edit", file_path="a.txt", old_string="alpha", new_string="A").is_error
    assert observed(ws, files / "c.txt") is None


def test_the_old_path_is_not_observed_for_a_new_file_there(ws, files):
    ws.run("read", file_path="a.txt")
    move(ws, "a.txt", "c.txt")
    (files / "a.txt").write_text("a new file\n")
    assert_error(
        ws.run("write", file_path="a.txt", content="x"),
        "FS_NOT_OBSERVED",
        'cannot write "a.txt": read it first in this session',
    )


def test_an_unread_file_stays_unread_after_a_move(ws, files):
    move(ws, "a.txt", "c.txt")
    assert_error(
        ws.run("edit", file_path="c.txt", old_string="alpha", new_string="A"),
        "FS_NOT_OBSERVED",
        'cannot write "c.txt": read it first in this session',
    )


def test_a_file_changed_since_it_was_read_still_needs_a_read_after_a_move(ws, files):
    ws.run("read", file_path="a.txt")
    (files / "a.txt").write_text("changed\n")
    assert move(ws, "a.txt", "c.txt").is_error is False
    assert_error(
        ws.run("edit", file_path="c.txt", old_string="changed", new_string="C"),
        "FS_NOT_OBSERVED",
        'cannot write "c.txt": it changed since this session last read it; read it again',
    )


def test_the_moved_files_observation_replaces_the_overwritten_ones(ws, files):
    ws.run("read", file_path="a.txt")
    ws.run("read", file_path="b.txt")
    assert move(ws, "a.txt", "b.txt", overwrite=True).is_error is False
    assert ws.run("edit", file_path="b.txt", old_string="alpha", new_string="A").text.split("\n")[0] == (
        "The file b.txt has been updated successfully."
    )


def test_observations_follow_a_moved_folder(ws, files):
    ws.run("read", file_path="d/sub/x.txt")
    ws.run("read", file_path="d/y.txt")
    assert move(ws, "d", "e").is_error is False
    assert not ws.run("edit", file_path="e/sub/x.txt", old_string="x", new_string="X").is_error
    assert not ws.run("edit", file_path="e/y.txt", old_string="y", new_string="Y").is_error
    assert observed(ws, files / "e" / "y.txt") is not None
    keys = [observation_key(str(files / "d" / p)) for p in ("sub/x.txt", "y.txt")]
    assert [ws.store.observed_version(ws.key(), k) for k in keys] == [None, None]


def test_a_folder_named_like_a_prefix_keeps_its_observations(ws, files):
    (files / "dd").mkdir()
    (files / "dd" / "z.txt").write_text("z\n")
    ws.run("read", file_path="dd/z.txt")
    move(ws, "d", "e")
    assert not ws.run("edit", file_path="dd/z.txt", old_string="z", new_string="Z").is_error


def test_another_sessions_observation_stays_with_the_old_path(make_ws, files):
    make_ws(session="other").run("read", file_path="a.txt")
    assert move(make_ws(), "a.txt", "c.txt").is_error is False
    assert_error(
        make_ws(session="other").run("edit", file_path="c.txt", old_string="alpha", new_string="A"),
        "FS_NOT_OBSERVED",
        'cannot write "c.txt": read it first in this session',
    )


# -- fs.rename on real files ----------------------------------------------------------------------


@pytest.fixture
def folders(tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    fds = [os.open(tmp_path / name, os.O_RDONLY | os.O_DIRECTORY) for name in ("one", "two")]
    yield tmp_path / "one", tmp_path / "two", fds[0], fds[1]
    for fd in fds:
        os.close(fd)


def test_a_move_to_a_free_name_never_replaces_one(folders):
    one, two, fd1, fd2 = folders
    (one / "a").write_text("a\n")
    (two / "a").write_text("theirs\n")
    for is_dir in (False, True):
        with pytest.raises(FileExistsError):
            move_to_free_name(fd1, "a", fd2, "a", is_dir=is_dir)
    assert (one / "a").read_text() == "a\n" and (two / "a").read_text() == "theirs\n"
    move_to_free_name(fd1, "a", fd2, "b", is_dir=False)
    assert (two / "b").read_text() == "a\n" and not (one / "a").exists()


def test_the_link_fallback_moves_a_file_and_refuses_a_taken_name(folders):
    one, two, fd1, fd2 = folders
    (one / "a").write_text("a\n")
    (two / "taken").write_text("theirs\n")
    with pytest.raises(FileExistsError):
        link_then_unlink(fd1, "a", fd2, "taken")
    assert (two / "taken").read_text() == "theirs\n" and (one / "a").exists()
    link_then_unlink(fd1, "a", fd2, "b")
    assert (two / "b").read_text() == "a\n" and not (one / "a").exists()
    os.symlink("target", one / "l")  # a symlink moves as a link, never followed
    link_then_unlink(fd1, "l", fd2, "l")
    assert os.readlink(two / "l") == "target" and not os.path.lexists(one / "l")


def test_a_move_over_a_file_that_was_replaced_first_puts_everything_back(folders):
    one, two, fd1, fd2 = folders
    (one / "a").write_text("ours\n")
    (two / "b").write_text("checked\n")
    checked = os.stat(two / "b")
    (two / "b.new").write_text("neighbour\n")
    os.replace(two / "b.new", two / "b")
    for replace in (move_over, check_then_rename):
        with pytest.raises(Changed):
            replace(fd1, "a", fd2, "b", checked)
        assert (one / "a").read_text() == "ours\n" and (two / "b").read_text() == "neighbour\n"
        assert sorted(p.name for p in two.iterdir()) == ["b"]


@pytest.mark.parametrize("replace", [move_over, check_then_rename])
def test_a_move_over_the_checked_file_replaces_it(folders, replace):
    one, two, fd1, fd2 = folders
    (one / "a").write_text("ours\n")
    (two / "b").write_text("checked\n")
    replace(fd1, "a", fd2, "b", os.stat(two / "b"))
    assert (two / "b").read_text() == "ours\n" and not (one / "a").exists()
    assert sorted(p.name for p in two.iterdir()) == ["b"]


@pytest.mark.parametrize("replace", [move_over, check_then_rename])
def test_a_move_over_another_name_of_the_same_file_removes_the_old_name(folders, replace):
    one, two, fd1, fd2 = folders
    (one / "a").write_text("same\n")
    os.link(one / "a", two / "b")
    replace(fd1, "a", fd2, "b", os.stat(two / "b"))
    assert not (one / "a").exists() and (two / "b").read_text() == "same\n"


def test_a_file_that_took_a_parents_place_after_the_first_look_is_never_moved_onto(ws, files):
    """The walk that makes missing parents names the file it met where a folder should be; the
    check inside the gate refuses it, even with overwrite and that file read."""
    from dsh_jupyter.core.errors import ToolError
    from dsh_jupyter.core.state.gate import gated
    from dsh_jupyter.core.tools.move.tool import _move

    ws.run("read", file_path="b.txt")
    ctx = ws.context("s1", ws.user)
    with (
        ctx.resolve("a.txt", "move", follow_last=False) as src,
        ctx.resolve("b.txt/a.txt", "move to", follow_last=False, make_parents=True) as dst,
    ):
        assert dst.entry.parent_not_dir
        with pytest.raises(ToolError) as caught, gated(ctx.store, "move", src.display) as gate:
            _move(ctx, gate, src, dst, True)
    assert caught.value.message == 'cannot move to "b.txt/a.txt": a parent is not a directory'
    assert (files / "a.txt").read_text() == "alpha\n" and (files / "b.txt").read_text() == "beta\n"
