"""What one tool call runs with: settings, confinement, state, session and cancellation."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from .paths import Resolver
from .settings import Settings

__all__ = ["CallContext"]


@dataclass
class CallContext:
    settings: Settings
    resolver: Resolver
    store: object | None  # state.StateStore; None when the state file could not be opened
    spills: object | None  # spill.SpillStore
    session: str
    cwd: str  # the session cwd (absolute, real)
    call_id: str
    rg: str | None = None  # the ripgrep binary, when one was found
    cancel: threading.Event = field(default_factory=threading.Event)
