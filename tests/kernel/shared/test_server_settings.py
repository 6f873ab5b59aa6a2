"""A kernel started by a real server pages as the server's REST API does: it gets every setting.

The server runs with ``c.DshJupyter.glob_max_results = 3``; the kernel is started through the
server's own kernel manager and told nothing by hand. Its ``%dsh glob`` shows the same 3-path
sampled page and footer as ``POST /dsh/api/tools/glob``, until the notebook sets its own value.
"""

from __future__ import annotations

import json

import pytest

from .test_shared_session import rest_tool, run, server_kernel


@pytest.fixture
def jp_server_config(jp_server_config):
    jp_server_config["DshJupyter"]["glob_max_results"] = 3
    return jp_server_config


def without(text: str, locator: str) -> str:
    return text.replace(locator, "LOC")


async def test_a_server_kernel_uses_every_server_setting(jp_serverapp, jp_fetch, jp_root_dir, spill_root, tree):
    tree(jp_root_dir, {f"many/d{i}/f{j}.txt": "x\n" for i in range(8) for j in range(2)})
    rest = await rest_tool(jp_fetch, "glob", {"pattern": "*.txt", "path": "many"}, session="agent")
    assert len(rest["value"]["paths"]) == 3 and rest["value"]["sampled"] is True
    assert rest["text"].endswith(
        "(Showing 3 of 16 paths, sampled across 3 of the 8 top-level entries this pattern matched instead of "
        f"taken in modification-time order; narrow path to see the others. Full sorted result stored at: "
        f"{rest['value']['spill']}. Use read with offset/limit, or grep this path to search within it.)"
    )
    async with server_kernel(jp_serverapp) as kernel:
        assert (await run(kernel, "%load_ext dsh_jupyter"))["status"] == "ok"
        got = await run(kernel, "import json, os; print(json.loads(os.environ['DSH_SETTINGS'])['glob_max_results'])")
        assert got["stdout"] == "3\n"
        got = await run(kernel, "%dsh glob '*.txt' many --json")
        assert got["status"] == "ok", got
        value = json.loads(got["stdout"])
        assert value["paths"] == rest["value"]["paths"]
        got = await run(kernel, "%dsh glob '*.txt' many --text")
        kernel_spill = got["stdout"].rpartition("stored at: ")[2].partition(". Use read")[0]
        assert kernel_spill.startswith(str(spill_root))  # the server's spill root
        assert without(got["stdout"], kernel_spill) == without(rest["text"], rest["value"]["spill"]) + "\n"
        # the notebook's own setting wins over the server's
        await run(kernel, "%config DshMagics.glob_max_results = 5")
        got = await run(kernel, "%dsh glob '*.txt' many --json")
        assert len(json.loads(got["stdout"])["paths"]) == 5
