"""The ``glob`` tool: files by name under a folder, oldest first, and the ways it keeps that order fast.

``tool`` is the executor (what to ask rg, the page, the value, the spill); ``split`` cuts the tree
in two and merges two sorted walks by modification time; ``dating`` dates rg's unsorted walks as
they come; ``helper`` is the second process that dates part of a big walk where the compiled
dater is missing.
"""
