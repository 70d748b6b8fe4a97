"""Recordings: every raw stream of a session at a table, on one clock (format v1, docs/recording.md).

A recording is a directory:

``recording.json``
    the manifest: format name and version, table id, house profile, the table
    profile (reader map, console pins) and the decks in play, as text.
``streams.jsonl`` (or ``streams.jsonl.gz``)
    one JSON object per line, in time order, ``t`` in seconds from the start,
    ``s`` the stream: ``shoe`` (``dir`` ``rx``/``tx``, ``hex`` bytes, or
    ``event`` ``unplugged``/``plugged``), ``reader`` (one poll: ``reader``,
    ``uids``, ``error``...), ``gpio`` (``pin``, ``level``), ``hall`` (``obs``:
    an observation from the hall: seating, level, button, TD resolutions,
    declarations keyed by the dealer), ``camera`` (``obs``: observations the
    camera made, for recordings without video).
``camera-<name>.mp4``, ``camera-<name>.jsonl``, ``camera-<name>-table.json``, ``camera-<name>-chips.json``
    optional, one set per camera listed in the manifest's ``cameras``: the
    video, one line per frame ``{"frame": n, "t": seconds}`` on the
    recording's clock, and the camera's table and chip calibrations.
"""
from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = "pokertable.recording"
VERSION = 1
STREAMS = ("shoe", "reader", "gpio", "hall", "camera")
CAMERA_FILES = ("video", "frames", "table", "chips")     # the files of one camera, keys of a ``cameras`` entry

Line = dict[str, Any]
"""One line of ``streams.jsonl``: ``t``, ``s`` and the stream's fields."""


class RecordingError(ValueError):
    """A recording that cannot be read: the message names the file, line and reason."""


@dataclass
class CameraTrack:
    """One camera of a recording: its files (names in the recording's directory) and frame times.

    ``write``, when set, makes the video and calibration files into a directory
    (the simulator renders them only when the recording is saved).
    """

    name: str
    times: list[float] = field(default_factory=list)
    video: str = ""
    frames: str = ""
    table: str = ""
    chips: str = ""
    write: Callable[[Path, CameraTrack], None] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        defaults = {"video": f"camera-{self.name}.mp4", "frames": f"camera-{self.name}.jsonl",
                    "table": f"camera-{self.name}-table.json", "chips": f"camera-{self.name}-chips.json"}
        for key, default in defaults.items():
            if not getattr(self, key):
                setattr(self, key, default)

    def entry(self) -> dict[str, str]:
        """The track's entry in the manifest's ``cameras``."""
        return {"name": self.name, **{key: getattr(self, key) for key in CAMERA_FILES}}

    def frames_text(self) -> str:
        """The frame-times file: one line per frame."""
        return "".join(json.dumps({"frame": n, "t": t}) + "\n" for n, t in enumerate(self.times))


