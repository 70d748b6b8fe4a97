"""The controller service: source -> journal -> engine -> outbox -> publisher, and commands from the hall.

A thin shell around the pure engine. One thread (the caller of :meth:`Service.run`)
journals each observation, feeds the engine and writes the resulting messages to
the outbox; the publisher's thread sends them. On start the journal is replayed
into a fresh engine; events already enqueued before (seq <= the outbox's
high-water mark) are not enqueued again.
"""
from __future__ import annotations

import dataclasses
import logging
import queue
import threading
import time
import tomllib
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from firmware_host import observations as obs_mod
from firmware_host.mqtt.commands import CommandError, CommandGate, to_observation
from firmware_host.rules.engine import HandEngine
from firmware_host.events import (ActionTaken, BoardDealt, Event, HandEnded, HandShown, HandStarted, Irregularity,
                     PotAwarded)
from firmware_host.service.journal import Journal
from firmware_host.mqtt.contract import CONTRACT_VERSION, ID_RE, Topics, check_id, dumps, envelope, event_id, mask_cards, signed
from firmware_host.service.outbox import Outbox
from firmware_host.mqtt.publisher import BrokerConfig, Publisher

log = logging.getLogger(__name__)
SOFTWARE = "pokertable 0.1.0"


class ConfigError(ValueError):
    """A bad configuration file; the message names the key."""


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
    hardware: dict = dataclasses.field(default_factory=dict)


_SCHEMA = {   # section -> key -> (types, required)
    "table": {"id": (str, True), "profile": (str, True), "hardware": (dict, False)},
    "broker": {"host": (str, True), "port": (int, True), "keepalive": (int, False), "client_id": (str, False),
               "username": (str, False), "password": (str, False), "password_file": (str, False),
               "tls": (bool, False), "ca_file": (str, False), "cert_file": (str, False),
               "key_file": (str, False), "tls_insecure": (bool, False),
               "reconnect_min": ((int, float), False), "reconnect_max": ((int, float), False)},
    "outbox": {"path": (str, True), "max_bytes": (int, True), "alarm_fraction": ((int, float), False)},
    "journal": {"path": (str, True)},
    "publish": {"broadcast_delay": ((int, float), False), "health_interval": ((int, float), False)},
    "commands": {"key": (str, False), "key_file": (str, False), "window": ((int, float), False)},
}


