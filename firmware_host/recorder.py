"""Record a session at the table: every raw stream of the real drivers, on one clock.

The drivers stay what they are; each has a hook for its raw input (the shoe's
bytes read, every reader poll, every console edge) and the recorder writes
those as the lines of a recording (docs/recording.md). The clock is the
table's: seconds since :class:`Recorder` was made.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

from drivers.zones import PollRecord

from .observations import Observation, to_dict
from .recording import Recording


class Recorder:
    """Collects raw stream lines from the drivers' hooks (thread-safe)."""

    def __init__(self, table: str, profile: str, table_profile: str, decks: list[dict], in_play: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._start = clock()
        self._clock = clock
        self._lock = threading.Lock()
        self._recording = Recording(table, profile, table_profile, decks, in_play)

    def now(self) -> float:
        """The recording's clock: give it to the drivers so observations and lines agree."""
        return round(self._clock() - self._start, 6)

    def _add(self, line: dict) -> None:
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

    def recording(self) -> Recording:
        """What was recorded so far, in time order."""
        with self._lock:
            lines = sorted(self._recording.lines, key=lambda line: line["t"])
        rec = self._recording
        return Recording(rec.table, rec.profile, rec.table_profile, rec.decks, rec.in_play, lines)


def record_session(recorder: Recorder, *, shoe_port: str, registry, readers, chips, console_pins,
                   stop: Callable[[], bool], pin_factory=None) -> list[Observation]:
    """Run the table's real drivers until ``stop()``, recording their raw streams.

    *readers* is the table's :class:`~calibration.readers.ReaderTable`, *chips* its MFRC522s
    (``drivers.zones.open_real``); returns the observations the drivers made live.
    """
    from .devices import Devices

    with Devices(shoe_port=shoe_port, registry=registry, readers=readers, chips=chips, console_pins=console_pins,
                 recorder=recorder, pin_factory=pin_factory) as devices:
        seen = list(devices.observations(stop))
    return seen + devices.drain()
