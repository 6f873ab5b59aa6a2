"""A kernel the server started follows the server's hidden-file rule (its ContentsManager's)."""

from __future__ import annotations

from .test_shared_session import run, server_kernel

HIDDEN = "hidden files are not shown here; the server's ContentsManager.allow_hidden setting allows them"


async def test_a_server_kernel_refuses_what_the_server_refuses(jp_serverapp, jp_root_dir):
    (jp_root_dir / ".env").write_text("SECRET=1\n")
    async with server_kernel(jp_serverapp) as kernel:
        assert (await run(kernel, "%load_ext dsh_jupyter"))["status"] == "ok"
        got = await run(kernel, "%dsh read .env --text")
        assert got["stdout"] == f'Error: cannot read ".env": {HIDDEN}\n', got
        got = await run(kernel, "%dsh list --text")
        assert got["stdout"].endswith("; 1 hidden entry not shown)\n</content>\n"), got
        # the plain Python API in the same kernel takes the server's settings as its defaults, so
        # it hides what the server hides; a setting given on purpose still wins
        got = await run(
            kernel, "from dsh_jupyter import Workspace; print(Workspace().run('read', file_path='.env').text)"
        )
        assert got["stdout"] == f'Error: cannot read ".env": {HIDDEN}\n', got
        got = await run(kernel, "print(Workspace(allow_hidden=True).run('read', file_path='.env').is_error)")
        assert got["stdout"] == "False\n", got