@dataclass
class Recording:
    """A recording in memory: the manifest and the time-ordered stream lines."""

    table: str
    profile: str
    table_profile: str
    decks: list[dict[str, Any]]
    in_play: str
    lines: list[Line] = field(default_factory=list)
    notes: str = ""
    chip_unit: int | None = None      # smallest chip in play, when not the house profile's
    cameras: list[CameraTrack] = field(default_factory=list)
    directory: Path | None = field(default=None, compare=False)   # where the camera files are (load, save)

    @property
    def duration(self) -> float:
        return self.lines[-1]["t"] if self.lines else 0.0

    def manifest(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "table": self.table, "profile": self.profile,
                "table_profile": self.table_profile, "decks": self.decks, "in_play": self.in_play,
                "streams": sorted({line["s"] for line in self.lines}), "notes": self.notes,
                "chip_unit": self.chip_unit} | ({"cameras": [c.entry() for c in self.cameras]} if self.cameras else {})

    def save(self, directory: str | Path, *, compress: bool = True) -> Path:
        """Write the recording into *directory* (created); the lines are sorted by time, stably."""
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        (path / "recording.json").write_text(json.dumps(self.manifest(), indent=1, ensure_ascii=False) + "\n")
        lines = sorted(self.lines, key=lambda line: line["t"])
        text = "".join(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n" for line in lines)
        for stale in ("streams.jsonl", "streams.jsonl.gz"):
            (path / stale).unlink(missing_ok=True)
        if compress:
            with gzip.GzipFile(path / "streams.jsonl.gz", "wb", mtime=0) as fp:   # mtime 0: same bytes each time
                fp.write(text.encode())
        else:
            (path / "streams.jsonl").write_text(text)
        for track in self.cameras:
            self._save_camera(path, track)
        self.directory = path
        return path

    def _save_camera(self, path: Path, track: CameraTrack) -> None:
        """A camera's frame times, and its video and calibrations: made by ``track.write`` or copied."""
        (path / track.frames).write_text(track.frames_text())
        if track.write is not None:
            track.write(path, track)
        elif self.directory is not None and self.directory.resolve() != path.resolve():
            for key in ("video", "table", "chips"):
                shutil.copyfile(self.directory / getattr(track, key), path / getattr(track, key))
        elif self.directory is None:
            raise RecordingError(f"camera {track.name}: no video to save (no directory, no writer)")


def load(directory: str | Path) -> Recording:
    """Read and check a recording directory."""
    path = Path(directory)
    try:
        manifest = json.loads((path / "recording.json").read_text())
    except (OSError, ValueError) as exc:
        raise RecordingError(f"{path / 'recording.json'}: {exc}") from None
    if manifest.get("format") != FORMAT:
        raise RecordingError(f"{path / 'recording.json'}: format: not a {FORMAT}")
    if manifest.get("version") != VERSION:
        raise RecordingError(f"{path / 'recording.json'}: version: {manifest.get('version')!r}, "
                             f"this controller reads version {VERSION}")
    for key in ("table", "profile", "table_profile", "decks", "in_play"):
        if key not in manifest:
            raise RecordingError(f"{path / 'recording.json'}: {key}: missing")
    recording = Recording(manifest["table"], manifest["profile"], manifest["table_profile"], manifest["decks"],
                          manifest["in_play"], notes=manifest.get("notes", ""), chip_unit=manifest.get("chip_unit"))
    recording.lines = list(_lines(path))
    cameras = manifest.get("cameras", [])
    if not isinstance(cameras, list):
        raise RecordingError(f"{path / 'recording.json'}: cameras: not a list")
    recording.cameras = [_camera(path, n, entry) for n, entry in enumerate(cameras)]
    recording.directory = path
    return recording


def _camera(path: Path, number: int, entry: object) -> CameraTrack:
    """The manifest's ``cameras[number]``: its files must be in the recording's directory."""
    where = f"{path / 'recording.json'}: cameras[{number}]"
    if not isinstance(entry, dict):
        raise RecordingError(f"{where}: not an object")
    for key in ("name",) + CAMERA_FILES:
        value = entry.get(key)
        if not isinstance(value, str) or not value:
            raise RecordingError(f"{where}.{key}: missing")
        if key != "name" and (Path(value).name != value or not (path / value).is_file()):
            raise RecordingError(f"{where}.{key}: no file {value!r} in {path}")
    return CameraTrack(entry["name"], _frame_times(path / entry["frames"]),
                       **{key: entry[key] for key in CAMERA_FILES})


def _json_lines(name: Path, text: str) -> Iterator[tuple[int, object]]:
    """(line number, value) of each non-blank line of *text*; RecordingError naming *name* and the line."""
    for number, raw in enumerate(text.splitlines(), 1):
        if raw.strip():
            try:
                yield number, json.loads(raw)
            except ValueError as exc:
                raise RecordingError(f"{name}:{number}: not JSON: {exc}") from None


def _frame_times(name: Path) -> list[float]:
    """A camera's frame times: line n is ``{"frame": n, "t": seconds}``, times never decreasing."""
    times: list[float] = []
    for number, line in _json_lines(name, name.read_text()):
        if not isinstance(line, dict) or line.get("frame") != len(times) or not isinstance(line.get("t"), (int, float)):
            raise RecordingError(f"{name}:{number}: expected {{\"frame\": {len(times)}, \"t\": seconds}}")
        if times and line["t"] < times[-1]:
            raise RecordingError(f"{name}:{number}: time goes back ({line['t']} after {times[-1]})")
        times.append(float(line["t"]))
    return times


def _lines(path: Path) -> Iterator[Line]:
    if (path / "streams.jsonl.gz").exists():
        name, text = path / "streams.jsonl.gz", gzip.open(path / "streams.jsonl.gz", "rt").read()
    elif (path / "streams.jsonl").exists():
        name, text = path / "streams.jsonl", (path / "streams.jsonl").read_text()
    else:
        raise RecordingError(f"{path}: no streams.jsonl or streams.jsonl.gz")
    last = 0.0
    for number, line in _json_lines(name, text):
        if not isinstance(line, dict) or line.get("s") not in STREAMS or not isinstance(line.get("t"), (int, float)):
            raise RecordingError(f"{name}:{number}: a line needs a time 't' and a stream 's' of {STREAMS}")
        if line["t"] < last:
            raise RecordingError(f"{name}:{number}: time goes back ({line['t']} after {last})")
        last = line["t"]
        yield line


def merge(*streams: Iterable[Line]) -> list[Line]:
    """Lines of several streams in one time order (stable: equal times keep stream order)."""
    return sorted((line for stream in streams for line in stream), key=lambda line: line["t"])
