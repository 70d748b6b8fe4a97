"""The chip camera: frames with timestamps, from a device or from a recorded file.

Both backends wrap ``cv2.VideoCapture``: the real one a V4L2 device (the Pi's
camera), the replay one a video file whose frame times come from its frame
rate (or a list given with it). ``read()`` returns ``(t, frame)`` or ``None``
when no frame came: the driver never raises for a missing frame, the
:class:`~firmware_host.vision.counter.CameraHealth` monitor turns silence into faults.
Every camera is closable and a context manager.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

import cv2
import numpy as np

__all__ = ["Camera", "open_device", "open_replay"]


class Camera:
    """A ``cv2.VideoCapture`` with a clock: ``read() -> (t, frame) | None``."""

    def __init__(self, capture: cv2.VideoCapture, clock: Callable[[], float], name: str) -> None:
        self._capture, self._clock, self.name = capture, clock, name
        self.closed = False

    def read(self) -> tuple[float, np.ndarray] | None:
        if self.closed:
            raise RuntimeError(f"camera {self.name} is closed")
        ok, frame = self._capture.read()
        if not ok or frame is None:
            return None
        return self._clock(), frame

    def close(self) -> None:
        if not self.closed:
            self._capture.release()
            self.closed = True

    def __enter__(self) -> Camera:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[tuple[float, np.ndarray]]:
        while (item := self.read()) is not None:
            yield item


def open_device(index: int = 0, size: tuple[int, int] = (1280, 720), fps: int = 30,
                clock: Callable[[], float] = time.monotonic) -> Camera:
    """The real camera (V4L2 device *index*); raises OSError when it cannot be opened."""
    capture = cv2.VideoCapture(index, cv2.CAP_V4L2)
    if not capture.isOpened():
        capture.release()
        raise OSError(f"cannot open camera device {index}")
    capture.set(cv2.CAP_PROP_FRAME_WIDTH, size[0])
    capture.set(cv2.CAP_PROP_FRAME_HEIGHT, size[1])
    capture.set(cv2.CAP_PROP_FPS, fps)
    return Camera(capture, clock, f"device {index}")


def open_replay(path: str, start: float = 0.0, times: Sequence[float] | None = None) -> Camera:
    """A recorded file; frame k is stamped ``start + k / fps`` (or ``times[k]``)."""
    capture = cv2.VideoCapture(str(path))
    if not capture.isOpened():
        capture.release()
        raise OSError(f"cannot open video {path}")
    fps = capture.get(cv2.CAP_PROP_FPS) or 10.0
    counter = iter(range(1 << 62))

    def clock() -> float:
        k = next(counter)
        if times is not None:
            return float(times[k])
        return start + k / fps

    return Camera(capture, clock, str(path))
