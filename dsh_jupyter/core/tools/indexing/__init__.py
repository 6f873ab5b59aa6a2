"""The workspace index at work: built from rg's own list, kept fresh by file events, asked by
grep, glob and find (``keeper``). What it stores and how it narrows a search: ``core.index``."""
