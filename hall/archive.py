"""The archive worker: every table's messages from the broker into the store, nothing lost.

It subscribes at QoS 1 with a persistent MQTT 5 session (the broker queues for it while it is away) to
every table's secure events (hole and burn cards: the histories need them), irregularities, status and
birth. A message is acknowledged to the broker only once its transaction is committed (paho's manual
acknowledgement), so a crash of the worker or of the broker loses nothing the broker had acknowledged
to the table. Duplicates are dropped by id (the store's key), whatever ``replayed`` says. With a share
group, several workers split the events (``$share/<group>/...``) over one database; status and birth
are retained, which shared subscriptions never deliver, so every worker takes those itself.

Per table, topic and boot the store counts what it holds against the highest ``seq``: a hole that lasts
``gap_grace`` seconds is an alarm naming the table and the missing range (logged, kept in the store,
listed by ``tablectl hall gaps``), cleared when the messages arrive.
"""
from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from firmware_host.mqtt.contract import ROOT, SECURE_ROOT, ContractError, Topics, Validator, check_id, dumps
from firmware_host.mqtt.publisher import broker_client
from hall.config import HallConfig
from hall.store.sql import Incoming, SqlStore

log = logging.getLogger(__name__)

SHARED = (f"{SECURE_ROOT}/table/+/event", f"{ROOT}/table/+/irregularity")
"""The streams split between the workers of a share group."""
RETAINED = (f"{ROOT}/table/+/status", f"{ROOT}/table/+/birth")
"""Retained topics: every worker subscribes to them itself."""


