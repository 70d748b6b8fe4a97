"""Commands from the hall: authenticated, validated strictly, mapped to observations.

A command is published on ``.../cmd/<name>`` as a JSON object::

    {"schema": "pokerhall.cmd", "version": 1, "table": "t1", "txn": "b7c1-0042",
     "ts": 1763900000, "args": {...}, "hmac": "<hex>"}

``hmac`` is HMAC-SHA256, with the table's key, of the canonical JSON (sorted
keys, no spaces, ASCII) of the object without ``hmac``. ``ts`` (integer Unix
seconds) must be within ``window`` seconds of the table's clock, the arguments
within the house profile's :class:`Limits`, and a ``txn`` is accepted once only
(kept in the journal, so also across restarts): it is used up last, by a command
that passed every other check. Anything wrong gets an error reply and changes
nothing. Pure except the txn store.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from firmware_host import observations as obs_mod
from firmware_host.mqtt.contract import COMMANDS, ID_RE, TXN_RE, JsonObject, verify
from firmware_host.observations import Observation


class Arg(NamedTuple):
    """One argument of a command: its JSON type, and whether it must be given."""

    kind: type
    required: bool


ARGS: dict[str, dict[str, Arg]] = {
    "set-level": {"small_blind": Arg(int, True), "big_blind": Arg(int, True), "ante": Arg(int, False),
                  "big_blind_ante": Arg(int, False), "number": Arg(int, False)},
    "move-button": {"seat": Arg(int, True)},
    "resolve": {"decision": Arg(str, True), "card": Arg(str, False)},
    "pause": {"paused": Arg(bool, True), "reason": Arg(str, False)},
    "void-hand": {"hand": Arg(int, True), "reason": Arg(str, True)},
}
"""Each command's arguments: name -> :class:`Arg`."""
assert set(ARGS) == set(COMMANDS)

ENVELOPE = {"schema", "version", "table", "txn", "ts", "args", "hmac"}


MAX_PAYLOAD = 65_536
"""Bytes: a command over this is refused unread (the largest real one is under 1 KB)."""
MAX_ECHO = 120
"""Characters of the sender's text (a field name, a value) an error message repeats at most."""


class CommandError(ValueError):
    """A refused command: ``code`` for machines, the message for people, ``field`` if one is to blame.

    Message and field are bounded (:func:`bounded`): a reply or a log line never grows with the input.
    """

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(bounded(message, 4 * MAX_ECHO))
        self.code, self.field = code, None if field is None else bounded(field, MAX_ECHO)


def bounded(text: str, limit: int = MAX_ECHO) -> str:
    """*text*, cut to *limit* characters (saying how long it was).

    >>> bounded("x" * 1000, 10)
    'xxxxxxxxxx… (1000 characters)'
    """
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


@dataclass(frozen=True)
class Command:
    name: str
    txn: str
    ts: int
    args: JsonObject


class Limits(NamedTuple):
    """What the house profile allows a command to set: *seats*; *unit*, the smallest chip (every amount
    is a multiple of it, 000 §20); *max_big_blind*, the structure's largest big blind (a level beyond
    the house's structure is refused: add it to the profile)."""

    seats: int
    unit: int
    max_big_blind: int


class TxnStore(Protocol):
    """Records a command's txn; False if it was already used (``Journal.use_txn``)."""

    def __call__(self, txn: str, ts: float, *, forget_before: float) -> bool: ...


class CommandGate:
    """Checks commands for one table: signature, freshness, unused txn, strict arguments."""

    def __init__(self, table: str, key: bytes, *, window: float, use_txn: TxnStore, limits: Limits) -> None:
        if len(key) < 16:
            raise ValueError("the command key must be at least 16 bytes")
        self.table, self._key, self.window, self._use_txn = table, key, window, use_txn
        self.limits = limits

    def admit(self, name: str, raw: bytes, now: float, t: float) -> tuple[Command, Observation | None]:
        """The command in *raw* for ``cmd/<name>`` and the observation it becomes at engine time *t*
        (None: "accepted, not yet applied"), its txn used up; or :class:`CommandError`, nothing used."""
        command = self.parse(name, raw, now)
        observation = to_observation(command, t, self.limits)
        if not self._use_txn(command.txn, command.ts, forget_before=now - 2 * self.window):
            raise CommandError("stale-transaction", f"txn {command.txn!r} was already used", "txn")
        return command, observation

    def parse(self, name: str, raw: bytes, now: float) -> Command:
        """The command in *raw* for ``cmd/<name>``, or :class:`CommandError`; its txn is not looked at.

        The checks run in this order, the first that fails naming the error: the
        command's name, the JSON object and its fields, the signature, the envelope
        (schema, table, txn, ts within the window), then the arguments' types.
        """
        if name not in ARGS:
            raise CommandError("unknown-command", f"unknown command {name!r}; known: {', '.join(ARGS)}")
        body = _envelope(raw)
        if not verify(body, self._key):
            raise CommandError("bad-signature", "HMAC-SHA256 does not match the table key", "hmac")
        txn, ts = self._check_envelope(body, now)
        args = _check_args(name, body["args"])
        return Command(name, txn, ts, args)

    def _check_envelope(self, body: JsonObject, now: float) -> tuple[str, int]:
        """The signed envelope's ``txn`` and ``ts``, checked with its schema and table."""
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
        return txn, ts


