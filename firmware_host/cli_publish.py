"""tablectl sub-commands for publishing: `run`, `bench mqtt`."""
from __future__ import annotations


def register(commands, bench, calibrate) -> None:
    """Add this module's sub-commands to the ``tablectl`` parsers."""
