"""The filesystem, through descriptors beneath the root: resolution, file I/O, rewrites, visibility, text windows."""
