"""glob of endings alone (``*.py``, ``**/*.{js,ts}``) answered from the workspace index in two passes at once.

Why it exists: on a big tree such a glob matches hundreds of thousands of paths, and the answer
needs three things of them: how many, a page sampled across the top-level entries, and the whole
list oldest first for the spill. Fetching every path into Python to do all three took most of a
glob's time (600,000 rows: about 0.6 s). Here SQLite makes the whole list as one string on a
thread of its own (``IndexStore.joined_by_time``: one pass over the files of the endings' one
extension in time order, or over the time index), while this
thread counts each top-level entry's paths by a skip over the path index (``IndexStore.groups``);
both let go of the interpreter while SQLite works. The page is then picked from the head of the
list: each entry's first paths in time order are found by reading lines from its start until
every entry that gets a slot has its share, which on a tree whose entries' times interleave is a
few hundred lines (an entry whose files are all the newest makes it read to the end, as before).

The rule the page follows is ``search.sampling``'s (round-robin across the entries in order of
first appearance, each entry's oldest first); ``test_glob_from_the_index_samples_as_the_walk``
holds this module to it against a workspace without the index.

What it must never do: answer a glob that is not its endings alone (the caller decides), or a
list SQLite ordered differently from rg (a path that is not UTF-8: the caller's Python sort);
and it holds the keeper's lock only while SQLite reads, so both reads see the same index.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from ...index import native
from ...render.search import render_glob_spill_joined
from ..context import CallContext
from ..indexing.ask import ask_index
from ..indexing.keeper import Served
from ..search.root import SearchRoot
from ..search.sampling import round_robin_counts

__all__ = ["MAX_GROUPS", "IndexedGlob", "Page", "indexed_glob", "sampled_page"]

MAX_GROUPS = 2_000  # top-level entries counted one by one at most; past it the caller splits the list


@dataclass
class IndexedGlob:
    """What the index gave a glob of endings: the count, the list (relative to the search root,
    oldest first, one path a line), the spill's text, and the entries with their counts in path
    order (None: too many to count one by one)."""

    total: int
    joined: str
    spill: bytes  # in UTF-8, as the spill file holds it
    groups: list[tuple[str, int]] | None


def indexed_glob(ctx: CallContext, root: SearchRoot, value: dict, endings: tuple[str, ...]) -> IndexedGlob | None:
    """The glob's paths from the index (``value["source"]`` "index"), or None: the index does not
    answer (``value`` says why once an index is in play) or a path is not UTF-8 (``value`` says
    "index": the caller sorts them itself)."""
    prefix_display = root.prefix

    def read(served: Served) -> IndexedGlob | None:
        listed = served.store.listed_by_time(served.prefix, endings, MAX_GROUPS)
        if listed is not None:
            return _from_listed(listed, prefix_display)
        return _in_sql(served, endings, prefix_display)

    return ask_index(ctx, root, value, read)


def _from_listed(listed: native.Listed, prefix_display: str) -> IndexedGlob | None:
    """The glob from one pass in C (``IndexStore.listed_by_time``): the list, counts and what
    the pass saw of the lines, so a list of ASCII names that all print bare is decoded once and
    its spill is its own bytes, with no check of the 17 MB again."""
    if listed.line_break:
        return None  # a name holds a line break: the lines do not say the names
    blob, count = listed.joined, listed.rows
    if listed.ascii:
        text = blob.decode("ascii")
    else:
        text = blob.decode("utf-8", "surrogateescape")
        if _escaped(text):
            return None  # SQLite ordered the bytes, rg orders the escapes
    if prefix_display and text:
        text = prefix_display + text.replace("\n", "\n" + prefix_display)
        spill = render_glob_spill_joined(text, count)
    else:
        spill = render_glob_spill_joined(text, count, blob, bare=listed.ascii and listed.bare)
    groups: list[tuple[str, int]] | None = None
    if listed.groups is not None:  # in path order: a folder's paths sort as "name/"
        groups = [(name.removesuffix(b"/").decode("utf-8", "surrogateescape"), n) for name, n in sorted(listed.groups)]
        if sum(n for _, n in groups) != count:
            groups = None  # cannot happen; the list itself decides then
    return IndexedGlob(count, text, spill, groups)


def _in_sql(served: Served, endings: tuple[str, ...], prefix_display: str) -> IndexedGlob | None:
    """The glob where the compiled library cannot read the list: SQLite joins it on a thread of
    its own while this one counts each top-level entry's paths."""
    store = served.store
    db = store.reader()
    made: dict = {}

    def whole() -> None:
        try:
            count, blob = store.joined_by_time(db, served.prefix, endings)
            text = blob.decode("utf-8", "surrogateescape")
            if not text.isascii() and _escaped(text):
                made["text"] = None  # SQLite ordered the bytes, rg orders the escapes
                return
            if text.count("\n") != max(count - 1, 0):
                made["text"] = None  # a name holds a line break: the lines do not say the names
                return
            if prefix_display and text:
                text = prefix_display + text.replace("\n", "\n" + prefix_display)
            # no prefix: the text is SQLite's bytes decoded, so they are its UTF-8 (a name that
            # is not UTF-8 went back above): no block of megabytes encoded or copied again
            spill = render_glob_spill_joined(text, count, None if prefix_display else blob)
            made.update(count=count, text=text, spill=spill)
        except BaseException as exc:  # handed to the caller below
            made["error"] = exc

    thread = threading.Thread(target=whole, name="dsh-glob-index", daemon=True)
    thread.start()
    try:
        groups = store.groups(served.prefix, endings, MAX_GROUPS)
    finally:
        thread.join()
        db.close()
    if "error" in made:
        raise made["error"]
    if made.get("text") is None:
        return None
    if groups is not None and sum(n for _, n in groups) != made["count"]:
        groups = None  # cannot happen under the keeper's lock; the list itself decides then
    return IndexedGlob(made["count"], made["text"], made["spill"], groups)


