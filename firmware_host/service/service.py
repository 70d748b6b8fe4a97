"""The controller service: source -> journal -> engine -> outbox -> publisher, and commands from the hall.

A thin shell around the pure engine. One thread (the caller of :meth:`Service.run`)
journals each observation, feeds the engine and writes the resulting messages to
the outbox; the publisher's thread sends them. On start the journal is replayed
into a fresh engine; events already enqueued before (seq <= the outbox's
high-water mark) are not enqueued again.
"""
from __future__ import annotations

import dataclasses
import enum
import json
import logging
import queue
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeGuard

from firmware_host import observations as obs_mod
from firmware_host.events import Event, Irregularity
from firmware_host.mqtt.commands import MAX_PAYLOAD, CommandError, CommandGate, Limits, bounded
from firmware_host.mqtt.contract import (
    CONTRACT_VERSION,
    ID_RE,
    JsonObject,
    PayloadKind,
    StatusSeq,
    Topics,
    dumps,
    envelope,
    event_id,
    signed,
)
from firmware_host.mqtt.public_view import PublicView
from firmware_host.mqtt.publisher import Inbox, Publisher, Status, Tick
from firmware_host.observations import Observation
from firmware_host.rules.engine import HandEngine
from firmware_host.rules.profile import Profile, resolve_profile
from firmware_host.service.config import Config
from firmware_host.service.journal import Journal
from firmware_host.service.outbox import Outbox

log = logging.getLogger(__name__)
SOFTWARE = "pokertable 0.1.0"


def demo_source(speed: float = 0.0, loops: int = 1, skip: int = 0) -> Iterator[Observation]:
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


class _Item(enum.StrEnum):
    """What the service's queue carries."""

    OBSERVATION = "obs"              # from the source
    COMMAND = "cmd"                  # (name, payload) from the hall
    SOURCE_ERROR = "source-error"    # the exception that broke the source
    END = "end"                      # the source has no more


def _is_observation(value: object) -> TypeGuard[Observation]:
    return isinstance(value, tuple(obs_mod.OBSERVATION_TYPES.values()))


SOURCES = ("devices", "recording", "demo")
"""Where a controller's observations come from: only ``devices`` is a real table; the others say
``simulated`` in ``birth`` and ``status`` (issue 14 item 10)."""


