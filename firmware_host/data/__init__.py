"""The files the controller reads at run time, shipped in the wheel as package data.

Each lives once in git, where the repository's layout puts it; the names here are symbolic links
to it, and building the wheel copies what they point to (``tests/test_packaging.py`` checks it):

- ``demo-session``: ``tests/recordings/demo-session``, the recorded session ``tablectl demo`` replays;
- ``tables``: ``hardware/tables``, table profiles (reader map, console pins);
- ``camera``: ``hardware/camera``, the chip cameras' mounts, markers and zones;
- ``mosquitto``: ``hardware/mosquitto``, example configs (broker, ACL, users, the controller's TOML).

Read them through :func:`path` or :func:`read_text`, never by a path into the checkout.
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from importlib.resources import as_file, files
from pathlib import Path

DEMO_SESSION = "demo-session"
DEMO_TABLE = "tables/demo-10.toml"
CAMERA_LAYOUT = "camera/table8.toml"


def path(name: str) -> AbstractContextManager[Path]:
    """Shipped file or folder *name* (e.g. ``camera/table8.toml``) as a path on disk, for a ``with`` block.

    >>> with path(CAMERA_LAYOUT) as layout:
    ...     layout.name
    'table8.toml'
    """
    return as_file(files(__name__).joinpath(name))


def read_text(name: str) -> str:
    """The text of shipped file *name*; :class:`FileNotFoundError` if there is none."""
    return files(__name__).joinpath(name).read_text(encoding="utf-8")
