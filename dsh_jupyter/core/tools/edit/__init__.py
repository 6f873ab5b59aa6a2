"""The ``edit`` tool: literal replacements in a file, in a notebook's cell sources, or in an open notebook.

``tool`` is the executor (a text file; a notebook file through ``tools/cells.py``); ``steps`` holds
an edit's steps (one replacement or an ``edits`` batch) and how a failing step is named; ``text``
applies them to a file's text in linear time; ``open_notebook`` edits a notebook open in Jupyter
through its shared document, cell by cell.
"""
