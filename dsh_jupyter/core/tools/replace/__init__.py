"""``replace``: a pattern changed across files and notebooks' cell sources, previewed, then applied
all or nothing (``tool.py``; finding in ``occurrences.py``, applying in ``apply.py``, files open in
JupyterLab through their live documents in ``live.py``)."""
