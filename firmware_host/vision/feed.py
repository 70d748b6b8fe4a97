"""A chip camera at work: its frames counted with its own calibration, one frame per tick.

The thin shell around :mod:`firmware_host.vision.counter`: health, then the count against
the previous frame, then stability, for one frame of a :class:`drivers.camera.Camera`
(a V4L2 device at the table, a video file in a replay). The same class serves
``tablectl run --camera`` and the replay of a recording with video.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from calibration.chips import ChipModels, load_models
from calibration.geometry import TableCalibration, load_calibration
from drivers.camera import Camera
from firmware_host.observations import Observation
from firmware_host.vision.counter import ChipCounter
from firmware_host.vision.faceup import FaceUp
from firmware_host.vision.health import CameraHealth
from firmware_host.vision.results import WHY
from firmware_host.vision.stability import Stability
from firmware_host.vision.witness import Witness

__all__ = ["STABLE_FRAMES", "TOGETHER_S", "CameraFeed", "load_camera_calibration", "unsure"]

STABLE_FRAMES = 3   # N: still frames before a zone's chips are reported (docs/vision.md)
TOGETHER_S = 0.05  # another camera's frame taken this near in time is of the same moment: a second view


def load_camera_calibration(table: str | Path, chips: str | Path) -> tuple[TableCalibration, ChipModels]:
    """The two files ``tablectl calibrate table`` / ``calibrate chips`` wrote for one camera;
    ValueError naming the file that cannot be used."""
    try:
        calib = load_calibration(table)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise ValueError(f"{table}: not a usable table calibration: {exc}") from None
    try:
        models = load_models(chips)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{chips}: not a usable chip calibration: {exc}") from None
    if models.hidden and calib.empty is None:  # the zones are checked against it (ChipCounter._unseen)
        raise ValueError(f"{chips}: chips {', '.join(str(v) for v, _, _ in models.hidden)} look like the felt, and "
                         f"{table} holds no picture of the empty table to check the zones against: run calibrate "
                         "table again on an empty table")
    return calib, models


class CameraFeed:
    """One camera: :meth:`tick` reads its next frame and gives the observations it makes."""

    def __init__(self, name: str, camera: Camera, calib: TableCalibration, models: ChipModels,
                 frames: int = STABLE_FRAMES) -> None:
        self.name, self.camera, self.calib, self.models = name, camera, calib, models
        self.on_frame: Callable[[float, np.ndarray], None] | None = None  # a recorder's hook: each frame, its time
        self.missed = 0  # ticks in a row without a frame
        self.counter = ChipCounter(calib, models)
        self.stability = Stability(frames)
        self.face_up = FaceUp(frames)
        self.health = CameraHealth(self.counter)
        self.others: list[CameraFeed] = []  # the table's other cameras: their frames are second views of ours
        self.latest: tuple[float, np.ndarray] | None = None  # this camera's last frame, for the others
        self._previous: np.ndarray | None = None

    def tick(self, t: float) -> list[Observation]:
        """The next frame (or none, stamped *t*): chip counts, cards face up, camera faults."""
        item = self.camera.read()
        if item is None:
            self.missed += 1
            return self.health.feed(t, None)
        self.missed = 0
        t, frame = item
        if self.on_frame is not None:
            self.on_frame(t, frame)
        out = self.health.feed(t, frame)
        self.counter.sides.blur_px = max((b for b in (self.calib.blur_px, self.health.blur_px) if b is not None),
                                         default=None)  # a focus drifted since calibration: sides read as it allows
        self._previous, previous = frame, self._previous
        if "moved" in self.health.faults:  # its zones are no longer where it counts: nothing until recalibrated
            self.stability.hold()
            return out
        result = self.counter.count(frame, previous, witnesses=self.witnesses(t))
        self.latest = (t, frame)
        return out + self.stability.feed(t, result) + self.face_up.feed(t, result)

    def witnesses(self, t: float) -> list[Witness]:
        """The other cameras' last frames taken within ``TOGETHER_S`` of *t*, each as a second view (a frame
        of a camera whose zones have moved, or whose white patch is hidden, is none)."""
        out = []
        for other in self.others:
            latest = other.latest  # (one reference, set whole by its own thread)
            if latest is not None and abs(latest[0] - t) <= TOGETHER_S and "moved" not in other.health.faults:
                witness = other.counter.witness(latest[1])
                if witness is not None:
                    out.append(witness)
        return out

    def unsure(self) -> frozenset[str]:
        """Zones held still but not counted with confidence (the dealer is asked to look)."""
        return self.stability.unsure()

    def close(self) -> None:
        self.camera.close()


def unsure(feeds: Iterable[CameraFeed]) -> dict[str, str]:
    """The zones any of *feeds* holds still but cannot count with confidence (the dealer is asked),
    each with why, in words (``counter.WHY``)."""
    return {zone: "; ".join(WHY.get(w, w) for w in feed.stability.why(zone))
            for feed in feeds for zone in sorted(feed.unsure())}