def load_config(path: str | Path) -> Config:
    """Read and validate a TOML config; :class:`ConfigError` names the bad key."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return parse_config(data, base=path.parent)


def parse_config(data: dict, base: Path = Path(".")) -> Config:
    """Validate a config already parsed from TOML (relative paths are relative to *base*)."""
    for section in data:
        if section not in _SCHEMA:
            raise ConfigError(f"unknown section [{section}]; known: {', '.join(_SCHEMA)}")
    got: dict[str, dict] = {}
    for section, keys in _SCHEMA.items():
        values = data.get(section, {})
        if not isinstance(values, dict):
            raise ConfigError(f"{section} must be a table")
        for key, value in values.items():
            if key not in keys:
                raise ConfigError(f"unknown key {section}.{key}; known: {', '.join(keys)}")
            types_ = keys[key][0]
            if not isinstance(value, types_) or (isinstance(value, bool) and types_ is not bool):
                raise ConfigError(f"{section}.{key} has the wrong type ({type(value).__name__})")
        for key, (_, required) in keys.items():
            if required and key not in values:
                raise ConfigError(f"missing key {section}.{key}")
        got[section] = values
    t, b, o, p, c = got["table"], got["broker"], got["outbox"], got["publish"], got["commands"]

    def where(value: str) -> Path:
        return (base / value) if not Path(value).is_absolute() else Path(value)

    def read(key: str, file: str) -> str:
        try:
            return where(file).read_text().strip()
        except OSError as exc:
            raise ConfigError(f"{key}: cannot read {file}: {exc}") from None

    try:
        check_id(t["id"], "table.id")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if not 1 <= b["port"] <= 65535:
        raise ConfigError(f"broker.port {b['port']} is not in 1..65535")
    if "password" in b and "password_file" in b:
        raise ConfigError("broker.password and broker.password_file: give one")
    password = read("broker.password_file", b["password_file"]) if "password_file" in b else b.get("password")
    if password is not None and "username" not in b:
        raise ConfigError("broker.password needs broker.username")
    for key in ("ca_file", "cert_file", "key_file"):
        if key in b and not where(b[key]).exists():
            raise ConfigError(f"broker.{key}: {b[key]} does not exist")
    if ("cert_file" in b) != ("key_file" in b):
        raise ConfigError("broker.cert_file and broker.key_file go together")
    if o["max_bytes"] < 10_000:
        raise ConfigError("outbox.max_bytes must be at least 10000")
    alarm = float(o.get("alarm_fraction", 0.8))
    if not 0 < alarm < 1:
        raise ConfigError("outbox.alarm_fraction must be between 0 and 1")
    delay = float(p.get("broadcast_delay", 0))
    if not 0 <= delay <= 3600:
        raise ConfigError("publish.broadcast_delay must be 0..3600 seconds")
    health = float(p.get("health_interval", 10))
    if not 0.1 <= health <= 3600:
        raise ConfigError("publish.health_interval must be 0.1..3600 seconds")
    if ("key" in c) == ("key_file" in c):
        raise ConfigError("commands.key or commands.key_file: give exactly one")
    key = (c["key"] if "key" in c else read("commands.key_file", c["key_file"])).encode()
    if len(key) < 16:
        raise ConfigError("commands.key must be at least 16 characters")
    window = float(c.get("window", 30))
    if not 1 <= window <= 600:
        raise ConfigError("commands.window must be 1..600 seconds")
    keepalive = b.get("keepalive", 10)
    if not 1 <= keepalive <= 3600:
        raise ConfigError("broker.keepalive must be 1..3600 seconds")
    broker = BrokerConfig(
        host=b["host"], port=b["port"], keepalive=keepalive, client_id=b.get("client_id", f"table-{t['id']}"),
        username=b.get("username"), password=password, tls=b.get("tls", False),
        ca_file=str(where(b["ca_file"])) if "ca_file" in b else None,
        cert_file=str(where(b["cert_file"])) if "cert_file" in b else None,
        key_file=str(where(b["key_file"])) if "key_file" in b else None,
        tls_insecure=b.get("tls_insecure", False), reconnect_min=float(b.get("reconnect_min", 0.2)),
        reconnect_max=float(b.get("reconnect_max", 5.0)))
    return Config(table=t["id"], profile=t["profile"], broker=broker, journal_path=where(got["journal"]["path"]),
                  outbox_path=where(o["path"]), outbox_max_bytes=o["max_bytes"], outbox_alarm=alarm,
                  broadcast_delay=delay, command_key=key, command_window=window, health_interval=health,
                  hardware=t.get("hardware", {}))


class PublicView:
    """The hand as the public sees it, from the events; masks every card not yet public. Pure."""

    def __init__(self) -> None:
        self.public_cards: set[str] = set()
        self.state: dict = {"hand": 0, "in_hand": False, "last_seq": 0}

    def apply(self, event: Event) -> dict | None:
        """Update the view; return the public body of *event* (None: secret, secure topic only)."""
        s = self.state
        s["last_seq"] = event.seq
        match event:
            case HandStarted():
                self.public_cards = set()
                s.update(hand=event.hand, in_hand=True, button=event.button, street="preflop",
                         blinds=[event.small_blind, event.big_blind], ante=event.ante or event.big_blind_ante,
                         board=[], shown={}, folded=[],
                         stacks={str(seat): st - p for seat, st, p in zip(event.seats, event.stacks, event.posted)},
                         bets={str(seat): p for seat, p in zip(event.seats, event.posted)}, pot=0)
            case ActionTaken():
                s["street"] = event.street
                seat = str(event.seat)
                if "stacks" in s:
                    s["stacks"][seat] = s["stacks"].get(seat, 0) - event.added + event.returned
                    s["bets"][seat] = event.total
                if event.action == "fold":
                    s.setdefault("folded", []).append(event.seat)
            case BoardDealt():
                self.public_cards.update(event.cards)
                s["street"] = event.street
                s["pot"] = s.get("pot", 0) + sum(s.get("bets", {}).values())
                s["bets"] = {k: 0 for k in s.get("bets", {})}
                s.setdefault("board", []).extend(event.cards)
            case HandShown():
                self.public_cards.update(event.cards)
                s.setdefault("shown", {})[str(event.seat)] = list(event.cards)
            case PotAwarded():
                s["pot"] = 0
                s["bets"] = {k: 0 for k in s.get("bets", {})}
            case HandEnded():
                s.update(in_hand=False, stacks={str(a): b for a, b in zip(event.seats, event.stacks)},
                         voided=event.voided, bets={})
        if event.SECRET:
            return None
        body = event.to_dict()
        for key in ("cards", "procedure", "procedure_fr", "effect", "rank", "text"):
            if key in body and not isinstance(event, (HandShown, BoardDealt)):
                body[key] = mask_cards(body[key], self.public_cards)
                if isinstance(body[key], tuple):
                    body[key] = list(body[key])
        return body


def local_config(table: str, profile: str, host: str, port: int, base: str | Path, *,
                 max_bytes: int = 200_000_000) -> Config:
    """A config for a throw-away run (the demo, a replay to a broker): journal and outbox in *base*."""
    return parse_config({"table": {"id": table, "profile": profile}, "broker": {"host": host, "port": port},
                         "outbox": {"path": "outbox.sqlite", "max_bytes": max_bytes},
                         "journal": {"path": "journal.sqlite"},
                         "commands": {"key": "local-run-key-0123456789abcdef"}}, base=Path(base))


def demo_source(speed: float = 0.0, loops: int = 1, skip: int = 0) -> Iterator:
    """The demo session's observations, *loops* times (times shifted), paced at *speed* x real time (0: flat out)."""
    from firmware_host.sim.demo import script

    obs = script()
    span = obs[-1].t + 100
    start, first = time.monotonic(), None
    k = 0
    for loop in range(loops):
        for o in obs:
            k += 1
            if k <= skip:
                continue
            o = dataclasses.replace(o, t=o.t + loop * span)
            if speed > 0:
                first = o.t if first is None else first
                delay = (o.t - first) / speed - (time.monotonic() - start)
                if delay > 0:
                    time.sleep(delay)
            yield o


