"""Real parts for the hall's tests: its config made from the shipped example, payloads as a table makes them."""
from __future__ import annotations

import re
from pathlib import Path

from firmware_host.mqtt import contract as mc
from hall.config import HallConfig, load_hall_config

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "hall" / "hall.example.toml"


def hall_config(directory: Path, port: int, account: str = "archive-1", store: str | None = None,
                group: str = "", gap_grace: float = 5.0) -> HallConfig:
    """The shipped ``hall/hall.example.toml`` with only its broker address, TLS files, password file and store
    replaced (loopback, no TLS, the example account's password), as an installer edits it."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "mqtt-password").write_text(f"example-{account}\n")
    text = EXAMPLE.read_text()
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


def secure_payload(event: dict, table: str, boot: str, seq: int, session: str = "s1", now: float = 1.0) -> dict:
    """The secure-event payload a table publishes for engine *event*."""
    return mc.envelope("secure-event", table, boot, seq, mc.event_id(table, session, event["seq"]), now, event=event)
