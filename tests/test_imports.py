"""Every module imports, and the core's modules import each other without a circle.

An import circle works only while every name is looked up late (a lazy import inside a function,
a module attribute read at call time); the first ``from x import y`` at the top of either module
breaks it. The graph is read from the source with ``ast`` — every ``import`` statement counts,
also one inside a function — so a circle is caught even when it happens to import today.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import dsh_jupyter

PACKAGE = Path(dsh_jupyter.__file__).parent


def all_modules() -> list[str]:
    names = ["dsh_jupyter"]
    for info in pkgutil.walk_packages([str(PACKAGE)], prefix="dsh_jupyter."):
        names.append(info.name)
    return sorted(names)


def module_file(name: str) -> Path | None:
    if name == "dsh_jupyter":
        return PACKAGE / "__init__.py"
    rel = Path(*name.split(".")[1:])
    for candidate in (PACKAGE / rel.with_suffix(".py"), PACKAGE / rel / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_modules(name: str, known: set[str]) -> set[str]:
    """The package modules that module ``name`` imports (absolute and relative forms)."""
    path = module_file(name)
    assert path is not None, name
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # ``from pkg import mod`` imports the module pkg.mod when there is one.
            subs = {f"{target}.{alias.name}" for alias in node.names} & known
            found.update(subs or {target})
    return {m for m in found if m in known and m != name}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle in ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_every_module_imports():
    for name in all_modules():
        if name.endswith(".__main__"):
            continue  # a program, not a module: importing it runs it (its test runs it as one)
        importlib.import_module(name)


def test_the_core_has_no_import_cycle():
    known = set(all_modules())
    core = {m for m in known if m == "dsh_jupyter.core" or m.startswith("dsh_jupyter.core.")}
    graph = {m: imported_modules(m, known) & core for m in core}
    assert "dsh_jupyter.core.tools.grep.tool" in graph["dsh_jupyter.core.registry"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_cycle_finder_finds_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_the_core_imports_no_jupyter():
    known = set(all_modules())
    for name in (m for m in known if m.startswith("dsh_jupyter.core")):
        path = module_file(name)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            )
            for imported in names:
                top = imported.split(".")[0]
                assert top not in {"jupyter_server", "tornado", "ipywidgets", "IPython", "traitlets"}, (name, imported)


# The layers of docs/architecture.md, bottom first. A module may import modules of its own layer
# and of the layers below it, never of a layer above. A prefix names a module or a whole folder;
# the longest prefix that matches decides a module's layer.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "dsh_jupyter.core.errors",
            "dsh_jupyter.core.settings",
            "dsh_jupyter.core.locations",
            "dsh_jupyter.core.policy",
            "dsh_jupyter.core.progress",
            "dsh_jupyter.core.documents",
            "dsh_jupyter.core.text",
            "dsh_jupyter.core.images",
        ),
    ),
    ("fs", ("dsh_jupyter.core.fs",)),
    ("notebooks", ("dsh_jupyter.core.notebooks",)),
    ("caches", ("dsh_jupyter.core.caches",)),
    ("rg", ("dsh_jupyter.core.rg",)),
    ("state", ("dsh_jupyter.core.state",)),
    ("index", ("dsh_jupyter.core.index",)),
    ("render", ("dsh_jupyter.core.render",)),
    # tools: the framework (spec, call context, arguments, what write/edit/move share), then what
    # several tools share (search/, opened/), then a folder per tool family (and the cell view
    # that read, write and edit share)
    ("tools", ("dsh_jupyter.core.tools",)),
    (
        "tool parts",
        ("dsh_jupyter.core.tools.search", "dsh_jupyter.core.tools.opened", "dsh_jupyter.core.tools.indexing"),
    ),
    (
        "tool families",
        (
            "dsh_jupyter.core.tools.listing",
            "dsh_jupyter.core.tools.read",
            "dsh_jupyter.core.tools.write",
            "dsh_jupyter.core.tools.edit",
            "dsh_jupyter.core.tools.edit_cells",
            "dsh_jupyter.core.tools.move",
            "dsh_jupyter.core.tools.glob",
            "dsh_jupyter.core.tools.find",
            "dsh_jupyter.core.tools.grep",
            "dsh_jupyter.core.tools.replace",
            "dsh_jupyter.core.tools.cells",
        ),
    ),
    (
        "core top",
        ("dsh_jupyter.core.registry", "dsh_jupyter.core.result", "dsh_jupyter.core.workspace", "dsh_jupyter.core"),
    ),
    ("package", ("dsh_jupyter",)),  # __init__ (Workspace, the version, the extension hooks)
    ("mcp", ("dsh_jupyter.mcp",)),
    ("jupyter-side settings", ("dsh_jupyter.settings_traits",)),
    (
        "surfaces",
        ("dsh_jupyter.server", "dsh_jupyter.kernel", "dsh_jupyter.hub", "dsh_jupyter.demo", "dsh_jupyter.seedtree"),
    ),
]
# Lazy imports that run only when called, by design: the package's Jupyter hooks import the
# surfaces they start, and the settings docs table reads the server's own traits.
LAZY_UPWARD = {
    ("dsh_jupyter", "dsh_jupyter.server.app"),
    ("dsh_jupyter", "dsh_jupyter.kernel"),
    ("dsh_jupyter.settings_traits", "dsh_jupyter.server.app"),
}


def layer_of(name: str) -> int:
    best = (-1, -1)
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best[1]:
                best = (index, len(prefix))
    assert best[0] >= 0, f"{name} is in no layer of docs/architecture.md"
    return best[0]


def test_no_module_imports_from_a_layer_above_its_own():
    known = set(all_modules())
    wrong = []
    for name in sorted(known):
        if name.endswith(".__main__"):
            continue
        for target in sorted(imported_modules(name, known)):
            if (name, target) not in LAZY_UPWARD and layer_of(target) > layer_of(name):
                wrong.append(f"{name} ({LAYERS[layer_of(name)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})")
    assert not wrong, "\n".join(wrong)


def test_the_surfaces_do_not_import_each_other():
    known = set(all_modules())
    for name in known:
        if name.startswith("dsh_jupyter.kernel"):
            assert not {
                t for t in imported_modules(name, known) if t.startswith(("dsh_jupyter.server", "dsh_jupyter.mcp"))
            }, name
        if name.startswith("dsh_jupyter.mcp"):
            assert not {
                t for t in imported_modules(name, known) if t.startswith(("dsh_jupyter.server", "dsh_jupyter.kernel"))
            }, name


def test_the_layer_check_catches_an_upward_import():
    assert layer_of("dsh_jupyter.core.fs.tree") < layer_of("dsh_jupyter.core.state.store")
    assert layer_of("dsh_jupyter.core.text.quoting") == 0
    assert layer_of("dsh_jupyter.core.workspace") > layer_of("dsh_jupyter.core.tools.grep.tool")
    assert layer_of("dsh_jupyter.core.tools.grep.tool") > layer_of("dsh_jupyter.core.tools.search.run")
    assert layer_of("dsh_jupyter.core.tools.search.run") > layer_of("dsh_jupyter.core.tools.context")
    assert layer_of("dsh_jupyter.server.mcp_bridge") > layer_of("dsh_jupyter.mcp.server")


def test_tools_take_the_write_gate_only_through_the_effect_rule():
    """A tool that changes the tree takes the cross-process write gate through
    ``CallContext.changing``, which asks ``fs.effects`` first: a tool that imported ``gated``
    itself could change a protected place without the rule being asked."""
    takers = []
    for name in all_modules():
        path = module_file(name)
        if path is None or not name.startswith("dsh_jupyter.core.") or name == "dsh_jupyter.core.tools.context":
            continue
        if name.startswith("dsh_jupyter.core.state."):
            continue  # where the gate is made
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and any(a.name in ("gated", "write_gate") for a in node.names):
                takers.append(name)
            if isinstance(node, ast.Attribute) and node.attr == "write_gate":
                takers.append(name)
    assert takers == [], f"the write gate is taken outside CallContext.changing in {sorted(set(takers))}"
