"""A subscriber that keeps what the broker delivers: the demo's viewer, the benchmarks' and the tests'.

It connects (MQTT 5, QoS 1), subscribes, decodes each JSON payload (the contract's envelopes) and
keeps it with its arrival time; :meth:`Subscriber.wait_for` waits until what arrived satisfies a
condition. A context manager; :meth:`Subscriber.close` is idempotent.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode


class Message(NamedTuple):
    """One delivery: the topic, the JSON document (the raw bytes if not JSON), the arrival time."""

    topic: str
    payload: Any
    at: float


class Subscriber:
    """Subscribed to *topics* on the broker at *host*:*port*, keeping every message in :attr:`messages`.

    :param username: and *password*: the broker's credentials, if it wants them.
    :param client_id: the MQTT client id (default: a fresh one).
    :param persistent: a durable session (MQTT 5 session expiry): the broker queues for it while it is away.
    :param ca_file: connect over TLS, trusting this CA.
    :param on_message: called with each :class:`Message` as it arrives (on the network thread).
    :param clock: the arrival times' clock (default :func:`time.monotonic`).
    :raises TimeoutError: the broker did not acknowledge the subscription within *timeout* seconds.
    """

    def __init__(self, port: int, topics: Sequence[str], *, host: str = "127.0.0.1", username: str | None = None,
                 password: str | None = None, client_id: str | None = None, persistent: bool = False,
                 ca_file: Path | None = None, on_message: Callable[[Message], None] | None = None,
                 clock: Callable[[], float] = time.monotonic, timeout: float = 10.0) -> None:
        self.messages: list[Message] = []
        self.lock = threading.Lock()
        self.granted: list[ReasonCode] = []
        self._subscribed = threading.Event()
        self._topics = list(topics)
        self._persistent = persistent
        self._on_message = on_message
        self._clock = clock
        self._closed = False
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2,
                                  client_id=client_id or f"sub-{time.monotonic_ns()}", protocol=mqtt.MQTTv5)
        if username:
            self.client.username_pw_set(username, password)
        if ca_file:
            self.client.tls_set(ca_certs=str(ca_file))
        self.client.reconnect_delay_set(0.1, 0.5)  # type: ignore[arg-type]  # seconds: paho waits floats too
        self.client.on_connect = self._connected
        self.client.on_subscribe = self._acknowledged
        self.client.on_message = self._received
        properties = None
        if persistent:
            properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]  # paho leaves it bare
            properties.SessionExpiryInterval = 3600
        self.client.connect(host, port, 10, clean_start=not persistent, properties=properties)
        self.client.loop_start()
        if not self._subscribed.wait(timeout):
            self.close()
            raise TimeoutError(f"subscriber: no SUBACK from {host}:{port} within {timeout:g} s")

    def _connected(self, client: mqtt.Client, userdata: Any, flags: mqtt.ConnectFlags, reason: ReasonCode,
                   properties: Properties | None) -> None:
        if reason.is_failure:
            return
        if self._persistent and flags.session_present:     # the broker kept the subscriptions
            self._subscribed.set()
        else:
            client.subscribe([(topic, 1) for topic in self._topics])

    def _acknowledged(self, client: mqtt.Client, userdata: Any, mid: int, reasons: list[ReasonCode],
                      properties: Properties | None) -> None:
        self.granted = list(reasons)
        self._subscribed.set()

    def _received(self, client: mqtt.Client, userdata: Any, delivery: mqtt.MQTTMessage) -> None:
        try:
            payload: Any = json.loads(delivery.payload)
        except ValueError:
            payload = delivery.payload
        message = Message(delivery.topic, payload, self._clock())
        with self.lock:
            self.messages.append(message)
        if self._on_message is not None:
            self._on_message(message)

    def payloads(self, topic: str) -> list[Any]:
        """The payloads received on *topic*: a topic or filter (``pokerhall/v1/table/+/event``), or the
        end of one when it starts with ``/`` (``/event``)."""
        def wanted(name: str) -> bool:
            return name.endswith(topic) if topic.startswith("/") else mqtt.topic_matches_sub(topic, name)
        with self.lock:
            return [message.payload for message in self.messages if wanted(message.topic)]

    def wait_for(self, predicate: Callable[[Subscriber], object], timeout: float = 30.0) -> bool:
        """Whether ``predicate(self)`` came true within *timeout* seconds."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate(self):
                return True
            time.sleep(0.05)
        return bool(predicate(self))

    def close(self) -> None:
        """Disconnect. Idempotent."""
        if not self._closed:
            self._closed = True
            self.client.disconnect()
            self.client.loop_stop()

    def __enter__(self) -> Subscriber:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
