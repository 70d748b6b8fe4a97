"""The dashboard's one connection to the broker: every table's messages in, signed commands out.

One MQTT 5 client on the dashboard's account (``td`` in the shipped ACL: reads everything, may publish
``cmd/<name>``; the broker binds the client id to the account). :meth:`Link.send` signs a command with
the table's key (docs/mqtt/README.md "Commands": HMAC-SHA256 of the canonical JSON, a fresh ``txn``,
``ts`` from the hall's clock) and :meth:`Link.reply` waits for the table's reply on ``reply/<name>``,
whose ``hmac`` is checked with the same key: a reply that does not verify is no reply.
"""
from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from firmware_host.mqtt import contract as mc
from firmware_host.mqtt.publisher import broker_client
from hall.config import DashboardConfig
from hall.dashboard.room import subscriptions

log = logging.getLogger(__name__)

MAX_WAITING = 1000
"""Replies kept for a waiter that has not come yet; the oldest go first."""

COMMANDS = ("resolve", "set-level", "pause", "move-button", "void-hand")
"""The contract's commands (docs/mqtt/README.md)."""


class Link:
    """Connected to the broker of *config*; *on_message* ``(topic, payload, arrived)`` hears every table
    message (on paho's thread). :meth:`start`, :meth:`close` (idempotent)."""

    def __init__(self, config: DashboardConfig, on_message: Callable[[str, Any, float], None],
                 clock: Callable[[], float] = time.time) -> None:
        self.config, self.clock = config, clock
        self._on_message = on_message
        self._replies: dict[tuple[str, str], dict[str, Any]] = {}
        self._arrived = threading.Condition()
        self.connected = threading.Event()
        self.bad_replies = 0
        b = config.broker
        self.client = broker_client(b, b.client_id, reconnect=True)
        self.client.reconnect_delay_set(max(1, round(b.reconnect_min)), max(1, round(b.reconnect_max)))
        self.client.on_connect = self._connected
        self.client.on_subscribe = self._subscribed
        self.client.on_disconnect = lambda *a: self.connected.clear()
        self.client.on_message = self._received

    def start(self) -> Link:
        b = self.config.broker
        self.client.connect_async(b.host, b.port, b.keepalive, clean_start=True)
        self.client.loop_start()
        return self

    def _connected(self, client: mqtt.Client, userdata: Any, flags: mqtt.ConnectFlags, reason: ReasonCode,
                   properties: Properties | None) -> None:
        if reason.is_failure:
            log.error("dashboard: the broker refused the connection: %s", reason)
            return
        client.subscribe([(f, 1) for f in self._filters()])
        log.info("dashboard: connected to %s:%d as %s", self.config.broker.host, self.config.broker.port,
                 self.config.broker.username)

    @staticmethod
    def _filters() -> list[str]:
        return subscriptions() + [f"{mc.ROOT}/table/+/reply/+"]

    def _subscribed(self, client: mqtt.Client, userdata: Any, mid: int, reasons: list[ReasonCode],
                    properties: Properties | None) -> None:
        """The broker's SUBACK: connected means subscribed (a command's reply published before it is lost)."""
        refused = [f for f, r in zip(self._filters(), reasons) if r.is_failure]
        if refused:
            log.error("dashboard: the broker refused the subscription to %s: check its ACL", ", ".join(refused))
        self.connected.set()

    def _received(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        try:
            payload = json.loads(message.payload)
        except ValueError:
            payload = None
        if "/reply/" in message.topic:
            self._reply(message.topic, payload)
            return
        self._on_message(message.topic, payload, self.clock())

    def _reply(self, topic: str, payload: Any) -> None:
        table = topic.split("/")[3]
        key = self.config.keys.get(table)
        reply = payload.get("reply") if isinstance(payload, dict) else None
        if key is None or not isinstance(reply, dict) or not mc.verify({"reply": reply, "hmac": payload.get("hmac")},
                                                                      key):
            self.bad_replies += 1
            log.warning("dashboard: a reply on %s that does not verify with the table's key: ignored", topic)
            return
        with self._arrived:
            self._replies[(table, str(reply.get("txn")))] = reply
            while len(self._replies) > MAX_WAITING:         # replies nobody waits for (a table's own, late ones)
                del self._replies[next(iter(self._replies))]
            self._arrived.notify_all()

    def send(self, table: str, command: str, args: dict[str, Any]) -> str:
        """Publish *command* to *table*, signed with its key; its ``txn``. KeyError: no key for the table."""
        key = self.config.keys[table]
        txn = f"hall-{int(self.clock())}-{secrets.token_hex(6)}"
        payload = mc.signed({"schema": "pokerhall.cmd", "version": 1, "table": table, "txn": txn,
                             "ts": int(self.clock()), "args": args}, key)
        self.client.publish(mc.Topics(table).cmd(command), mc.dumps(payload), qos=1)
        return txn

    def reply(self, table: str, txn: str, timeout: float) -> dict[str, Any] | None:
        """The table's verified reply to *txn*, or None after *timeout* seconds."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while (table, txn) not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._arrived.wait(left)
            return self._replies.pop((table, txn))

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def __enter__(self) -> Link:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
