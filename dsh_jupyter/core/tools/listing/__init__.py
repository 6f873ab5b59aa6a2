"""The listing tools and the widgets' listing pages: a folder's children, read through descriptors.

``tool`` is ``list`` (one page of a folder's children, the complete count in the footer, and
``opened_folder``, how every listing opens a folder); ``list_dir`` is the compatibility listing;
``browse`` makes the widgets' pages, sorted or filtered over the whole folder (not a tool call).
"""
