"""The controller's config file (``hardware/mosquitto/table.example.toml`` is the example a user copies).

Read through the one loader (:mod:`firmware_host.configfile`): every key is typed and bounded
where it is read, unknown keys are refused, and a :class:`ConfigError` names the file and key.
Relative paths are relative to the config file's folder.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from firmware_host.configfile import ConfigError, Section, read_toml
from firmware_host.mqtt.contract import check_id
from firmware_host.mqtt.publisher import BrokerConfig

__all__ = ["Config", "ConfigError", "load_config", "local_config", "parse_broker", "parse_config"]


@dataclass(frozen=True)
class Config:
    table: str
    profile: str
    broker: BrokerConfig
    journal_path: Path
    outbox_path: Path
    outbox_max_bytes: int = 50_000_000
    outbox_alarm: float = 0.8
    broadcast_delay: float = 0.0
    command_key: bytes = b""
    command_window: float = 30.0
    health_interval: float = 10.0
    hardware: dict[str, Any] = dataclasses.field(default_factory=dict)
    secret_files: dict[str, Path] = dataclasses.field(default_factory=dict)
    """Key -> file, every file of the config holding a secret (``tablectl doctor`` checks their modes)."""


def load_config(path: str | Path) -> Config:
    """Read and validate a TOML config; :class:`ConfigError` names the file and the bad key."""
    path = Path(path)
    return parse_config(read_toml(path, str(path)), base=path.parent, file=str(path))


def parse_config(data: dict[str, Any], base: Path = Path("."), file: str = "<config>") -> Config:
    """Validate a config already parsed from TOML (relative paths are relative to *base*)."""
    top = Section(data, file)
    files = _Files(base)
    table = top.section("table", required=False)
    table_id = table.get_str("id")
    try:
        check_id(table_id, "table.id")
    except ValueError as exc:
        raise table.error("id", str(exc)) from None
    profile, hardware = table.get_str("profile", nonempty=True), table.get("hardware", {})
    if not isinstance(hardware, dict):
        raise table.error("hardware", "expected a table")
    broker = parse_broker(top.section("broker", required=False), files.base, f"table-{table_id}")
    outbox, publish = top.section("outbox", required=False), top.section("publish", required=False)
    commands = top.section("commands", required=False)
    journal = top.section("journal", required=False)
    config = Config(
        table=table_id, profile=profile, broker=broker,
        journal_path=files.where(journal.get_str("path", nonempty=True)),
        outbox_path=files.where(outbox.get_str("path", nonempty=True)),
        outbox_max_bytes=outbox.get_int("max_bytes", minval=10_000),
        outbox_alarm=outbox.get_float("alarm_fraction", 0.8, above=0, below=1),
        broadcast_delay=publish.get_float("broadcast_delay", 0.0, minval=0, maxval=3600),
        health_interval=publish.get_float("health_interval", 10.0, minval=0.1, maxval=3600),
        command_key=_command_key(commands, files),
        command_window=commands.get_float("window", 30.0, minval=1, maxval=600),
        hardware=hardware, secret_files=_secret_files(top, files))
    top.finish()
    return config


def local_config(table: str, profile: str, host: str, port: int, base: str | Path, *,
                 max_bytes: int = 200_000_000) -> Config:
    """A config for a throw-away run (the demo, a replay to a broker): journal and outbox in *base*."""
    return parse_config({"table": {"id": table, "profile": profile}, "broker": {"host": host, "port": port},
                         "outbox": {"path": "outbox.sqlite", "max_bytes": max_bytes},
                         "journal": {"path": "journal.sqlite"},
                         "commands": {"key": "local-run-key-0123456789abcdef"}}, base=Path(base))


@dataclass(frozen=True)
class _Files:
    """Paths in the config, relative to its folder."""

    base: Path

    def where(self, value: str) -> Path:
        return Path(value) if Path(value).is_absolute() else self.base / value

    def existing(self, section: Section, name: str) -> str | None:
        """The path given as *name*, which must exist (None if not given)."""
        value = section.get_str(name, None)
        if value is None:
            return None
        if not self.where(value).exists():
            raise section.error(name, f"{value} does not exist")
        return str(self.where(value))

    def secret(self, section: Section, name: str) -> str | None:
        """The stripped contents of the file given as *name* (None if not given)."""
        value = section.get_str(name, None)
        if value is None:
            return None
        try:
            return self.where(value).read_text().strip()
        except OSError as exc:
            raise section.error(name, f"cannot read {value}: {exc.strerror or exc}") from None


def _secret_files(top: Section, files: _Files) -> dict[str, Path]:
    out = {}
    for section, key in (("broker", "password_file"), ("broker", "key_file"), ("commands", "key_file")):
        value = top.data.get(section, {}).get(key)
        if isinstance(value, str):
            out[f"{section}.{key}"] = files.where(value)
    return out


def parse_broker(b: Section, base: Path, client_id: str) -> BrokerConfig:
    """The ``[broker]`` section *b* (the tables' and the hall's): host, port, account, TLS; relative paths
    from *base*; *client_id* unless the section names one (the broker takes the account's name anyway)."""
    files = _Files(base)
    if b.has("password") and b.has("password_file"):
        raise b.error("password_file", "give broker.password or broker.password_file, not both")
    password = files.secret(b, "password_file") if b.has("password_file") else b.get_str("password", None)
    username = b.get_str("username", None)
    if password is not None and username is None:
        raise b.error("password", "needs broker.username")
    cert, key = files.existing(b, "cert_file"), files.existing(b, "key_file")
    if (cert is None) != (key is None):
        raise b.error("key_file" if cert else "cert_file", "broker.cert_file and broker.key_file go together")
    return BrokerConfig(
        host=b.get_str("host", nonempty=True), port=b.get_int("port", minval=1, maxval=65535),
        keepalive=b.get_int("keepalive", 10, minval=1, maxval=3600),
        client_id=b.get_str("client_id", client_id, nonempty=True),
        username=username, password=password, tls=b.get_bool("tls", False), ca_file=files.existing(b, "ca_file"),
        cert_file=cert, key_file=key, tls_insecure=b.get_bool("tls_insecure", False),
        reconnect_min=b.get_float("reconnect_min", 0.2, above=0, maxval=60),
        reconnect_max=b.get_float("reconnect_max", 5.0, above=0, maxval=600))


def _command_key(c: Section, files: _Files) -> bytes:
    if c.has("key") == c.has("key_file"):
        raise c.error("key", "give commands.key or commands.key_file: exactly one")
    key = (c.get_str("key") if c.has("key") else files.secret(c, "key_file")) or ""
    if len(key) < 16:
        raise c.error("key_file" if c.has("key_file") else "key", "must be at least 16 characters")
    return key.encode()
