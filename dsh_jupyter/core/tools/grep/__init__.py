"""The ``grep`` tool: lines matching a regular expression, grouped by file; notebooks by their cells.

``tool`` is the executor (what to ask rg and in which output form); ``page`` makes the complete
result a page, a value and a spill; ``notebooks`` searches notebooks' cell sources (and, asked,
their outputs' text); ``spans`` finds where the pattern matched in the shown lines, for
highlighting; ``context_lines`` reads the lines around the shown matches.
"""
