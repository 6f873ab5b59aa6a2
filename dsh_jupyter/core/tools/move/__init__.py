"""The ``move`` tool: a file or folder renamed inside the root, never over a name this session has not read.

``tool`` is the executor; the refusals it shares with ``write`` and ``edit`` are ``tools/writing.py``.
"""
