"""``replace``: a pattern changed across the workspace, previewed first, then applied all or nothing.

Without ``occurrences`` the call is a preview and changes nothing: every occurrence (found by rg
as ``grep`` finds matches, notebooks by their cell sources; ``occurrences.py``) with its id, its
place and its line before and after, a page of them (``offset``, ``replace_max_results``) with
the exact totals, the whole preview saved as grep saves a capped result. The preview is a read:
each file it shows is recorded as this session's observation of the version it saw.

With ``occurrences`` (ids, or ``"all"`` guarded by ``expected_count``) the same search runs
again and the chosen occurrences are changed in every file at once (``apply.py``). A file open in
JupyterLab is searched and changed through its live document (``live.py``), and its answer
says so (``changed[].open``, ``changed[].live``).

What it must never do: change anything in a preview, or change a file whose current version
the session did not preview or read.
"""

from __future__ import annotations

from typing import Any

from ...errors import Codes, ToolError
from ...render.replace import preview_body, render_replace, replace_next_offset, replace_page_footer
from ...state.gate import record_read
from ..context import CallContext
from ..grep.tool import _check_include
from ..search.flags import user_excludes
from ..search.root import open_search_root
from ..search.spill import save_spill
from ..spec import (
    BOOLEAN,
    EXCLUDE,
    INDEX_FIELDS,
    INTEGER,
    NAME,
    OFFSET,
    OPEN,
    PATH,
    STRING,
    TEXT,
    Rows,
    ToolSpec,
    nullable,
    object_schema,
    value_schema,
)
from .apply import apply_planned, chosen_occurrences, plan_files
from .live import how_open, live_occurrences
from .occurrences import FileHits, Found, find_occurrences, search_args

__all__ = ["REPLACE", "execute_replace"]

_MAX_IDS = 20_000


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " …"


def execute_replace(ctx: CallContext, args: dict) -> dict:
    pattern: str = args["pattern"]
    replacement: str = args["replacement"]
    include = args.get("include")
    if include is not None:
        _check_include(include)
    excludes = user_excludes(args.get("exclude"))
    literal = bool(args.get("literal", False))
    ignore_case = bool(args.get("ignore_case", False))
    wanted = args.get("occurrences")
    if wanted == ["all"]:  # as %dsh gives it: --occurrences all
        wanted = "all"
    if wanted is not None and args.get("offset") is not None:
        raise ToolError(Codes.ARGUMENT_INVALID, "offset pages a preview; it does not go with occurrences")
    if wanted is None and args.get("expected_count") is not None:
        raise ToolError(Codes.ARGUMENT_INVALID, 'expected_count goes with occurrences "all"')
    with open_search_root(ctx, args.get("path"), "replace in", spills=False) as root:
        value: dict[str, Any] = {"pattern": pattern, "replacement": replacement, "root": root.target.display}
        found = find_occurrences(ctx, root, pattern, replacement, include, excludes, literal, ignore_case, value)
        search = search_args(pattern, replacement, literal, ignore_case)
        found = live_occurrences(ctx, root, found, search, applying=wanted is not None)
        if literal:
            value["literal"] = True
        if ignore_case:
            value["ignoreCase"] = True
        if excludes:
            value["exclude"] = excludes
        if found.unreadable:
            value["unreadable"] = found.unreadable
        if found.too_large:
            value["tooLarge"] = found.too_large
        if ctx.settings.respect_ignore_files and root.is_dir:
            value["ignoreFiles"] = True
        if wanted is None:
            return _preview(ctx, value, found, args.get("offset", 1))
        chosen = chosen_occurrences(ctx, found, wanted, args.get("expected_count"), root.real)
        planned = plan_files(ctx, root, found, chosen)
        apply_planned(ctx, root, planned)
    value["applied"] = True
    value["replacements"] = sum(len(p.chosen) for p in planned)
    value["changed"] = [_changed(p.fh, len(p.chosen)) for p in planned]
    return value


def _changed(fh: FileHits, replacements: int) -> dict:
    row: dict[str, Any] = {"path": fh.display, "replacements": replacements}
    how = how_open(fh)
    if how is not None:  # open in JupyterLab: changed through its live document (as edit's ``live``)
        row["open"] = how
        row["live"] = True
    return row


