"""Commands from the hall: authenticated, validated strictly, mapped to observations.

A command is published on ``.../cmd/<name>`` as a JSON object::

    {"schema": "pokerhall.cmd", "version": 1, "table": "t1", "txn": "b7c1-0042",
     "ts": 1763900000, "args": {...}, "hmac": "<hex>"}

``hmac`` is HMAC-SHA256, with the table's key, of the canonical JSON (sorted
keys, no spaces, ASCII) of the object without ``hmac``. ``ts`` (integer Unix
seconds) must be within ``window`` seconds of the table's clock, and a ``txn``
is accepted once only (kept in the journal, so also across restarts). Anything
wrong gets an error reply and changes nothing. Pure except the txn store.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

from firmware_host import observations as obs_mod
from firmware_host.mqtt.contract import COMMANDS, ID_RE, TXN_RE, verify

ARGS: dict[str, dict[str, tuple[type, bool]]] = {
    "set-level": {"small_blind": (int, True), "big_blind": (int, True), "ante": (int, False),
                  "big_blind_ante": (int, False), "number": (int, False)},
    "move-button": {"seat": (int, True)},
    "resolve": {"decision": (str, True), "card": (str, False)},
    "pause": {"paused": (bool, True), "reason": (str, False)},
    "void-hand": {"hand": (int, True), "reason": (str, True)},
}
"""Each command's arguments: name -> (type, required)."""
assert set(ARGS) == set(COMMANDS)

ENVELOPE = {"schema", "version", "table", "txn", "ts", "args", "hmac"}


class CommandError(ValueError):
    """A refused command: ``code`` for machines, the message for people, ``field`` if one is to blame."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code, self.field = code, field


@dataclass(frozen=True)
class Command:
    name: str
    txn: str
    ts: int
    args: dict


class CommandGate:
    """Checks commands for one table: signature, freshness, unused txn, strict arguments."""

    def __init__(self, table: str, key: bytes, *, window: float, use_txn: Callable[..., bool]) -> None:
        if len(key) < 16:
            raise ValueError("the command key must be at least 16 bytes")
        self.table, self._key, self.window, self._use_txn = table, key, window, use_txn

    def parse(self, name: str, raw: bytes, now: float) -> Command:
        """The command in *raw* for ``cmd/<name>``, or :class:`CommandError`."""
        if name not in ARGS:
            raise CommandError("unknown-command", f"unknown command {name!r}; known: {', '.join(ARGS)}")
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise CommandError("bad-json", f"payload is not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise CommandError("bad-json", "payload must be a JSON object")
        for key in body:
            if key not in ENVELOPE:
                raise CommandError("bad-field", f"unknown field {key!r}", key)
        for key in sorted(ENVELOPE):
            if key not in body:
                raise CommandError("bad-field", f"missing field {key!r}", key)
        if not verify(body, self._key):
            raise CommandError("bad-signature", "HMAC-SHA256 does not match the table key", "hmac")
        if body["schema"] != "pokerhall.cmd" or body["version"] != 1:
            raise CommandError("bad-field", "schema must be 'pokerhall.cmd' version 1", "schema")
        if body["table"] != self.table:
            raise CommandError("bad-field", f"command for table {body['table']!r}, this is {self.table!r}", "table")
        txn = body["txn"]
        if not isinstance(txn, str) or not TXN_RE.match(txn):
            raise CommandError("bad-field", "txn must be 1-64 characters of [A-Za-z0-9-]", "txn")
        ts = body["ts"]
        if not _is_int(ts):
            raise CommandError("bad-field", "ts must be an integer (Unix seconds)", "ts")
        if abs(now - ts) > self.window:
            raise CommandError("stale-transaction", f"ts is {now - ts:+.0f} s from the table clock "
                               f"(window ±{self.window:g} s)", "ts")
        args = _check_args(name, body["args"])
        if not self._use_txn(txn, ts, forget_before=now - 2 * self.window):
            raise CommandError("stale-transaction", f"txn {txn!r} was already used", "txn")
        return Command(name, txn, ts, args)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_args(name: str, args) -> dict:
    if not isinstance(args, dict):
        raise CommandError("bad-field", "args must be an object", "args")
    spec = ARGS[name]
    for key, value in args.items():
        if key not in spec:
            raise CommandError("bad-field", f"{name} has no argument {key!r}; it takes {', '.join(spec)}",
                               f"args.{key}")
        kind = spec[key][0]
        ok = _is_int(value) if kind is int else isinstance(value, kind)
        if not ok and not (value is None and not spec[key][1]):
            raise CommandError("bad-field", f"args.{key} must be {kind.__name__}", f"args.{key}")
    for key, (_, required) in spec.items():
        if required and args.get(key) is None:
            raise CommandError("bad-field", f"{name} needs args.{key}", f"args.{key}")
    return dict(args)


def to_observation(command: Command, t: float, seats: int):
    """The observation *command* becomes, or None when none exists yet ("accepted, not yet applied").

    Raises :class:`CommandError` for arguments the observation refuses.
    """
    a = command.args
    try:
        if command.name == "set-level":
            return obs_mod.SetLevel(t, a["small_blind"], a["big_blind"], a.get("ante") or 0,
                                    a.get("big_blind_ante") or 0, a.get("number"))
        if command.name == "move-button":
            if not 1 <= a["seat"] <= seats:
                raise CommandError("bad-field", f"seat {a['seat']} is not in 1..{seats}", "args.seat")
            return obs_mod.MoveButton(t, a["seat"])
        if command.name == "resolve":
            resolution = obs_mod.OBSERVATION_TYPES.get("Resolution")
            if resolution is None:
                return None
            if not ID_RE.match(a["decision"]):
                raise CommandError("bad-field", "args.decision must be a kebab-case option", "args.decision")
            return resolution(t, "td", a["decision"], a.get("card"))
        if command.name == "pause":
            return obs_mod.Pause(t, a["paused"], a.get("reason") or "")
        if command.name == "void-hand":
            return obs_mod.VoidHand(t, a["hand"], a["reason"])
    except obs_mod.ObservationError as exc:
        raise CommandError("bad-field", str(exc), "args") from None
    return None
