"""Tool executors: parse arguments, resolve paths, do the I/O, hand a value to a renderer.

Here, what every tool is made of and runs with: ``spec`` (``ToolSpec``), ``context``
(``CallContext``), ``arguments`` (validation from the JSON Schema), ``writing`` (what ``write``,
``edit`` and ``move`` share) and ``cells`` (the notebook cell view and edits ``read``, ``write`` and
``edit`` share). What several tools share has a folder: ``search/`` (glob and grep), ``opened/``
(files a person has open in JupyterLab). Then one folder per tool family, its executor in
``tool.py``: ``listing/`` (``list``, ``list_dir``, the widgets' pages), ``read/``, ``write/``,
``edit/``, ``move/``, ``glob/``, ``grep/``.
"""
