"""Record a session at the table: every raw stream of the real drivers, on one clock.

The drivers stay what they are; each has a hook for its raw input (the shoe's
bytes read, every reader poll, every console edge, every camera frame) and the
recorder writes those as the lines of a recording (docs/recording.md); a
camera's frames go into a video (``mp4v``) with their times, and its two
calibration files along. The clock is the table's: seconds since
:class:`Recorder` was made.
"""
from __future__ import annotations

import functools
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drivers.zones import PollRecord
from firmware_host.hil.recording import CameraTrack, Line, Recording
from firmware_host.observations import Observation, to_dict
from firmware_host.vision.feed import CameraFeed

if TYPE_CHECKING:
    import cv2
    import numpy as np


class Recorder:
    """Collects raw stream lines from the drivers' hooks (thread-safe)."""

    def __init__(self, table: str, profile: str, table_profile: str, decks: list[dict[str, Any]], in_play: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._start = clock()
        self._clock = clock
        self._lock = threading.Lock()
        self._recording = Recording(table, profile, table_profile, decks, in_play)
        self._films: dict[str, tuple[cv2.VideoWriter, CameraTrack, Path]] = {}  # name -> (writer, track, scratch)

    def now(self) -> float:
        """The recording's clock: give it to the drivers so observations and lines agree."""
        return round(self._clock() - self._start, 6)

    def _add(self, line: Line) -> None:
        with self._lock:
            self._recording.lines.append(line)

    def shoe(self, t: float, data: bytes) -> None:
        """The shoe driver's ``recorder`` hook: bytes read from the serial port."""
        if data:
            self._add({"t": t, "s": "shoe", "dir": "rx", "hex": data.hex()})

    def shoe_event(self, t: float, event: str, detail: str) -> None:
        self._add({"t": t, "s": "shoe", "event": event, "detail": detail})

    def poll(self, record: PollRecord) -> None:
        """The zone readers' ``record`` hook."""
        self._add({"s": "reader", **record.to_dict()})

    def edge(self, pin: int, level: int, t: float) -> None:
        """The console's ``on_edge`` hook."""
        self._add({"t": t, "s": "gpio", "pin": pin, "level": level})

    def hall(self, obs: Observation) -> None:
        """An observation from the hall (seating, level, TD resolution)."""
        self._add({"t": obs.t, "s": "hall", "obs": to_dict(obs)})

    def film(self, feed: CameraFeed) -> None:
        """Record a :class:`~firmware_host.vision.feed.CameraFeed`: each frame it reads into a video
        (scratch directory until the recording is saved), its time into the frame list, and its
        two calibrations as they are now. Hooks the feed's ``on_frame``."""
        import cv2
        scratch = Path(tempfile.mkdtemp(prefix=f"camera-{feed.name}-"))
        track = CameraTrack(feed.name, write=functools.partial(self._copy, scratch))
        feed.calib.save(scratch / track.table)
        feed.models.save(scratch / track.chips)
        writer = cv2.VideoWriter(str(scratch / track.video), cv2.VideoWriter.fourcc(*"mp4v"), 15,
                                 tuple(feed.calib.image_size))
        if not writer.isOpened():
            shutil.rmtree(scratch, ignore_errors=True)
            raise OSError(f"camera {feed.name}: OpenCV cannot write mp4v in {scratch}")
        self._films[feed.name] = (writer, track, scratch)

        def frame(t: float, image: np.ndarray) -> None:
            with self._lock:
                writer.write(image)
                track.times.append(t)
        feed.on_frame = frame

    @staticmethod
    def _copy(scratch: Path, path: Path, track: CameraTrack) -> None:
        for name in (track.video, track.table, track.chips):
            shutil.copyfile(scratch / name, path / name)

    def close(self) -> None:
        """Finish the videos (call before saving the recording) and, after saving, drop the scratch."""
        with self._lock:
            for writer, _, _ in self._films.values():
                writer.release()

    def discard(self) -> None:
        """Remove the cameras' scratch directories (once the recording is saved)."""
        for _, _, scratch in self._films.values():
            shutil.rmtree(scratch, ignore_errors=True)

    def recording(self) -> Recording:
        """What was recorded so far, in time order (with the cameras' videos: :meth:`close` first)."""
        with self._lock:
            lines = sorted(self._recording.lines, key=lambda line: line["t"])
            cameras = [track for _, track, _ in self._films.values()]
        rec = self._recording
        return Recording(rec.table, rec.profile, rec.table_profile, rec.decks, rec.in_play, lines,
                         cameras=cameras)
