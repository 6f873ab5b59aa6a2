"""The ``write`` tool: a whole file created or replaced, or merged into the document a person has open.

``tool`` is the executor. What it shares with ``edit`` and ``move`` (the refusals, the checks
inside the write gate, the gated atomic replace) is ``tools/writing.py``.
"""
