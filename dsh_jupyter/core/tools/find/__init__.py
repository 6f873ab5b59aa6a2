"""``find``: files by a fragment of their path, fuzzy and ranked (``tool.py``; ranking in ``rank.py``)."""