def _preview(ctx: CallContext, value: dict, found: Found, offset: int) -> dict:
    limit = ctx.settings.grep_max_line_bytes
    rows = []
    for fh in found.files:
        assert fh.st is not None
        record_read(ctx.store, ctx.session_key, fh.real, fh.version)  # the preview is a read
        for cell, o in fh.all():
            row: dict[str, Any] = {"id": o.id, "path": fh.display, "line": o.line}
            if cell is not None:
                row["cell"] = cell
            row["before"], row["after"] = _cut(o.before, limit), _cut(o.after, limit)
            # where the occurrence is in ``before`` (characters, as grep's submatches), for a view
            # to strike it; ``after`` holds the replacement at the same start
            row["span"] = [o.column, o.column + len(o.match.decode("utf-8", "replace"))]
            rows.append(row)
    total = len(rows)
    if offset > max(total, 1):
        raise ToolError(Codes.ARGUMENT_INVALID, f"offset {offset} is out of range ({total} occurrences)")
    cap = ctx.settings.replace_max_results
    value.update(
        occurrences=rows[offset - 1 : offset - 1 + cap],
        totalOccurrences=total,
        files=len(found.files),
        offset=offset,
        spill=None,
    )
    if total > cap:
        value["spill"] = save_spill(ctx, "replace", "\n".join(preview_body(rows)) + "\n", value["pattern"])
    return value


REPLACE_OUTPUT = value_schema(
    {
        "pattern": STRING,
        "replacement": STRING,
        "root": STRING,
        "occurrences": {
            "type": "array",
            "items": value_schema(
                {
                    "id": STRING,
                    "path": STRING,
                    "line": INTEGER,
                    "cell": INTEGER,
                    "before": STRING,
                    "after": STRING,
                    "span": {"type": "array", "items": INTEGER, "minItems": 2, "maxItems": 2},
                },
                ("id", "path", "line", "before", "after", "span"),
            ),
        },
        "totalOccurrences": INTEGER,
        "files": INTEGER,
        "offset": INTEGER,
        "spill": nullable(STRING),
        "literal": BOOLEAN,
        "ignoreCase": BOOLEAN,
        "exclude": {"type": "array", "items": STRING},
        "ignoreFiles": BOOLEAN,
        "unreadable": INTEGER,
        "tooLarge": INTEGER,
        "applied": BOOLEAN,
        "replacements": INTEGER,
        "changed": {
            "type": "array",
            "items": value_schema(
                {"path": STRING, "replacements": INTEGER, "open": OPEN, "live": BOOLEAN}, ("path", "replacements")
            ),
        },
        **INDEX_FIELDS,
    },
    ("pattern", "replacement", "root"),
)

REPLACE = ToolSpec(
    name="replace",
    title="Replace across files",
    description=(
        "Replace a regular expression (ripgrep's syntax; $1 or ${name} in replacement for a group) or, "
        "with literal true, plain text, in every file below path and in notebooks' cell sources (never "
        "outputs or metadata), with grep's visibility rules. Without occurrences it is a preview and "
        "changes nothing: every occurrence with its id, its place (Line L, or Cell C, line L) and its "
        "line before (-) and after (+), with the exact totals. To apply, call again with the same "
        'arguments and occurrences: the ids to change, or "all" with expected_count set to the total '
        "the preview showed. All or nothing: a file changed since the preview refuses the whole call."
    ),
    input_schema=object_schema(
        {
            "pattern": {**NAME, "description": "Regular expression (ripgrep's syntax), or text with literal true."},
            "replacement": {**TEXT, "description": "What each occurrence becomes; $1 or ${name} insert a group."},
            "path": {**PATH, "description": "Directory or file to change (default: working directory)."},
            "include": {**NAME, "description": "Only files whose name matches this glob, such as *.py."},
            "exclude": {**EXCLUDE, "description": "Glob(s) of paths to leave out, as grep's exclude."},
            "literal": {"type": "boolean", "description": "pattern is plain text, not a regex (default false)."},
            "ignore_case": {"type": "boolean", "description": "Match regardless of case (default false)."},
            "occurrences": {
                "anyOf": [
                    {"type": "array", "items": NAME, "minItems": 1, "maxItems": _MAX_IDS},
                    {"type": "string", "enum": ["all"]},
                ],
                "description": 'Apply: the ids from the preview to change, or "all" (with expected_count).',
            },
            "expected_count": {
                "type": "integer",
                "minimum": 0,
                "description": 'With occurrences "all": the total the preview showed; refused if it changed.',
            },
            "offset": {**OFFSET, "description": "Preview: 1-based position of the first occurrence shown."},
        },
        ("pattern", "replacement"),
    ),
    output_schema=REPLACE_OUTPUT,
    guidance=(
        "Use replace to change the same thing in many files (a rename across a package and its "
        "notebooks): preview first, check the before/after lines, then apply the ids you want, or "
        '"all" with expected_count. Use edit for one change in one file.'
    ),
    execute=execute_replace,
    render=render_replace,
    searches=True,
    writes=True,
    destructive=True,
    idempotent=False,
    rows=(Rows("occurrences", ("path", "line", "before", "after")), Rows("changed", ("path", "replacements"))),
    footer=replace_page_footer,
    next_offset=replace_next_offset,
)
