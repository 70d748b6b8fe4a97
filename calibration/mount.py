"""A camera as mounted: the :class:`~calibration.geometry.CameraModel` of a layout's nominal mount.

The calibration checks a camera against it (which markers it should see); the renderer draws
the pictures the vision is measured on through it.
"""
from __future__ import annotations

from calibration.geometry import CameraModel, Layout


def mount_camera(layout: Layout, name: str | None = None) -> CameraModel:
    """The camera *name* of the layout (the view's camera when None) as mounted: its nominal pose and lens."""
    mount = layout.mount(name)
    return CameraModel.looking_at(mount.position, mount.aim, mount.focal_px, mount.size)
