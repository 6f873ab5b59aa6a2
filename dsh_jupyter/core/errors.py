"""Tool failures as one exception type with a stable code.

Executors raise ``ToolError``; the workspace turns it into a result whose text is
``Error: <message>`` and whose value is ``{name, code, message}``. Messages are one sentence,
never carry a traceback, and name paths only by their display form.
"""

from __future__ import annotations

__all__ = ["Codes", "ToolError"]


class Codes:
    """The stable error codes a result can carry (tests and clients match on these)."""

    ARGUMENT_INVALID = "ARGUMENT_INVALID"
    FS_NOT_FOUND = "FS_NOT_FOUND"
    FS_NOT_DIRECTORY = "FS_NOT_DIRECTORY"
    FS_NOT_REGULAR_FILE = "FS_NOT_REGULAR_FILE"
    FS_NOT_TEXT = "FS_NOT_TEXT"
    FS_OUTSIDE_ROOT = "FS_OUTSIDE_ROOT"
    FS_SYMLINK_LOOP = "FS_SYMLINK_LOOP"
    FS_NOT_OBSERVED = "FS_NOT_OBSERVED"
    FS_EXISTS = "FS_EXISTS"
    FS_READ_ONLY = "FS_READ_ONLY"
    FS_PERMISSION_DENIED = "FS_PERMISSION_DENIED"
    FS_HIDDEN = "FS_HIDDEN"
    FS_PROTECTED = "FS_PROTECTED"
    FS_TOO_LARGE = "FS_TOO_LARGE"
    FS_ROOT_UNAVAILABLE = "FS_ROOT_UNAVAILABLE"
    # a file a person has open in JupyterLab (core/documents.py)
    FS_OPEN_UNSAVED = "FS_OPEN_UNSAVED"
    FS_OPEN_UNANSWERED = "FS_OPEN_UNANSWERED"
    FS_OPEN_CONFLICT = "FS_OPEN_CONFLICT"
    FS_ERROR = "FS_ERROR"
    EDIT_NOT_FOUND = "EDIT_NOT_FOUND"
    EDIT_AMBIGUOUS = "EDIT_AMBIGUOUS"
    NOTEBOOK_INVALID = "NOTEBOOK_INVALID"
    # replace: the preview's total no longer holds; a change over a call's bounds
    REPLACE_COUNT_CHANGED = "REPLACE_COUNT_CHANGED"
    REPLACE_TOO_MANY = "REPLACE_TOO_MANY"
    IMAGE_TOO_LARGE = "IMAGE_TOO_LARGE"
    IMAGE_INVALID = "IMAGE_INVALID"
    IMAGE_UNSUPPORTED = "IMAGE_UNSUPPORTED"
    STATE_UNAVAILABLE = "STATE_UNAVAILABLE"
    SEARCH_INVALID_PATTERN = "SEARCH_INVALID_PATTERN"
    SEARCH_FAILED = "SEARCH_FAILED"
    SEARCH_RAW_OUTPUT_OVERFLOW = "SEARCH_RAW_OUTPUT_OVERFLOW"
    SEARCH_ABORTED = "SEARCH_ABORTED"
    TOOL_UNKNOWN = "TOOL_UNKNOWN"
    # list_dir keeps the codes of the system it is compatible with
    LIST_DIR_NOT_FOUND = "not-found"
    LIST_DIR_NOT_A_DIR = "not-a-dir"
    LIST_DIR_FS_ERROR = "fs-error"


class ToolError(Exception):
    """A tool call that failed in a way the model should be told about."""

    def __init__(self, code: str, message: str, name: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.name = name or _default_name(code)

    def as_value(self) -> dict[str, str]:
        return {"name": self.name, "code": self.code, "message": self.message}


def _default_name(code: str) -> str:
    if code.startswith("FS_") or code in ("not-found", "not-a-dir", "fs-error"):
        return "FsError"
    if code.startswith("SEARCH_"):
        return "SearchError"
    if code.startswith("EDIT_"):
        return "EditError"
    if code.startswith("NOTEBOOK_"):
        return "NotebookError"
    if code.startswith("IMAGE_"):
        return "ImageError"
    if code.startswith("STATE_"):
        return "StateError"
    return "ArgumentError" if code == "ARGUMENT_INVALID" else "ToolError"
