"""tablectl sub-commands for the camera: `calibrate table`, `calibrate chips`, `bench vision`."""
from __future__ import annotations


def register(commands, bench, calibrate) -> None:
    """Add this module's sub-commands to the ``tablectl`` parsers."""
