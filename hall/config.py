"""The hall server's config file (``hall/hall.example.toml`` is the example a user copies).

Read through the one loader (:mod:`firmware_host.configfile`): every key typed and bounded where it is
read, unknown keys refused, a :class:`~firmware_host.configfile.ConfigError` naming the file and key.
Relative paths are relative to the config file's folder.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from firmware_host.configfile import Section, read_toml
from firmware_host.mqtt.contract import ID_RE
from firmware_host.mqtt.publisher import BrokerConfig
from firmware_host.service.config import parse_broker

__all__ = ["ArchiveConfig", "HallConfig", "load_hall_config", "parse_hall_config"]


@dataclass(frozen=True)
class ArchiveConfig:
    """The archive worker: where it stores, how it subscribes, when a gap is an alarm."""

    store: str = "archive.sqlite"
    """``sqlite:///PATH`` (or a path) or ``postgresql://...``."""
    share_group: str = ""
    """Workers with the same group share the tables' events (MQTT 5 ``$share/<group>/...``); "" alone."""
    session_expiry: int = 7 * 24 * 3600
    """Seconds the broker keeps this worker's session (and queues for it) while it is away."""
    validate: bool = True
    """Check every payload against the contract's JSON Schemas (a failing one is kept apart, not stored)."""
    gap_grace: float = 5.0
    """Seconds a hole in a stream's seq may last (a redelivery on its way) before it is an alarm."""
    batch: int = 500
    """The most messages stored in one transaction."""


@dataclass(frozen=True)
class HallConfig:
    broker: BrokerConfig
    archive: ArchiveConfig


def load_hall_config(path: str | Path) -> HallConfig:
    """Read and validate the hall's TOML config; ConfigError names the file and the bad key."""
    path = Path(path)
    return parse_hall_config(read_toml(path, str(path)), base=path.parent, file=str(path))


def parse_hall_config(data: dict[str, Any], base: Path = Path("."), file: str = "<hall config>") -> HallConfig:
    """Validate a hall config already parsed from TOML (relative paths from *base*)."""
    top = Section(data, file)
    broker = parse_broker(top.section("broker"), base, "archive")
    a = top.section("archive", required=False)
    store = a.get_str("store", "archive.sqlite", nonempty=True)
    if not store.startswith(("postgresql://", "postgres://")):
        path = Path(store.removeprefix("sqlite://"))
        store = str(path if path.is_absolute() else base / path)
    group = a.get_str("share_group", "")
    if group and not ID_RE.match(group):
        raise a.error("share_group", f"{group!r} must be 1-64 characters of [a-z0-9-]")
    archive = ArchiveConfig(store=store, share_group=group,
                            session_expiry=a.get_int("session_expiry", 7 * 24 * 3600, minval=60, maxval=2**32 - 1),
                            validate=a.get_bool("validate", True),
                            gap_grace=a.get_float("gap_grace", 5.0, minval=0, maxval=3600),
                            batch=a.get_int("batch", 500, minval=1, maxval=100_000))
    top.finish()
    return HallConfig(broker, archive)
