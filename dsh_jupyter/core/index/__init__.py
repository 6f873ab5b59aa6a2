"""A workspace index kept in the state folder: what can narrow a search before rg decides it.

``plan`` turns a grep pattern into the substrings every matching line holds (the candidate query).
"""
