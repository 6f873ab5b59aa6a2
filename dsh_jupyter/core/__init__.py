"""The core: filesystem seam, confinement, state, spills, ripgrep, tools and their renderers.

Nothing under ``dsh_jupyter.core`` may import Jupyter, tornado or ipywidgets: the REST handlers
and the kernel magic are thin adapters over this package, and it must stay usable from plain
Python (``dsh_jupyter.Workspace``).
"""
