"""tablectl sub-commands for the card path: `calibrate deck`, `bench shoe`."""
from __future__ import annotations


def register(commands, bench, calibrate) -> None:
    """Add this module's sub-commands to the ``tablectl`` parsers."""
