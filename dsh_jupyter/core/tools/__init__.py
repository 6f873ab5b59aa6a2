"""Tool executors: parse arguments, resolve paths, do the I/O, hand a value to a renderer."""