class Service:
    """The running controller of one table. Use :meth:`start`, then :meth:`run` or :meth:`handle`; :meth:`close`."""

    def __init__(self, config: Config, *, profile: Profile | None = None, boot: str | None = None,
                 on_payload: Callable[[str, JsonObject], None] | None = None,
                 on_event: Callable[[Event], None] | None = None, source: str = "demo",
                 chip_unit: int | None = None) -> None:
        if source not in SOURCES:
            raise ValueError(f"source must be one of {', '.join(SOURCES)}, not {source!r}")
        self.config = config
        self.source = source
        self.profile = profile or resolve_profile(config.profile)
        self.boot = boot or uuid.uuid4().hex[:16]
        self.topics = Topics(config.table)
        self.counters: Counter[str] = Counter()
        self._seq_lock = threading.Lock()
        self._seqs: Counter[str] = Counter()
        self._status_seq = StatusSeq()
        self._on_payload, self._on_event = on_payload, on_event
        self._queue: queue.Queue[tuple[_Item, Any]] = queue.Queue()
        self._started = time.time()
        self._alarm = False
        self._alarms: set[str] = set()     # raised by the publisher (publish-refused)
        self._left = 0
        self.source_error = ""
        """What broke the observation source, if it did (the run then exits non-zero)."""
        self._last_t = 0.0
        self._closed = False
        self.journal = Journal(config.journal_path, config.table)
        try:
            self.outbox = Outbox(config.outbox_path, config.outbox_max_bytes)
        except BaseException:
            self.journal.close()
            raise
        self.engine = HandEngine(self.profile, config.table, chip_unit=chip_unit)
        self.view = PublicView()
        self.gate = CommandGate(config.table, config.command_key, window=config.command_window,
                                use_txn=self.journal.use_txn, limits=command_limits(self.profile))
        self.publisher = Publisher(config.broker, self.outbox, self.boot,
                                   status=Status(self.topics.status, self._status_payload, self._status_will),
                                   inbox=Inbox(self.topics.cmd_filter, self._on_message),
                                   tick=Tick(self._health, config.health_interval), alarm=self._publisher_alarm)
        self.source_done = 0
        """Observations of the source already in the journal (a resumable source skips them)."""

    # -- start-up -------------------------------------------------------------
    def start(self) -> Service:
        """Rebuild the hand from the journal, enqueue what was never enqueued, connect."""
        self.outbox.bind(self.journal.session)
        high = self.outbox.event_seq
        missing: list[tuple[Event, JsonObject | None]] = []
        for _, _, obs in self.journal.replay():
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

    def _birth(self) -> JsonObject:
        return {"software": SOFTWARE, "contract_version": CONTRACT_VERSION, "event_schema": "pokertable.event",
                "event_schema_version": 1, "profile": self.profile.id, "session": self.journal.session,
                "started": round(self._started, 3), "hardware": self.config.hardware, "source": self.source,
                "simulated": self.source != "devices", "chip_unit": self.engine.unit}

    # -- the loop ---------------------------------------------------------------
    def feed_from(self, source: Iterable[object]) -> threading.Thread:
        """Read *source* in a thread; its observations join the queue. The queue gets ``end`` after the last."""
        def pump() -> None:
            try:
                for obs in source:
                    if self._closed:
                        return
                    self._queue.put((_Item.OBSERVATION, obs))
            except Exception as exc:     # a broken source is an irregularity, not a crash
                if self._closed:         # the source closed under it as the controller stopped
                    return
                log.exception("observation source failed")
                self._queue.put((_Item.SOURCE_ERROR, exc))
            self._queue.put((_Item.END, None))
        thread = threading.Thread(target=pump, name="source", daemon=True)
        thread.start()
        return thread

    def run(self, *, until_source_ends: bool = True, drain_timeout: float = 30.0,
            stop: threading.Event | None = None, turn: Callable[[], None] | None = None) -> None:
        """Process the queue until the source ends (then wait for the outbox to drain) or *stop* is set;
        *turn* is called at every turn of the loop (systemd's watchdog: :mod:`.notify`)."""
        while not (stop and stop.is_set()):
            if turn is not None:
                turn()
            try:
                kind, item = self._queue.get(timeout=0.2)
            except queue.Empty:
                continue
            if kind is _Item.OBSERVATION:
                self.handle(item)
            elif kind is _Item.COMMAND:
                self.command(*item)
            elif kind is _Item.SOURCE_ERROR:
                self.counters["source_errors"] += 1
                self.source_error = bounded(str(item) or type(item).__name__, 300)
                self._alarm_irregularity("source-failed", f"the observation source failed: {item}")
            elif kind is _Item.END and until_source_ends:
                self.drain(drain_timeout)
                return

    def drain(self, timeout: float) -> bool:
        """Wait until the outbox is empty (True) or *timeout*."""
        end = time.monotonic() + timeout
        while len(self.outbox) and time.monotonic() < end:
            time.sleep(0.05)
        return not len(self.outbox)

    def handle(self, obs: object, origin: str = "source") -> list[Event]:
        """One observation: journal, engine, outbox. Returns its events."""
        if not _is_observation(obs):
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

    def _feed(self, obs: Observation, replaying: bool = False) -> list[Event]:
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

    def _payload(self, kind: PayloadKind, topic: str, msg_id: str | None = None, seq: int | None = None,
                 **body: Any) -> str:
        seq = seq or self._next(topic)
        payload = envelope(kind, self.config.table, self.boot, seq, msg_id or f"{self.boot}-{kind}-{seq}",
                           time.time(), **body)
        if self._on_payload:
            self._on_payload(topic, payload)
        return dumps(payload)

    def _enqueue(self, events: list[tuple[Event, JsonObject | None]]) -> None:
        if not events:
            return
        now = time.time()
        t = self.topics
        messages: list[tuple[str, str, bool, float]] = []
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
        return self._payload("status", self.topics.status, seq=self._status_seq.next(), status=status, reason=reason,
                             alarms=self._alarm_names(), source=self.source)

    def _status_will(self) -> str:
        return self._payload("status", self.topics.status, seq=self._status_seq.will(), status="offline",
                             reason="connection lost", alarms=self._alarm_names(), source=self.source)

    def _alarm_names(self) -> list[str]:
        return sorted(self._alarms | ({"outbox-filling"} if self._alarm else set()))

    def _publisher_alarm(self, kind: str, detail: str | None) -> None:
        """From the publisher's thread: an alarm raised (*detail*) or cleared (None): status, irregularity, log."""
        if detail is None:
            self._alarms.discard(kind)
            self.publisher.send(self.topics.status, self._status_payload("online", f"{kind} cleared"), retain=True)
            return
        self.counters[kind.replace("-", "_")] += 1
        if kind not in self._alarms:
            self._alarms.add(kind)
            self._alarm_irregularity(kind, detail)
        self.publisher.send(self.topics.status, self._status_payload("online", kind), retain=True)

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
            "last_error": self.publisher.last_error, "alarms": self._alarm_names(),
        }
        self.publisher.send(self.topics.health, self._payload("health", self.topics.health, health=health), qos=0)

    # -- commands ---------------------------------------------------------------
    def _on_message(self, topic: str, payload: bytes) -> None:
        """From the publisher's thread: queue for the service thread."""
        name = topic.rsplit("/", 1)[-1]
        self._queue.put((_Item.COMMAND, (name, payload)))

    def command(self, name: str, raw: bytes) -> JsonObject:
        """Authenticate, validate and apply one command; publish and return the reply body."""
        reply: JsonObject = {"command": name, "txn": None}
        try:
            cmd, obs = self.gate.admit(name, raw, time.time(), self._last_t)
            reply["txn"] = cmd.txn
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
            log.warning("command %s refused: %s", bounded(name), exc)
            txn = _txn_of(raw)
            reply.update(txn=txn, status="error", error={"code": exc.code, "message": str(exc), "field": exc.field})
            if exc.code == "bad-signature":
                self._alarm_irregularity("command-rejected", f"cmd/{bounded(name)}: {exc}")
        except Exception as exc:  # whatever goes wrong with one command is its error reply; the table runs on
            self.counters["bad_commands"] += 1
            log.error("command %s failed: %s", bounded(name), bounded(repr(exc)))
            reply.update(status="error", error={"code": "internal-error", "field": None,
                                                "message": bounded(f"the table could not apply it: {exc!r}")})
        reply_name = name if ID_RE.match(name) else "invalid"
        topic = self.topics.reply(reply_name)
        body = signed({"reply": reply}, self.config.command_key)
        self.publisher.send(topic, self._payload("reply", topic, reply=body["reply"], hmac=body["hmac"]))
        return reply

    # -- shutdown ----------------------------------------------------------------
    def close(self, final_status: str = "stopped", drain: float = 0.0) -> int:
        """Wait up to *drain* seconds for the outbox to empty (if connected), publish the final status,
        stop the publisher (it takes the acknowledgements that came), close the files. Idempotent.

        :return: the messages still in the outbox, counted after the last acknowledgement was taken
            (they are sent on the next start).
        """
        if self._closed:
            return self._left
        self._closed = True
        if drain and self.publisher.connected.is_set():
            self.drain(drain)
        self.publisher.close(final_status)
        self._left = len(self.outbox)
        self.outbox.close()
        self.journal.close()
        return self._left

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def command_limits(profile: Profile) -> Limits:
    """What the house profile lets the hall's commands set (seats, the smallest chip, the largest big blind)."""
    return Limits(profile.seats, profile.smallest_chip, max(level.big_blind for level in profile.levels))


def _txn_of(raw: bytes) -> str | None:
    if len(raw) > MAX_PAYLOAD:
        return None
    try:
        txn = json.loads(raw).get("txn")
    except (ValueError, AttributeError, UnicodeDecodeError, RecursionError):
        return None
    return txn if isinstance(txn, str) and len(txn) <= 64 else None
