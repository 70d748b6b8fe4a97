"""The publisher: drains the outbox to the broker, in order, QoS 1; a row leaves the outbox on PUBACK.

One thread owns the connection. Each connection is a fresh paho client (MQTT 5,
clean start) so nothing is resent behind our back: on every (re)connect the
retained topics (status, birth, state) are republished, then the outbox is
drained from its first row; a row sent before (this boot or a previous one) is
marked ``"replayed": true``. The Last Will is a retained ``offline`` status.
"""
from __future__ import annotations

import collections
import json
import logging
import ssl
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from firmware_host.service.outbox import Outbox, Row

log = logging.getLogger(__name__)

REFUSED_BACKOFF_MAX = 300.0
"""Seconds: the longest wait before a message the broker refused is tried again."""


@dataclass(frozen=True)
class BrokerConfig:
    """Where and how to connect. TLS and credentials are configuration only."""

    host: str = "127.0.0.1"
    port: int = 1883
    keepalive: int = 10
    client_id: str = ""
    username: str | None = None
    password: str | None = None
    tls: bool = False
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    tls_insecure: bool = False
    reconnect_min: float = 0.2
    reconnect_max: float = 5.0
    window: int = 500


def broker_client(cfg: BrokerConfig, client_id: str, username: str | None = None,
                  password: str | None = None, *, reconnect: bool = False) -> mqtt.Client:
    """An MQTT 5 client for the broker of *cfg*: its TLS, and its account (or *username*, *password*).
    paho does not reconnect it (the caller does, with a fresh client) unless *reconnect*."""
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5,
                         reconnect_on_failure=reconnect)
    client.connect_timeout = 5.0
    user, secret = (username, password) if username is not None else (cfg.username, cfg.password)
    if user is not None:
        client.username_pw_set(user, secret)
    if cfg.tls:
        client.tls_set(ca_certs=cfg.ca_file, certfile=cfg.cert_file, keyfile=cfg.key_file,
                       cert_reqs=ssl.CERT_REQUIRED)
        client.tls_insecure_set(cfg.tls_insecure)
    return client


@dataclass(frozen=True)
class Status:
    """The retained status topic: its *topic*, *payload* ``(status, reason) -> str`` for what the controller
    says, and *will* ``() -> str``, the Last Will of a new connection (``offline``; made before each
    connection, it outranks whatever that connection says: :class:`~firmware_host.mqtt.contract.StatusSeq`)."""

    topic: str
    payload: Callable[[str, str], str]
    will: Callable[[], str]


@dataclass(frozen=True)
class Inbox:
    """Messages to receive: the *topic_filter* subscribed to, and *on_message* ``(topic, payload)``
    (called from paho's network thread)."""

    topic_filter: str
    on_message: Callable[[str, bytes], None]


@dataclass(frozen=True)
class Tick:
    """A call made from the publisher's thread every *interval* seconds, connected or not."""

    call: Callable[[], None]
    interval: float = 10.0


@dataclass
class _Conn:
    """One connection's bookkeeping (mids are per client)."""

    client: mqtt.Client
    connected: threading.Event = field(default_factory=threading.Event)
    subscribed: threading.Event = field(default_factory=threading.Event)   # the command filter's SUBACK
    alive: bool = True
    inflight: dict[int, int] = field(default_factory=dict)    # mid -> outbox oid
    other: set[int] = field(default_factory=set)              # mids of retained and transient messages
    early: set[int] = field(default_factory=set)              # PUBACKs seen before publish() returned
    acked: list[int] = field(default_factory=list)
    refused: list[Row] = field(default_factory=list)          # rows the broker refused (network thread)
    rows: dict[int, Row] = field(default_factory=dict)         # mid -> outbox row in flight
    probing: set[str] = field(default_factory=set)            # refused topics with their head row in flight
    early_refused: set[int] = field(default_factory=set)      # refusals seen before publish() returned
    cursor: int = 0                                           # the last outbox oid read
    waiting: dict[str, collections.deque[Row]] = field(default_factory=dict)  # per topic: read, not yet due


