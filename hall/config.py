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
from firmware_host.service.config import _Files, parse_broker

__all__ = ["ArchiveConfig", "DashboardConfig", "HallConfig", "load_hall_config", "parse_hall_config"]


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
class DashboardConfig:
    """The TD's dashboard (docs/dashboard.md), served by ``tablectl hall run`` when the section is there."""

    broker: BrokerConfig
    """The ``[broker]`` with the dashboard's own account (``td``: reads everything, sends commands)."""
    users_file: Path
    keys: dict[str, bytes]
    """Each table's command key (the table's ``[commands] key_file``): they stay on the hall server."""
    listen: str = "127.0.0.1"
    port: int = 8080
    hole_card_delay: float = 300.0
    silent_after: float = 30.0
    session_ttl: float = 12 * 3600.0
    reply_timeout: float = 5.0
    tls_cert: str | None = None
    tls_key: str | None = None


@dataclass(frozen=True)
class HallConfig:
    broker: BrokerConfig
    archive: ArchiveConfig
    dashboard: DashboardConfig | None = None


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
    dashboard = _dashboard(top.section("dashboard"), data["broker"], base) if top.has("dashboard") else None
    top.finish()
    return HallConfig(broker, archive, dashboard)


def _dashboard(d: Section, broker: dict[str, Any], base: Path) -> DashboardConfig:
    """``[dashboard]``: the web server, its accounts, its broker account, the tables' command keys."""
    files = _Files(base)
    account = dict(broker, username=d.get_str("username", "td", nonempty=True))
    for key in ("password", "password_file", "client_id"):
        account.pop(key, None)
    if d.has("password_file"):
        account["password_file"] = files.existing(d, "password_file")
    mqtt = parse_broker(Section(account, d.file, "broker"), base, account["username"])
    keys = {}
    k = d.section("keys")
    for table in list(k.data):
        if not ID_RE.match(table):
            raise k.error(table, "a table id is 1-64 characters of [a-z0-9-]")
        key = files.secret(k, table) or ""
        if len(key) < 16:
            raise k.error(table, "the key must be at least 16 characters (the table's [commands] key_file)")
        keys[table] = key.encode()
    cert, key_file = files.existing(d, "tls_cert"), files.existing(d, "tls_key")
    if (cert is None) != (key_file is None):
        raise d.error("tls_key" if cert else "tls_cert", "dashboard.tls_cert and dashboard.tls_key go together")
    users = files.existing(d, "users_file")
    if users is None:
        raise d.error("users_file", "missing required key (the accounts: tablectl hall user add)")
    return DashboardConfig(
        broker=mqtt, users_file=Path(users), keys=keys,
        listen=d.get_str("listen", "127.0.0.1", nonempty=True), port=d.get_int("port", 8080, minval=0, maxval=65535),
        hole_card_delay=d.get_float("hole_card_delay", 300.0, minval=0, maxval=86400),
        silent_after=d.get_float("silent_after", 30.0, above=0, maxval=3600),
        session_ttl=d.get_float("session_ttl", 12 * 3600.0, minval=60, maxval=7 * 86400),
        reply_timeout=d.get_float("reply_timeout", 5.0, above=0, maxval=60), tls_cert=cert, tls_key=key_file)