class Service:
    """The running controller of one table. Use :meth:`start`, then :meth:`run` or :meth:`handle`; :meth:`close`."""

    def __init__(self, config: Config, *, profile=None, boot: str | None = None,
                 on_payload: Callable[[str, dict], None] | None = None,
                 on_event: Callable[[Event], None] | None = None) -> None:
        from firmware_host.rules.profile import builtin_ids, builtin_profile, load_profile

        self.config = config
        self.profile = profile or (builtin_profile(config.profile) if config.profile in builtin_ids()
                                   else load_profile(config.profile))
        self.boot = boot or uuid.uuid4().hex[:16]
        self.topics = Topics(config.table)
        self.counters: Counter = Counter()
        self._seq_lock = threading.Lock()
        self._seqs: Counter = Counter()
        self._on_payload, self._on_event = on_payload, on_event
        self._queue: queue.Queue = queue.Queue()
        self._started = time.time()
        self._alarm = False
        self._last_t = 0.0
        self._closed = False
        self.journal = Journal(config.journal_path, config.table)
        try:
            self.outbox = Outbox(config.outbox_path, config.outbox_max_bytes)
        except BaseException:
            self.journal.close()
            raise
        self.engine = HandEngine(self.profile, config.table)
        self.view = PublicView()
        self.gate = CommandGate(config.table, config.command_key, window=config.command_window,
                                use_txn=self.journal.use_txn)
        self.publisher = Publisher(config.broker, self.outbox, self.boot, status_topic=self.topics.status,
                                   status_payload=self._status_payload, subscribe=self.topics.cmd_filter,
                                   on_message=self._on_message, tick=self._health,
                                   tick_interval=config.health_interval)
        self.source_done = 0
        """Observations of the source already in the journal (a resumable source skips them)."""

    # -- start-up -------------------------------------------------------------
    def start(self) -> Service:
        """Rebuild the hand from the journal, enqueue what was never enqueued, connect."""
        self.outbox.bind(self.journal.session)
        high = self.outbox.event_seq
        missing: list[tuple[Event, dict | None]] = []
        for n, origin, obs in self.journal.replay():
            self._last_t = max(self._last_t, obs.t)
            for event in self._feed(obs, replaying=True):
                body = self.view.apply(event)
                if event.seq > high:
                    missing.append((event, body))
        self.counters["replayed_observations"] = len(self.journal)
        self.source_done = self.journal.count("source")
        if missing:
            log.warning("%d event(s) journaled but never enqueued: enqueuing them now", len(missing))
            self._enqueue(missing)
        self.publisher.set_retained(self.topics.birth, self._payload("birth", self.topics.birth, **self._birth()))
        self._publish_state()
        self.publisher.start()
        return self

    def _birth(self) -> dict:
        return {"software": SOFTWARE, "contract_version": CONTRACT_VERSION, "event_schema": "pokertable.event",
                "event_schema_version": 1, "profile": self.profile.id, "session": self.journal.session,
                "started": round(self._started, 3), "hardware": self.config.hardware}

    # -- the loop ---------------------------------------------------------------
    def feed_from(self, source: Iterable) -> threading.Thread:
        """Read *source* in a thread; its observations join the queue. The queue gets ``end`` after the last."""
        def pump() -> None:
            try:
                for obs in source:
                    if self._closed:
                        return
                    self._queue.put(("obs", obs))
            except Exception as exc:     # a broken source is an irregularity, not a crash
                log.exception("observation source failed")
                self._queue.put(("source-error", exc))
            self._queue.put(("end", None))
        thread = threading.Thread(target=pump, name="source", daemon=True)
        thread.start()
        return thread

    def run(self, *, until_source_ends: bool = True, drain_timeout: float = 30.0,
            stop: threading.Event | None = None) -> None:
        """Process the queue until the source ends (then wait for the outbox to drain) or *stop* is set."""
        while not (stop and stop.is_set()):
            try:
                kind, item = self._queue.get(timeout=0.2)
            except queue.Empty:
                continue
            if kind == "obs":
                self.handle(item)
            elif kind == "cmd":
                self.command(*item)
            elif kind == "source-error":
                self.counters["source_errors"] += 1
                self._alarm_irregularity("source-failed", f"the observation source failed: {item}")
            elif kind == "end" and until_source_ends:
                self.drain(drain_timeout)
                return

    def drain(self, timeout: float) -> bool:
        """Wait until the outbox is empty (True) or *timeout*."""
        end = time.monotonic() + timeout
        while len(self.outbox) and time.monotonic() < end:
            time.sleep(0.05)
        return not len(self.outbox)

    def handle(self, obs, origin: str = "source") -> list[Event]:
        """One observation: journal, engine, outbox. Returns its events."""
        if not isinstance(obs, tuple(obs_mod.OBSERVATION_TYPES.values())):
            self.counters["bad_observations"] += 1
            log.error("not an observation: %r", obs)
            self._alarm_irregularity("bad-observation", f"the source produced {type(obs).__name__}, not an observation")
            return []
        self.journal.append(obs, origin)
        self.counters["observations"] += 1
        self._last_t = max(self._last_t, obs.t)
        events = self._feed(obs)
        self._enqueue([(e, self.view.apply(e)) for e in events])
        return events

    def _feed(self, obs, replaying: bool = False) -> list[Event]:
        try:
            return self.engine.feed(obs)
        except Exception as exc:     # deterministic: the replay hits (and skips) it again
            self.counters["engine_errors"] += 1
            log.exception("engine failed on %r", obs)
            if not replaying:
                self._alarm_irregularity("engine-error", f"{type(obs).__name__} at t={obs.t}: {exc}")
            return []

    # -- messages ---------------------------------------------------------------
    def _next(self, topic: str) -> int:
        with self._seq_lock:
            self._seqs[topic] += 1
            return self._seqs[topic]

    def _payload(self, kind: str, topic: str, msg_id: str | None = None, **body) -> str:
        seq = self._next(topic)
        payload = envelope(kind, self.config.table, self.boot, seq, msg_id or f"{self.boot}-{kind}-{seq}",
                           time.time(), **body)
        if self._on_payload:
            self._on_payload(topic, payload)
        return dumps(payload)

    def _enqueue(self, events: list[tuple[Event, dict | None]]) -> None:
        if not events:
            return
        now = time.time()
        t = self.topics
        messages = []
        for event, body in events:
            eid = event_id(self.config.table, self.journal.session, event.seq)
            messages.append((t.secure_event, self._payload("secure-event", t.secure_event, eid, event=event.to_dict()),
                             False, now + self.config.broadcast_delay))
            if body is not None:
                messages.append((t.event, self._payload("event", t.event, eid, event=body), False, now))
                if isinstance(event, Irregularity):
                    messages.append((t.irregularity, self._payload("irregularity", t.irregularity, eid,
                                                                   source="engine", event=body), False, now))
            if self._on_event:
                self._on_event(event)
        self.outbox.put(messages, self.boot, event_seq=max(e.seq for e, _ in events))
        self.counters["events"] += len(events)
        self.publisher.wake()
        self._publish_state()
        self._check_outbox()

    def _publish_state(self) -> None:
        self.publisher.set_retained(self.topics.state, self._payload("state", self.topics.state,
                                                                     state=self.view.state))

    def _status_payload(self, status: str, reason: str) -> str:
        return self._payload("status", self.topics.status, status=status, reason=reason,
                             alarms=["outbox-filling"] if self._alarm else [])

    def _alarm_irregularity(self, kind: str, detail: str) -> None:
        """A controller irregularity for the TD (not from the engine): outboxed, never dropped."""
        log.warning("%s: %s", kind, detail)
        topic = self.topics.irregularity
        payload = self._payload("irregularity", topic, source="controller",
                                alarm={"irregularity": kind, "detail": detail})
        self.outbox.put([(topic, payload, False, time.time())], self.boot)
        self.publisher.wake()

    def _check_outbox(self) -> None:
        level = self.outbox.level()
        if level >= self.config.outbox_alarm and not self._alarm:
            self._alarm = True
            self.counters["outbox_alarms"] += 1
            self._alarm_irregularity("outbox-filling", f"outbox at {level:.0%} of {self.outbox.max_bytes} bytes: "
                                     "the broker is not acknowledging; check the network")
            self.publisher.send(self.topics.status, self._status_payload("online", "outbox alarm"), retain=True)
        elif level < self.config.outbox_alarm / 2 and self._alarm:
            self._alarm = False
            self.publisher.send(self.topics.status, self._status_payload("online", "outbox alarm cleared"),
                                retain=True)

    def _health(self) -> None:
        ob = self.outbox
        health = {
            "uptime": round(time.time() - self._started, 3), "hand": self.engine.hand_number,
            "in_hand": self.engine.in_hand, "last_seq": self.engine.seq, "connected": self.publisher.connected.is_set(),
            "outbox": {"rows": len(ob), "bytes": ob.bytes, "max_bytes": ob.max_bytes, "level": round(ob.level(), 4),
                       "alarm": self._alarm, "spilled": ob.spilled},
            "counters": dict(self.counters), "publisher": dict(self.publisher.stats),
            "last_error": self.publisher.last_error,
        }
        self.publisher.send(self.topics.health, self._payload("health", self.topics.health, health=health), qos=0)

    # -- commands ---------------------------------------------------------------
    def _on_message(self, topic: str, payload: bytes) -> None:
        """From the publisher's thread: queue for the service thread."""
        name = topic.rsplit("/", 1)[-1]
        self._queue.put(("cmd", (name, payload)))

    def command(self, name: str, raw: bytes) -> dict:
        """Authenticate, validate and apply one command; publish and return the reply body."""
        reply: dict = {"command": name, "txn": None}
        try:
            cmd = self.gate.parse(name, raw, time.time())
            reply["txn"] = cmd.txn
            obs = to_observation(cmd, self._last_t, self.profile.seats)
            if obs is None:
                reply.update(status="accepted-not-applied",
                             message=f"{name} is valid but the engine has no observation for it yet")
            else:
                events = self.handle(obs, origin="command")
                reply.update(status="ok", events=[{"seq": e.seq, "kind": e.KIND, **(
                    {"irregularity": e.irregularity} if isinstance(e, Irregularity) else {})} for e in events])
            self.counters["commands"] += 1
        except CommandError as exc:
            self.counters["bad_commands"] += 1
            log.warning("command %s refused: %s", name, exc)
            txn = _txn_of(raw)
            reply.update(txn=txn, status="error", error={"code": exc.code, "message": str(exc), "field": exc.field})
            if exc.code == "bad-signature":
                self._alarm_irregularity("command-rejected", f"cmd/{name}: {exc}")
        reply_name = name if ID_RE.match(name) else "invalid"
        topic = self.topics.reply(reply_name)
        body = signed({"reply": reply}, self.config.command_key)
        self.publisher.send(topic, self._payload("reply", topic, reply=body["reply"], hmac=body["hmac"]))
        return reply

    # -- shutdown ----------------------------------------------------------------
    def close(self, final_status: str = "stopped") -> None:
        """Publish the final status, stop the publisher, close the files. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.publisher.close(final_status)
        self.outbox.close()
        self.journal.close()

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _txn_of(raw: bytes) -> str | None:
    import json
    try:
        txn = json.loads(raw).get("txn")
    except (ValueError, AttributeError, UnicodeDecodeError):
        return None
    return txn if isinstance(txn, str) and len(txn) <= 64 else None
