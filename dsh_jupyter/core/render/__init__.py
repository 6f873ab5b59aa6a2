"""Pure render functions: canonical value in, model-visible text out.

Nothing in this package touches the filesystem, the state store or a process; every function is
deterministic and tested against exact strings. The text a model sees comes only from here.
"""