_ESCAPED = re.compile("[\udc80-\udcff]")  # a byte that is not UTF-8, as surrogateescape decodes it


def _escaped(text: str) -> bool:
    return _ESCAPED.search(text) is not None


@dataclass
class Page:
    """A capped page picked from the head of the list: its paths in page order, and how many
    top-level entries it shows."""

    paths: list[str]
    groups_shown: int
    flat: bool  # the page is the plain head of the list


def sampled_page(joined: str, groups: list[tuple[str, int]], cap: int, cut: int) -> Page | None:
    """``search.sampling.sample_across_groups`` over ``joined``'s lines, read only as far as the
    page needs: ``groups`` are the entries with their counts (their order here does not matter;
    the page's order is first appearance in the list), ``cut`` the length of the display prefix
    every line starts with. None: a line of an entry ``groups`` does not name."""
    sizes = dict(groups)
    want = {key: min(size, cap) for key, size in sizes.items()}  # at most what the page can take
    picked: dict[str, list[tuple[int, str]]] = {}
    order: list[str] = []
    shares: dict[str, int] | None = None  # each entry's slots, once every entry has been seen
    short = 0  # entries with fewer paths picked than their slots
    line_no, at, end = 0, 0, len(joined)
    while at < end:
        stop = joined.find("\n", at)
        if stop < 0:
            stop = end
        line = joined[at:stop]
        key = line[cut:].partition("/")[0]
        mine = picked.get(key)
        new = mine is None
        if mine is None:
            if key not in want:
                return None
            mine = picked[key] = []
            order.append(key)
        if len(mine) < want[key]:
            mine.append((line_no, line))
            if shares is not None and len(mine) == shares[key]:
                short -= 1
        line_no += 1
        at = stop + 1
        if len(order) >= cap:
            break  # the first cap entries to appear get one slot each
        if new and len(order) == len(sizes):  # every entry seen: its slots are known
            shares = dict(zip(order, round_robin_counts([sizes[k] for k in order], cap)))
            short = sum(1 for k in order if len(picked[k]) < shares[k])
        if shares is not None and short == 0:
            break
    taken = round_robin_counts([sizes[k] for k in order], cap)
    chosen = [item for key, count in zip(order, taken) for item in picked[key][:count]]
    flat = all(position == line for position, (line, _) in enumerate(chosen))
    return Page([path for _, path in chosen], sum(1 for t in taken if t), flat)
