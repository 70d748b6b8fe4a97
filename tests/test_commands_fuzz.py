"""The command path under fuzzing: whatever arrives on cmd/<name>, a bounded error or a valid command, never a crash.

100,000 inputs: random bytes, deep nesting, huge keys and values, wrong types, and mutations of a valid signed
command. ``CommandGate.parse`` only ever raises ``CommandError``; its message and field stay short; only a valid
command uses up its txn.
"""
import json
import random
import time

from firmware_host.mqtt import contract as mc
from firmware_host.mqtt.commands import ARGS, MAX_ECHO, CommandError, CommandGate, Limits

KEY = b"fuzz-key-0123456789abcdef"
LIMITS = Limits(seats=10, unit=25, max_big_blind=100_000)


def valid(rng: random.Random, now: int) -> dict:
    body = {"schema": "pokerhall.cmd", "version": 1, "table": "t1", "txn": f"f-{rng.getrandbits(40):x}",
            "ts": now, "args": {"paused": True}}
    return mc.signed(body, KEY)


def junk(rng: random.Random) -> object:
    return rng.choice([None, True, 1, -1, 10**30, 1.5, "x" * rng.randint(0, 3000), [], {}, ["a"] * 3,
                       {"k" * rng.randint(1, 2000): 1}])


def inputs(rng: random.Random, now: int):
    for i in range(100_000):
        kind = i % 6
        if kind == 0:
            yield bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 64)))
        elif kind == 1:
            depth = rng.choice([10, 500, 999, 1000, 5000, 50_000])
            yield rng.choice([b"[", b'{"a":']) * depth
        elif kind == 2:
            body = valid(rng, now)
            body[rng.choice(["k" * rng.randint(1, 100_000), "schema", "args", "txn", "ts"])] = junk(rng)
            yield json.dumps(body).encode()
        elif kind == 3:
            body = valid(rng, now)
            body["args"] = {rng.choice(["paused", "reason", "x" * rng.randint(1, 5000)]): junk(rng)}
            yield json.dumps(body).encode()
        elif kind == 4:
            raw = bytearray(json.dumps(valid(rng, now)).encode())
            for _ in range(rng.randint(1, 4)):
                raw[rng.randrange(len(raw))] = rng.getrandbits(8)
            yield bytes(raw)
        else:
            yield json.dumps(junk(rng)).encode()


def test_a_hundred_thousand_bad_commands_get_bounded_errors():
    used: set[str] = set()

    def use_txn(txn: str, ts: int, forget_before: float) -> bool:
        if txn in used:
            return False
        used.add(txn)
        return True

    gate = CommandGate("t1", KEY, window=30, use_txn=use_txn, limits=LIMITS)
    rng = random.Random(2026)
    now = int(time.time())
    accepted = refused = 0
    for raw in inputs(rng, now):
        name = rng.choice(list(ARGS) + ["x" * 5000])
        try:
            command, _ = gate.admit(name, raw, now, 0.0)
        except CommandError as exc:
            refused += 1
            assert len(str(exc)) <= 4 * MAX_ECHO + 30 and (exc.field is None or len(exc.field) <= MAX_ECHO + 30)
        else:
            accepted += 1
            assert command.txn in used
    assert refused > 95_000
    assert len(used) == accepted           # a refused command used up no txn


def test_deep_nesting_is_bad_json():
    gate = CommandGate("t1", KEY, window=30, use_txn=lambda txn, ts, forget_before: True, limits=LIMITS)
    for raw in (b"[" * 1000, b"[" * 100_000, b'{"a":' * 5000):
        try:
            gate.parse("pause", raw, time.time())
        except CommandError as exc:
            assert exc.code == "bad-json"
        else:
            raise AssertionError("accepted")
