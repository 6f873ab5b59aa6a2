"""What the tools do about files a person has open in JupyterLab (the server says which: ``core/documents.py``).

``documents`` is what ``read``, ``edit``, ``write`` and ``move`` do instead of the file when it is
open: through its shared document, or its tabs, every answer saying so. ``file_list`` is the list
of open files a person's view shows, by ``list``'s rules (not a tool call).
"""