class Publisher:
    """Sends the outbox, the retained topics and transient messages; receives commands."""

    def __init__(self, config: BrokerConfig, outbox: Outbox, boot: str, *, status: Status,
                 inbox: Inbox | None = None, tick: Tick | None = None,
                 alarm: Callable[[str, str | None], None] | None = None) -> None:
        self.config = config
        self._alarm = alarm
        self._refused: dict[str, tuple[float, float]] = {}   # topic -> (back-off s, retry at): refused, held
        self.outbox = outbox
        self.boot = boot
        self._status = status
        self._inbox = inbox
        self._tick = tick
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._retained: dict[str, str] = {}
        self._conn: _Conn | None = None
        self._sent: set[int] = set()          # oids sent on an earlier connection of this boot
        self.stats: collections.Counter[str] = collections.Counter()
        self.last_error = ""
        self.connected = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mqtt-publisher", daemon=True)

    # -- API for the service ------------------------------------------------------
    def start(self) -> Publisher:
        self._thread.start()
        return self

    def wake(self) -> None:
        """New rows are in the outbox."""
        self._wake.set()

    def set_retained(self, topic: str, payload: str) -> None:
        """Publish *payload* retained on *topic* now (if connected) and on every reconnect."""
        with self._lock:
            self._retained[topic] = payload
            conn = self._conn
        if conn is not None and conn.connected.is_set():
            self._track(conn, conn.client.publish(topic, payload, qos=1, retain=True), None)

    def send(self, topic: str, payload: str, qos: int = 1, retain: bool = False) -> bool:
        """A transient message (reply, health): sent if connected, else dropped (counted)."""
        conn = self._conn
        if conn is None or not conn.connected.is_set():
            self.stats["transient_dropped"] += 1
            return False
        info = conn.client.publish(topic, payload, qos=qos, retain=retain)
        if qos:
            self._track(conn, info, None)
        self.stats["transient_sent"] += 1
        return True

    def close(self, final_status: str | None = "stopped", timeout: float = 3.0) -> None:
        """Stop; publish *final_status* (retained) first if connected. Idempotent."""
        if self._stop.is_set():
            return
        conn = self._conn
        if final_status and conn is not None and conn.connected.is_set():
            info = conn.client.publish(self._status.topic, self._status.payload(final_status, "clean shutdown"),
                                       qos=1, retain=True)
            try:
                info.wait_for_publish(timeout)
            except (RuntimeError, ValueError):
                pass
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout + 5)

    # -- paho's callbacks (its network thread; userdata is the connection) -------------
    def _client(self) -> _Conn:
        cfg = self.config
        client = broker_client(cfg, cfg.client_id or f"table-{uuid.uuid4().hex[:8]}")
        conn = _Conn(client)
        client.user_data_set(conn)
        client.will_set(self._status.topic, self._status.will(), qos=1, retain=True)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        if self._inbox is not None:
            client.on_message = self._on_message
            client.on_subscribe = self._on_subscribe
        return conn

    def _on_connect(self, client: mqtt.Client, conn: _Conn, flags: mqtt.ConnectFlags, rc: ReasonCode,
                    props: Properties | None) -> None:
        if rc.is_failure:
            self.last_error = f"connection refused: {rc}"
            log.error("broker refused the connection: %s", rc)
            conn.alive = False
        else:
            conn.connected.set()
        self._wake.set()

    def _on_disconnect(self, client: mqtt.Client, conn: _Conn, flags: mqtt.DisconnectFlags, rc: ReasonCode,
                       props: Properties | None) -> None:
        conn.alive = False
        conn.connected.clear()
        self.connected.clear()
        self._wake.set()

    def _on_publish(self, client: mqtt.Client, conn: _Conn, mid: int, rc: ReasonCode, props: Properties) -> None:
        with self._lock:
            if mid in conn.other:
                conn.other.discard(mid)
                if rc.is_failure:       # a retained or transient message: sent again on the next connection
                    self.stats["refused"] += 1
                    self.last_error = f"broker refused a retained or transient message: {rc}"
                return
            oid = conn.inflight.pop(mid, None)
            row = conn.rows.pop(mid, None)
            if rc.is_failure:
                self.stats["refused"] += 1
                self.last_error = f"broker refused a publish on {row.topic if row else '?'}: {rc}"
                if row is not None:     # kept, held back, tried again alone (_take_refusals)
                    conn.refused.append(row)
                else:
                    conn.early_refused.add(mid)
            elif oid is not None:
                conn.acked.append(oid)
            else:
                conn.early.add(mid)
        self._wake.set()

    def _on_subscribe(self, client: mqtt.Client, conn: _Conn, mid: int, codes: list[ReasonCode],
                      props: Properties | None) -> None:
        refused = [str(rc) for rc in codes if rc.is_failure]
        if refused:
            self.last_error = f"broker refused the command subscription: {', '.join(refused)}"
            log.error(self.last_error)
            self.stats["subscribe_refused"] += 1
        conn.subscribed.set()
        self._wake.set()

    def _on_message(self, client: mqtt.Client, conn: Any, message: mqtt.MQTTMessage) -> None:
        if self._inbox is not None:
            self._inbox.on_message(message.topic, bytes(message.payload))

    # -- the thread ------------------------------------------------------------
    def _run(self) -> None:
        delay = self.config.reconnect_min
        next_tick = time.monotonic() + (self._tick.interval if self._tick else 0.0)
        while not self._stop.is_set():
            conn = self._client()
            if not self._connect(conn):
                self.stats["connect_failures"] += 1
            else:
                if self._connack(conn):
                    delay = self.config.reconnect_min
                    next_tick = self._serve(conn, next_tick)
                self._drop(conn)
                if self._stop.is_set():
                    continue
                self.stats["disconnects"] += 1
            next_tick = self._idle(delay, next_tick)
            delay = min(delay * 2, self.config.reconnect_max)

    def _connect(self, conn: _Conn) -> bool:
        """Open the connection and start paho's network thread; False (the error kept) if it cannot."""
        try:
            conn.client.connect(self.config.host, self.config.port, self.config.keepalive, clean_start=True)
            conn.client.loop_start()
        except (OSError, ValueError, ssl.SSLError) as exc:
            self.last_error = f"cannot connect to {self.config.host}:{self.config.port}: {exc}"
            log.warning(self.last_error)
            return False
        return True

    def _connack(self, conn: _Conn) -> bool:
        """Wait (10 s at most) for the broker's answer: is the connection up?"""
        deadline = time.monotonic() + 10
        while conn.alive and not conn.connected.is_set() and time.monotonic() < deadline and not self._stop.is_set():
            self._wake.wait(0.1)
            self._wake.clear()
        return conn.connected.is_set() and conn.alive

    def _suback(self, conn: _Conn) -> None:
        """Wait (10 s at most) for the command subscription's SUBACK, so that *connected* means commands arrive."""
        deadline = time.monotonic() + 10
        while conn.alive and not conn.subscribed.is_set() and time.monotonic() < deadline and not self._stop.is_set():
            self._wake.wait(0.1)
            self._wake.clear()
        if not conn.subscribed.is_set() and conn.alive:
            log.warning("no SUBACK for the command subscription within 10 s")

    def _serve(self, conn: _Conn, next_tick: float) -> float:
        """The connection's session, until it drops or the publisher stops; a failure is logged and counted."""
        with self._lock:
            self._conn = conn
        try:
            return self._session(conn, next_tick)
        except Exception:          # keep running: log, count, reconnect
            log.exception("publisher session failed")
            self.stats["session_errors"] += 1
            return next_tick

    def _drop(self, conn: _Conn) -> None:
        with self._lock:
            self._conn = None
        self.connected.clear()
        conn.client.disconnect()
        conn.client.loop_stop()

    def _idle(self, seconds: float, next_tick: float) -> float:
        end = time.monotonic() + seconds
        while not self._stop.is_set() and time.monotonic() < end:
            next_tick = self._maybe_tick(next_tick)
            self._stop.wait(min(0.1, max(0.0, end - time.monotonic())))
        return next_tick

    def _maybe_tick(self, next_tick: float) -> float:
        now = time.monotonic()
        if self._tick is not None and now >= next_tick:
            try:
                self._tick.call()
            except Exception:
                log.exception("periodic tick failed")
            return now + self._tick.interval
        return next_tick

    def _session(self, conn: _Conn, next_tick: float) -> float:
        """Status, retained topics, then the outbox in order, until the connection drops or the publisher stops."""
        client = conn.client
        self.stats["connects"] += 1
        if self._inbox is not None:
            client.subscribe(self._inbox.topic_filter, qos=1)
            self._suback(conn)
        self._track(conn, client.publish(self._status.topic, self._status.payload("online", "connected"),
                                         qos=1, retain=True), None)
        with self._lock:
            retained = list(self._retained.items())
        for topic, payload in retained:
            self._track(conn, client.publish(topic, payload, qos=1, retain=True), None)
        self.connected.set()
        while conn.alive and not self._stop.is_set():
            self._wake.clear()
            self._take_refusals(conn)
            self._take_acks(conn)
            now = time.time()
            self._send_due(conn, now)
            self._send_new(conn, now)
            next_tick = self._maybe_tick(next_tick)
            timeout = 0.5
            due = [q[0].not_before for q in conn.waiting.values() if q]
            if due:
                timeout = min(timeout, max(0.005, min(due) - time.time()))
            self._wake.wait(timeout)
        self._take_acks(conn)
        return next_tick

    def _take_acks(self, conn: _Conn) -> None:
        """The rows the broker has acknowledged leave the outbox; a refused topic whose retried row went
        through is open again (the alarm cleared)."""
        with self._lock:
            acked, conn.acked = conn.acked, []
        if acked:
            self.outbox.ack(acked)
            self._sent.difference_update(acked)
            self.stats["acked"] += len(acked)
        with self._lock:
            busy = {r.topic for r in conn.rows.values()} | {r.topic for r in conn.refused}
        for topic in conn.probing - busy:               # its retried row was acknowledged
            conn.probing.discard(topic)
            if topic in self._refused:
                del self._refused[topic]
                log.warning("the broker accepts %s again", topic)
                if self._alarm is not None and not self._refused:
                    self._alarm("publish-refused", None)

    def _take_refusals(self, conn: _Conn) -> None:
        """Rows the broker refused (its ACL, a quota) go back, in order, at the head of their topic's queue;
        the topic is held for a back-off that doubles with each refused retry (up to
        :data:`REFUSED_BACKOFF_MAX`), then its first row is tried alone. Logged and raised as an alarm;
        nothing is dropped, and the other topics flow meanwhile."""
        with self._lock:
            refused, conn.refused = conn.refused, []
        now = time.monotonic()
        for row in sorted(refused, key=lambda r: r.oid):
            queue = conn.waiting.setdefault(row.topic, collections.deque())
            queue.appendleft(row)
            conn.waiting[row.topic] = collections.deque(sorted(queue, key=lambda r: r.oid))
            backoff, _ = self._refused.get(row.topic, (self.config.reconnect_max / 2, 0.0))
            if row.topic in conn.probing or row.topic not in self._refused:   # a new refusal, or a retry refused
                conn.probing.discard(row.topic)
                backoff = min(backoff * 2, REFUSED_BACKOFF_MAX)
                self._refused[row.topic] = (backoff, now + backoff)
                self.stats["refusals"] += 1
                detail = (f"{self.last_error}; the message stays in the outbox and is tried again in {backoff:g} s "
                          "(the broker's ACL or limits refuse it: check the table's account)")
                log.error(detail)
                if self._alarm is not None:
                    self._alarm("publish-refused", detail)

    def _held(self, conn: _Conn, topic: str) -> bool:
        """Whether *topic* is refused and its row may not go now (in back-off, or one already in flight)."""
        if topic not in self._refused:
            return False
        return topic in conn.probing or time.monotonic() < self._refused[topic][1]

    def _send_due(self, conn: _Conn, now: float) -> None:
        """The rows held back (broadcast delay, a refused topic) that are due at *now*, within the window."""
        window = self.config.window
        for topic, queue in conn.waiting.items():
            while queue and queue[0].not_before <= now and len(conn.inflight) < window and conn.alive:
                if self._held(conn, topic):
                    break
                if topic in self._refused:
                    conn.probing.add(topic)
                self._publish(conn, queue.popleft())

    def _send_new(self, conn: _Conn, now: float) -> None:
        """The outbox's rows not read yet, within the window; a row not due, or behind one on its topic, waits."""
        window = self.config.window
        while len(conn.inflight) < window and conn.alive:
            rows = self.outbox.pending(after=conn.cursor, limit=min(200, window - len(conn.inflight)))
            if not rows:
                break
            for row in rows:
                conn.cursor = row.oid
                if row.not_before > now or conn.waiting.get(row.topic) or row.topic in self._refused:
                    conn.waiting.setdefault(row.topic, collections.deque()).append(row)
                else:
                    self._publish(conn, row)

    def _publish(self, conn: _Conn, row: Row) -> None:
        payload = row.payload
        replayed = row.boot != self.boot or row.oid in self._sent
        if replayed:
            body = json.loads(payload)
            body["replayed"] = True
            payload = json.dumps(body, sort_keys=True, separators=(",", ":"))
            self.stats["replayed"] += 1
        info = conn.client.publish(row.topic, payload, qos=1, retain=row.retain)
        if info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):
            conn.alive = False
            return
        self._sent.add(row.oid)
        self.stats["published"] += 1
        with self._lock:
            if info.mid in conn.early_refused:
                conn.early_refused.discard(info.mid)
                conn.refused.append(row)
                return
            conn.rows[info.mid] = row
        self._track(conn, info, row.oid)

    def _track(self, conn: _Conn, info: mqtt.MQTTMessageInfo, oid: int | None) -> None:
        """Remember what *info*'s PUBACK acknowledges (it may already have come)."""
        with self._lock:
            if info.mid in conn.early:
                conn.early.discard(info.mid)
                if oid is not None:
                    conn.acked.append(oid)
            elif oid is None:
                conn.other.add(info.mid)
            else:
                conn.inflight[info.mid] = oid
