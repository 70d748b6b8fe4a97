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
    declarations keyed by the dealer), ``camera`` (``obs``: the camera's chip
    counts until video recordings land).
"""
from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

FORMAT = "pokertable.recording"
VERSION = 1
STREAMS = ("shoe", "reader", "gpio", "hall", "camera")


class RecordingError(ValueError):
    """A recording that cannot be read: the message names the file, line and reason."""


@dataclass
class Recording:
    """A recording in memory: the manifest and the time-ordered stream lines."""

    table: str
    profile: str
    table_profile: str
    decks: list[dict]
    in_play: str
    lines: list[dict] = field(default_factory=list)
    notes: str = ""
    chip_unit: int | None = None      # smallest chip in play, when not the house profile's


    @property
    def duration(self) -> float:
        return self.lines[-1]["t"] if self.lines else 0.0

    def manifest(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "table": self.table, "profile": self.profile,
                "table_profile": self.table_profile, "decks": self.decks, "in_play": self.in_play,
                "streams": sorted({line["s"] for line in self.lines}), "notes": self.notes,
                "chip_unit": self.chip_unit}

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
        return path


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
    return recording


def _lines(path: Path) -> Iterator[dict]:
    if (path / "streams.jsonl.gz").exists():
        name, text = path / "streams.jsonl.gz", gzip.open(path / "streams.jsonl.gz", "rt").read()
    elif (path / "streams.jsonl").exists():
        name, text = path / "streams.jsonl", (path / "streams.jsonl").read_text()
    else:
        raise RecordingError(f"{path}: no streams.jsonl or streams.jsonl.gz")
    last = 0.0
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError as exc:
            raise RecordingError(f"{name}:{number}: not JSON: {exc}") from None
        if not isinstance(line, dict) or line.get("s") not in STREAMS or not isinstance(line.get("t"), (int, float)):
            raise RecordingError(f"{name}:{number}: a line needs a time 't' and a stream 's' of {STREAMS}")
        if line["t"] < last:
            raise RecordingError(f"{name}:{number}: time goes back ({line['t']} after {last})")
        last = line["t"]
        yield line


def merge(*streams: Iterable[dict]) -> list[dict]:
    """Lines of several streams in one time order (stable: equal times keep stream order)."""
    return sorted((line for stream in streams for line in stream), key=lambda line: line["t"])