def _envelope(raw: bytes) -> JsonObject:
    """The JSON object in *raw*, with exactly the envelope's fields (not yet checked)."""
    if len(raw) > MAX_PAYLOAD:
        raise CommandError("bad-json", f"payload of {len(raw)} bytes, over {MAX_PAYLOAD}")
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CommandError("bad-json", f"payload is not JSON: {exc}") from None
    except RecursionError:
        raise CommandError("bad-json", "payload nested too deeply") from None
    if not isinstance(body, dict):
        raise CommandError("bad-json", "payload must be a JSON object")
    for key in body:
        if key not in ENVELOPE:
            raise CommandError("bad-field", f"unknown field {key!r}", key)
    for key in sorted(ENVELOPE):
        if key not in body:
            raise CommandError("bad-field", f"missing field {key!r}", key)
    return body


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_args(name: str, args: object) -> JsonObject:
    if not isinstance(args, dict):
        raise CommandError("bad-field", "args must be an object", "args")
    spec = ARGS[name]
    for key, value in args.items():
        if key not in spec:
            raise CommandError("bad-field", f"{name} has no argument {key!r}; it takes {', '.join(spec)}",
                               f"args.{key}")
        kind, required = spec[key]
        ok = _is_int(value) if kind is int else isinstance(value, kind)
        if not ok and not (value is None and not required):
            raise CommandError("bad-field", f"args.{key} must be {kind.__name__}", f"args.{key}")
    for key, arg in spec.items():
        if arg.required and args.get(key) is None:
            raise CommandError("bad-field", f"{name} needs args.{key}", f"args.{key}")
    return dict(args)


# -- commands to observations: (args, t, limits) -> observation ------------------------------

def _set_level(a: JsonObject, t: float, limits: Limits) -> Observation:
    for key in ("small_blind", "big_blind", "ante", "big_blind_ante"):
        amount = a.get(key) or 0
        if amount < 0 or amount % limits.unit or amount > limits.max_big_blind:
            raise CommandError("bad-field", f"args.{key} {bounded(str(amount), 24)} must be a multiple of the "
                               f"smallest chip ({limits.unit}) from 0 to the house structure's largest big blind "
                               f"({limits.max_big_blind})", f"args.{key}")
    if a.get("number") is not None and not 1 <= a["number"] <= 10_000:
        raise CommandError("bad-field", "args.number must be a level number, 1..10000", "args.number")
    return obs_mod.SetLevel(t, a["small_blind"], a["big_blind"], a.get("ante") or 0, a.get("big_blind_ante") or 0,
                            a.get("number"))


def _move_button(a: JsonObject, t: float, limits: Limits) -> Observation:
    if not 1 <= a["seat"] <= limits.seats:
        raise CommandError("bad-field", f"seat {bounded(str(a['seat']), 24)} is not in 1..{limits.seats}",
                           "args.seat")
    return obs_mod.MoveButton(t, a["seat"])


def _resolve(a: JsonObject, t: float, limits: Limits) -> Observation:
    if not ID_RE.match(a["decision"]):
        raise CommandError("bad-field", "args.decision must be a kebab-case option", "args.decision")
    return obs_mod.Resolution(t, "td", a["decision"], a.get("card"))


def _pause(a: JsonObject, t: float, limits: Limits) -> Observation:
    return obs_mod.Pause(t, a["paused"], a.get("reason") or "")


def _void_hand(a: JsonObject, t: float, limits: Limits) -> Observation:
    return obs_mod.VoidHand(t, a["hand"], a["reason"])


OBSERVATIONS: dict[str, Callable[[JsonObject, float, Limits], Observation]] = {
    "set-level": _set_level, "move-button": _move_button, "resolve": _resolve, "pause": _pause,
    "void-hand": _void_hand,
}
"""The observation each command becomes; a command not listed is accepted but not yet applied."""


def to_observation(command: Command, t: float, limits: Limits) -> Observation | None:
    """The observation *command* becomes, or None when none exists yet ("accepted, not yet applied").

    Raises :class:`CommandError` for arguments the observation refuses.
    """
    make = OBSERVATIONS.get(command.name)
    if make is None:
        return None
    try:
        return make(command.args, t, limits)
    except obs_mod.ObservationError as exc:
        raise CommandError("bad-field", str(exc), "args") from None
