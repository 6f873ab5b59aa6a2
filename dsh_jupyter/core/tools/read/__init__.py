"""The ``read`` tool: a numbered window of a text file, a notebook's cells, an image's size.

``tool`` is the executor (the window, the open document, the observation it records); ``image``
answers an image file. A notebook's cell view is ``tools/cells.py``, shared with ``write`` and
``edit``.
"""
