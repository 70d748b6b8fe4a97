"""Real parts for the hall's tests: its config made from the shipped example, payloads as a table makes them."""
from __future__ import annotations

import re
from pathlib import Path

from firmware_host.mqtt import contract as mc
from hall.config import HallConfig, load_hall_config

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "hall" / "hall.example.toml"


def hall_config(directory: Path, port: int, account: str = "archive-1", store: str | None = None,
                group: str = "", gap_grace: float = 5.0, dashboard: dict[str, str] | None = None) -> HallConfig:
    """The shipped ``hall/hall.example.toml`` with only its broker address, TLS files, password file and store
    replaced (loopback, no TLS, the example account's password), as an installer edits it.

    Without *dashboard* (table id -> command key) its ``[dashboard]`` section is deleted; with it, the
    dashboard listens on loopback (a free port, no TLS) with the ``td`` account, the users file
    ``users.toml`` of *directory* and a key file per table."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "mqtt-password").write_text(f"example-{account}\n")
    text = EXAMPLE.read_text()
    head, sep, tail = text.partition("\n# The TD's dashboard")
    text = head + "\n" if dashboard is None else head + sep + _dashboard(directory, tail, dashboard)
    for key, value in (("host", '"127.0.0.1"'), ("port", str(port)), ("username", f'"{account}"'),
                       ("password_file", '"mqtt-password"'), ("tls", "false"),
                       ("store", f'"{store or "archive.sqlite"}"'), ("gap_grace", str(gap_grace))):
        text, n = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, count=1, flags=re.M)
        assert n == 1, key
    text = re.sub(r"^ca_file = .*\n", "", text, flags=re.M)
    if group:
        text = text.replace('# share_group = "archive"', f'share_group = "{group}"')
    path = directory / "hall.toml"
    path.write_text(text)
    return load_hall_config(path)


def _dashboard(directory: Path, text: str, keys: dict[str, str]) -> str:
    """The example's ``[dashboard]`` section as an installer edits it for a loopback test."""
    (directory / "td-mqtt-password").write_text("example-td\n")
    (directory / "users.toml").touch()
    for key, value in (("listen", '"127.0.0.1"'), ("port", "0"), ("password_file", '"td-mqtt-password"'),
                       ("users_file", '"users.toml"')):
        text, n = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, count=1, flags=re.M)
        assert n == 1, key
    text = re.sub(r"^tls_(cert|key) = .*\n", "", text, flags=re.M)
    head, _, _ = text.partition("[dashboard.keys]")
    lines = []
    for table, key in keys.items():
        (directory / f"{table}.key").write_text(key + "\n")
        lines.append(f'{table} = "{table}.key"')
    return head + "[dashboard.keys]\n" + "\n".join(lines) + "\n"


def secure_payload(event: dict, table: str, boot: str, seq: int, session: str = "s1", now: float = 1.0) -> dict:
    """The secure-event payload a table publishes for engine *event*."""
    return mc.envelope("secure-event", table, boot, seq, mc.event_id(table, session, event["seq"]), now, event=event)
