"""A workspace index kept in the state folder: what can narrow a search before rg decides it.

``plan`` turns a grep pattern into the substrings every matching line holds (the candidate query);
``globs`` decides rg's ``--glob`` (glob's pattern, grep's include and exclude) from a path alone;
``watch`` reports the file events under the root and whether none was lost since it started (an
answer from the index is allowed only while none was); ``store`` is the index file. Building,
freshening and asking it runs rg, so that lives with the tools (``tools.indexing``). What they
must respect, measured with the bundled rg 15 (each is a way an answer from candidates would
differ from rg's over the tree):

- rg treats a file named on its command line differently from one it finds walking a folder: a
  named file is searched even when it holds a NUL byte (``binary file matches``, or every line
  when the NUL comes late), where a walk skips it, or stops at the NUL; ``--glob`` never applies
  to a named file; ignore files never hide one. So candidates cannot simply be passed as paths:
  the visibility rules and ``include``/``exclude`` have to be decided by the index with rg's
  semantics (``globs`` does the globs, or says it cannot), and a file holding a NUL searched as
  a walk finds it.
- FTS5's ``trigram`` tokenizer folds case (``case_sensitive 0``) and answers nothing for fewer
  than three characters; ``plan`` builds on exactly that.
"""
