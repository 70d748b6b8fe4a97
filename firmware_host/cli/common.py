"""What tablectl's command groups share: the parsers they add to, ``--speed``, ``--profile``, the
Pluribus hands and the checkout's test corpus (developer defaults), the cameras of ``--camera``."""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from firmware_host.rules.profile import Profile, resolve_profile

if TYPE_CHECKING:
    from tqdm import tqdm

    from firmware_host.vision.feed import CameraFeed

CHECKOUT = Path(__file__).resolve().parents[2]
"""The source checkout, when tablectl runs from one: the developer tools (benches, ``phh verify``)
default to its test corpus. The product's own files are package data (:mod:`firmware_host.data`)."""


class Parsers(NamedTuple):
    """Where a command group adds its sub-commands: ``tablectl NAME``, ``bench NAME``, ``calibrate NAME``."""

    commands: argparse._SubParsersAction[argparse.ArgumentParser]
    bench: argparse._SubParsersAction[argparse.ArgumentParser]
    calibrate: argparse._SubParsersAction[argparse.ArgumentParser]


SPEED_HELP = "1 = real time, N times real time, or 'max' (as fast as possible)"


def speed(text: str) -> float | None:
    """``--speed`` (an argparse type): 'max' (None: as fast as possible) or a positive factor of real time.
    The one spelling of "as fast as possible" on every command is ``max``.

    >>> speed("max"), speed("2")
    (None, 2.0)
    """
    if text == "max":
        return None
    try:
        factor = float(text)
    except ValueError:
        factor = 0.0
    if not 0 < factor < float("inf"):
        raise argparse.ArgumentTypeError(f"must be 'max' (as fast as possible) or a positive number, not {text!r}")
    return factor


def progress(total: int, unit: str, force: bool = False) -> tqdm[Any]:
    """A progress bar on stderr (tqdm): shown on a terminal, or anywhere with *force*; silent otherwise."""
    from tqdm import tqdm
    return tqdm(total=total, unit=f" {unit}", file=sys.stderr, disable=False if force else None, leave=True)


def profile(name: str) -> Profile:
    """``--profile``: a built-in house-rules profile id (000..004) or a TOML file; ConfigError if neither."""
    return resolve_profile(name)


def existing(path: str | Path, option: str) -> Path:
    """*path* (given with *option*) if it is there; else exit with one line saying so."""
    if not Path(path).exists():
        raise FileNotFoundError(f"{option}: {path}: not found")
    return Path(path)


def corpus(given: str | None, default: str, option: str) -> Path:
    """A developer tool's data: *given* with *option*, else *default* in the source checkout's test
    corpus; exits with one line if it is not there (an installed tablectl has no test corpus)."""
    if given:
        return existing(given, option)
    path = CHECKOUT / default
    if not path.exists():
        raise FileNotFoundError(f"{option}: {path}: not found (the default is {default} of a source checkout; "
                         f"pass {option} PATH)")
    return path


def pluribus() -> str:
    """The Pluribus hands: ``../shared/phh/pluribus.phhs`` beside the checkout, else the gzipped copy
    in its test corpus; exits with one line if there are none."""
    for path in (CHECKOUT.parent / "shared/phh/pluribus.phhs", CHECKOUT / "tests/data/pluribus.phhs.gz"):
        if path.exists():
            return str(path)
    raise FileNotFoundError("no Pluribus hands found (../shared/phh/pluribus.phhs, or tests/data/pluribus.phhs.gz "
                     "of a source checkout); pass the PHH file")


def percentile(values: Sequence[float], percent: int) -> float:
    """The *percent* th percentile (1..99) of *values* (:func:`statistics.quantiles`, inclusive).

    >>> percentile([1.0, 2.0, 3.0, 4.0, 5.0], 50), percentile([7.0], 99)
    (3.0, 7.0)
    """
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[percent - 1]


def open_cameras(specs: list[str], directory: Path,
                 clock: Callable[[], float] = time.monotonic) -> list[CameraFeed]:
    """``--camera NAME=INDEX``: each camera opened with the calibration files of NAME in *directory*
    (frames stamped by *clock*); ValueError or OSError names the problem."""
    from drivers.camera import open_device
    from firmware_host.vision.feed import CameraFeed, load_camera_calibration
    feeds: list[CameraFeed] = []
    try:
        for spec in specs:
            name, sep, index = spec.partition("=")
            if not sep or not name or not index.isdigit():
                raise ValueError(f"--camera expects NAME=INDEX (a V4L2 device number), not {spec!r}")
            calib, models = load_camera_calibration(directory / f"camera-{name}-table.json",
                                                    directory / f"camera-{name}-chips.json")
            if calib.layout.camera != name:
                raise ValueError(f"{directory / f'camera-{name}-table.json'}: calibrates camera "
                                 f"{calib.layout.camera}, not {name}")
            camera = open_device(int(index), calib.image_size, clock=clock)
            feeds.append(CameraFeed(name, camera, calib, models))
    except Exception:
        for feed in feeds:
            feed.close()
        raise
    return feeds