def parse(topic: str, raw: bytes, received: float, validator: Validator | None = None) -> Incoming:
    """One delivery as the store keeps it; ContractError says why it cannot be kept."""
    parts = topic.split("/")
    table = parts[4] if topic.startswith(SECURE_ROOT + "/") else parts[3] if len(parts) > 3 else ""
    try:
        kind = Topics(check_id(table, "table id in the topic")).kind_of(topic)
    except ContractError as exc:
        raise ContractError(f"not an archived topic: {exc}") from None
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        raise ContractError(f"not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise ContractError("not a JSON object")
    if payload.get("schema") != f"pokerhall.{kind}":
        raise ContractError(f"schema {payload.get('schema')!r} on a {kind} topic")
    if payload.get("table") != table:
        raise ContractError(f"table {payload.get('table')!r} on table {table}'s topic")
    if validator is not None:
        errors = validator.errors(payload)
        if errors:
            raise ContractError("; ".join(errors[:3]))
    msg_id, boot, seq = payload.get("id"), payload.get("boot"), payload.get("seq")
    if not isinstance(msg_id, str) or not isinstance(boot, str) or not isinstance(seq, int) or isinstance(seq, bool):
        raise ContractError("id, boot and seq are missing or of the wrong type")
    published = payload.get("time")
    event = payload.get("event") if isinstance(payload.get("event"), dict) else None
    session = hand = event_seq = None
    label = payload.get("status") or payload.get("alarm")
    if event is not None:
        hand, event_seq, label = event.get("hand"), event.get("seq"), event.get("kind")
        session = msg_id.removeprefix(f"{table}-").removesuffix(f"-{event_seq}")
    return Incoming(table, kind, msg_id, boot, seq, dumps(payload),
                    float(published) if isinstance(published, (int, float)) else None, received,
                    session, hand if isinstance(hand, int) else None,
                    event_seq if isinstance(event_seq, int) else None, str(label) if label else None)


class Archive:
    """One archive worker: subscribed to the broker of *config*, storing into *store*. :meth:`start`,
    :meth:`close` (idempotent; a context manager too). *clock* stamps arrivals and alarms; *on_alarm* hears
    each alarm's text; with *owns_store*, closing the worker closes the store."""

    def __init__(self, config: HallConfig, store: SqlStore, *, clock: Callable[[], float] = time.time,
                 on_alarm: Callable[[str], None] | None = None, owns_store: bool = False) -> None:
        self.config, self.store, self.clock = config, store, clock
        self._owns_store = owns_store
        self.counters: Counter[str] = Counter()
        self.connected = threading.Event()  # connected and subscribed: what is published from now is stored
        self._on_alarm = on_alarm
        self._queue: queue.Queue[mqtt.MQTTMessage] = queue.Queue()
        self._stop = threading.Event()
        self._give_up = threading.Event()
        self._closed = False
        self._seen_gaps: dict[str, float] = {}        # gap key -> first seen
        self._check_failing = ""                      # why the last gap check failed ("": it did not)
        self._validator = Validator() if config.archive.validate else None
        self.client = broker_client(config.broker, config.broker.client_id, reconnect=True)
        self.client.manual_ack_set(True)
        b = config.broker
        self.client.reconnect_delay_set(max(1, round(b.reconnect_min)), max(1, round(b.reconnect_max)))
        self.client.on_connect = self._connected
        self.client.on_subscribe = self._subscribed
        self.client.on_disconnect = self._disconnected
        self.client.on_message = self._received
        self._writer = threading.Thread(target=self._write_loop, name="archive-writer", daemon=True)

    # -- the broker side ----------------------------------------------------------
    def start(self) -> Archive:
        """Connect (in the background, retrying) and store what comes. Idempotent."""
        if self._writer.is_alive() or self._closed:
            return self
        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = self.config.archive.session_expiry
        b = self.config.broker
        self.client.connect_async(b.host, b.port, b.keepalive, clean_start=False, properties=properties)
        self._writer.start()
        self.client.loop_start()
        return self

    def filters(self) -> list[str]:
        group = self.config.archive.share_group
        return [f"$share/{group}/{f}" if group else f for f in SHARED] + list(RETAINED)

    def _connected(self, client: mqtt.Client, userdata: Any, flags: mqtt.ConnectFlags, reason: ReasonCode,
                   properties: Properties | None) -> None:
        if reason.is_failure:
            log.error("archive: the broker refused the connection: %s", reason)
            self.counters["refused"] += 1
            return
        client.subscribe([(f, 1) for f in self.filters()])     # again on a kept session: harmless, deduped
        self.counters["connections"] += 1
        log.info("archive: connected to %s:%d (session %s)", self.config.broker.host, self.config.broker.port,
                 "resumed" if flags.session_present else "new")

    def _subscribed(self, client: mqtt.Client, userdata: Any, mid: int, reasons: list[ReasonCode],
                    properties: Properties | None) -> None:
        """The broker's SUBACK: from now on what is published reaches the archive (until 2026-11-27 this was
        on CONNACK: a message published before the broker took the subscription was lost on a first start)."""
        refused = [f for f, r in zip(self.filters(), reasons) if r.is_failure]
        if refused:
            self.counters["refused"] += 1
            log.error("archive: the broker refused the subscription to %s: check its ACL", ", ".join(refused))
        self.connected.set()

    def _disconnected(self, client: mqtt.Client, userdata: Any, flags: mqtt.DisconnectFlags, reason: ReasonCode,
                      properties: Properties | None) -> None:
        self.connected.clear()
        if not self._closed:
            log.warning("archive: lost the broker (%s); reconnecting, the broker keeps the session", reason)

    def _received(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        message.timestamp = self.clock()      # arrival, on the archive's clock
        self._queue.put(message)

    # -- the store side -----------------------------------------------------------
    def _write_loop(self) -> None:
        last_check = 0.0
        while not (self._stop.is_set() and self._queue.empty()):
            batch = self._take()
            if batch:
                self._store(batch)
            if time.monotonic() - last_check >= 1.0:
                last_check = time.monotonic()
                self._check_gaps()

    def _take(self) -> list[mqtt.MQTTMessage]:
        try:
            batch = [self._queue.get(timeout=0.2)]
        except queue.Empty:
            return []
        while len(batch) < self.config.archive.batch:
            try:
                batch.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def _store(self, batch: list[mqtt.MQTTMessage]) -> None:
        """Store *batch* (retrying until the store takes it: nothing is acknowledged before), then ack it."""
        good: list[Incoming] = []
        for m in batch:
            try:
                good.append(parse(m.topic, bytes(m.payload), m.timestamp, self._validator))
            except ContractError as exc:
                self.counters["rejected"] += 1
                log.error("archive: message on %s kept apart: %s", m.topic, exc)
                text = bytes(m.payload).decode("utf-8", "replace")[:65536]
                self._retry(self.store.reject, m.topic, text, str(exc)[:500], m.timestamp)
        if good:
            new = self._retry(self.store.add, good, self.clock())
            self.counters["stored"] += sum(new)
            self.counters["duplicates"] += len(new) - sum(new)
        for m in batch:
            if m.qos:
                self.client.ack(m.mid, m.qos)

    def _retry(self, action: Callable[..., Any], *args: Any) -> Any:
        """``action(*args)``, again until the store takes it (the database down or refusing: nothing is
        acknowledged meanwhile, so the broker keeps the messages); a hard close gives up."""
        delay = 0.5
        while True:
            try:
                return action(*args)
            except Exception as exc:
                self.counters["store_errors"] += 1
                if self._give_up.is_set():
                    raise
                log.error("archive: the store failed (%s); retrying in %.1f s, nothing acknowledged", exc, delay)
                self._give_up.wait(delay)
                delay = min(delay * 2, 30.0)

    def _check_gaps(self) -> None:
        try:
            gaps = self.store.gaps()
            now = self.clock()
            seen = {f"gap {g.table} {g.topic} {g.boot} {g.first}-{g.last}": g for g in gaps}
            for key, gap in seen.items():
                first = self._seen_gaps.setdefault(key, now)
                if now - first >= self.config.archive.gap_grace and self.store.raise_alarm(key, gap.table, str(gap),
                                                                                             now):
                    self.counters["gap_alarms"] += 1
                    log.warning("archive: ALARM %s", gap)
                    if self._on_alarm:
                        self._on_alarm(str(gap))
            for key in [k for k in self._seen_gaps if k not in seen]:
                del self._seen_gaps[key]
            for key, _table, text, _raised in self.store.open_alarms():
                if key.startswith("gap ") and key not in seen and self.store.clear_alarm(key, now):
                    log.warning("archive: cleared: %s (the messages arrived)", text)
            if self._check_failing:
                self._check_failing = ""
                log.warning("archive: the gap check works again")
        except Exception as exc:
            self.counters["store_errors"] += 1
            if str(exc) != self._check_failing:      # once per cause, not every second
                self._check_failing = str(exc)
                log.error("archive: gap check failed: %s", exc)

    def drained(self) -> bool:
        """Has everything received so far been stored?"""
        return self._queue.empty() and self._queue.unfinished_tasks == 0

    def close(self, hard: bool = False) -> None:
        """Stop: what was received is stored and acknowledged first (*hard*: give up a failing store).
        The broker keeps the session for what comes meanwhile. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if hard:
            self._give_up.set()
        self.client.disconnect()
        self._stop.set()
        if self._writer.is_alive():
            self._writer.join()
        self.client.loop_stop()
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> Archive:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
