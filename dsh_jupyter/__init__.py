"""dsh-jupyter: a workspace explorer whose tool output never passes a page off as the whole."""

from .core.workspace import Result, Workspace

__version__ = "0.1.0"
__all__ = ["Workspace", "Result", "__version__"]
