"""The room as the TD sees it: every table's messages folded into tiles, a queue and table pages (pure).

:class:`Room` takes each message the dashboard's broker account receives (status, birth, state, event,
irregularity, health, and the secure events for the hole cards) with the time it arrived, and answers
:class:`Update` records for the event stream: a changed ``tile``, the ``queue``, a table's ``action``, a
released ``holes``. :meth:`Room.tick` turns a table that went quiet into ``silent`` and releases hole
cards once they are ``hole_card_delay`` seconds old. Time is injected: same messages, same room.

The queue holds the engine's irregularities that wait for a decision (they carry ``options``), oldest
first; one leaves when its ``irregularity-resolved`` event arrives (or the hand is over). Device faults
(``device-fault:<fault>``) are health alarms of the tile, cleared by the ``device-recovered`` notice.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from firmware_host.mqtt.contract import ROOT, SECURE_ROOT

JsonObject = dict[str, Any]

TOPICS = ("status", "birth", "state", "event", "irregularity", "health")
"""A table's public topics the room reads."""


def subscriptions() -> list[str]:
    """The dashboard's topic filters: every table's public tree and its secure events."""
    return [f"{ROOT}/table/+/{name}" for name in TOPICS] + [f"{SECURE_ROOT}/table/+/event"]


@dataclass(frozen=True)
class Update:
    """One event-stream message: its *event* name, the *capability* needed to receive it, its *data*."""

    event: str
    capability: str
    data: Any


@dataclass
class _Table:
    name: str
    status: JsonObject | None = None
    birth: JsonObject | None = None
    state: JsonObject = field(default_factory=dict)
    health: JsonObject | None = None
    last_seen: float = 0.0
    silent: bool = False
    since: float = 0.0
    paused: bool = False
    open: dict[str, JsonObject] = field(default_factory=dict)        # message id -> queue item
    device_alarms: dict[tuple[str, str], str] = field(default_factory=dict)   # (device, fault) -> alarm text
    controller_alarms: dict[str, str] = field(default_factory=dict)  # alarm kind -> detail
    actions: deque[JsonObject] = field(default_factory=lambda: deque(maxlen=300))
    seen_ids: deque[str] = field(default_factory=lambda: deque(maxlen=2000))
    holes: dict[int, list[tuple[str, float]]] = field(default_factory=dict)   # seat -> (card, release time)
    released: set[tuple[int, str]] = field(default_factory=set)
    hole_hand: int = -1                                              # the hand of the holes kept


class Room:
    """Every table's tile, the irregularity queue, each table's current hand.

    :param hole_card_delay: seconds after a hole card reached the hall before a surveillance account sees it.
    :param silent_after: seconds without any message from an online table before its tile says ``silent``.
    """

    def __init__(self, hole_card_delay: float = 300.0, silent_after: float = 30.0) -> None:
        self.hole_card_delay = hole_card_delay
        self.silent_after = silent_after
        self._tables: dict[str, _Table] = {}
        self.bad = 0
        """Messages that were not a JSON object of their topic's table (counted, never shown)."""

    # -- input -----------------------------------------------------------------------
    def feed(self, topic: str, payload: Any, now: float) -> list[Update]:
        """One message from the broker, arrived at *now*."""
        parts = topic.split("/")
        secure = topic.startswith(SECURE_ROOT + "/")
        if len(parts) != (6 if secure else 5):
            self.bad += 1
            return []
        name, kind = parts[-2], parts[-1]
        if not isinstance(payload, dict) or payload.get("table") != name or (kind not in TOPICS):
            self.bad += 1
            return []
        t = self._tables.setdefault(name, _Table(name, since=now))
        was_silent = t.silent
        t.last_seen, t.silent = now, False
        before = _moved(self.tile(name))
        out: list[Update] = []
        if secure:
            out += self._secure(t, payload, now)
        elif kind == "status":
            self._status(t, payload, now)
        elif kind == "birth":
            t.birth = payload
        elif kind == "state" and isinstance(payload.get("state"), dict):
            t.state = payload["state"]
        elif kind == "health" and isinstance(payload.get("health"), dict):
            t.health = payload["health"]
        elif kind == "irregularity":
            out += self._irregularity(t, payload, now)
        elif kind == "event" and isinstance(payload.get("event"), dict):
            out += self._event(t, payload, now)
        tile = self.tile(name)
        if _moved(tile) != before or was_silent:
            out.insert(0, Update("tile", "room", tile))
        return out

    def tick(self, now: float) -> list[Update]:
        """What time alone changes: tables gone quiet, hole cards old enough to show."""
        out: list[Update] = []
        for t in self._tables.values():
            online = t.status is not None and t.status.get("status") == "online"
            if online and not t.silent and now - t.last_seen > self.silent_after:
                t.silent, t.since = True, now
                out.append(Update("tile", "room", self.tile(t.name)))
            for seat, cards in t.holes.items():
                ready = [c for c, at in cards if at <= now and (seat, c) not in t.released]
                if ready:
                    t.released.update((seat, c) for c in ready)
                    out.append(Update("holes", "holes", {"table": t.name, "seat": seat,
                                                         "cards": self._released(t, seat)}))
        return out

    def _status(self, t: _Table, payload: JsonObject, now: float) -> None:
        old = t.status
        same_boot = old is not None and old.get("boot") == payload.get("boot")
        if same_boot and old is not None and int(old.get("seq", 0)) > int(payload.get("seq", 0)):
            return          # an older status of this boot (docs/mqtt "Status order")
        if old is None or old.get("status") != payload.get("status") or t.silent:
            t.since = now
        t.status = payload

    def _secure(self, t: _Table, payload: JsonObject, now: float) -> list[Update]:
        body = payload.get("event")
        if not isinstance(body, dict) or body.get("kind") != "hole-card-dealt":
            return []
        self._new_hand(t, body)
        seat, card = body.get("seat"), body.get("card")
        if isinstance(seat, int) and isinstance(card, str):
            t.holes.setdefault(seat, []).append((card, now + self.hole_card_delay))
        return []

    @staticmethod
    def _new_hand(t: _Table, body: JsonObject) -> None:
        hand = body.get("hand")
        if isinstance(hand, int) and hand != t.hole_hand:
            t.hole_hand, t.holes, t.released = hand, {}, set()

    def _irregularity(self, t: _Table, payload: JsonObject, now: float) -> list[Update]:
        if payload.get("source") == "controller" and isinstance(payload.get("alarm"), dict):
            alarm = payload["alarm"]
            t.controller_alarms[str(alarm.get("irregularity"))] = str(alarm.get("detail", ""))[:200]
            return []
        if isinstance(payload.get("event"), dict):
            return self._event(t, payload, now)
        return []

    def _event(self, t: _Table, payload: JsonObject, now: float) -> list[Update]:
        msg_id, body = str(payload.get("id")), payload["event"]
        if msg_id in t.seen_ids:          # the same event on `event` and `irregularity`, or a resend
            return []
        t.seen_ids.append(msg_id)
        kind = body.get("kind")
        queue_before = list(t.open)
        if kind == "hand-started":
            t.actions.clear()
            t.open = {}
        elif kind == "irregularity":
            self._opened(t, msg_id, payload, body)
        elif kind == "irregularity-resolved":
            for key, item in list(t.open.items()):
                if item["hand"] == body.get("hand") and item["irregularity"] == body.get("irregularity"):
                    del t.open[key]
                    break
        elif kind == "notice":
            self._notice(t, body)
        action = {"table": t.name, "time": payload.get("time", now), "seq": body.get("seq"), "kind": kind,
                  "text": describe(body)}
        t.actions.append(action)
        out = [Update("action", "table", action)]
        if list(t.open) != queue_before:
            out.append(Update("queue", "queue", self.queue()))
        return out

    def _opened(self, t: _Table, msg_id: str, payload: JsonObject, body: JsonObject) -> None:
        name = str(body.get("irregularity", ""))
        if name.startswith("device-fault"):
            device = str(body.get("procedure", "")).partition(": ")[0]     # "reader:seat:3: antenna open; ..."
            fault = name.partition(":")[2] or "fault"
            t.device_alarms[(device, fault)] = f"{device}: {fault}"
            return
        if not body.get("options"):
            return            # a report: in the actions, nothing to decide
        t.open[msg_id] = {"id": msg_id, "table": t.name, "hand": body.get("hand"), "time": payload.get("time"),
                          "irregularity": name, "rule": body.get("rule"), "procedure": body.get("procedure", ""),
                          "procedure_fr": body.get("procedure_fr", ""), "options": list(body.get("options", ())),
                          "seats": list(body.get("seats", ())), "cards": list(body.get("cards", ())),
                          "needs_floor": bool(body.get("needs_floor"))}

    @staticmethod
    def _notice(t: _Table, body: JsonObject) -> None:
        notice = body.get("notice")
        if notice in ("table-paused", "table-resumed"):
            t.paused = notice == "table-paused"
        elif notice == "device-recovered":       # "camera: relit cleared" (that fault), "shoe: working again" (all)
            device, _, detail = str(body.get("text", "")).partition(": ")
            fault = detail.removesuffix(" cleared") if detail.endswith(" cleared") else None
            for key in [k for k in t.device_alarms if k[0] == device and fault in (None, k[1])]:
                del t.device_alarms[key]

    # -- views -----------------------------------------------------------------------
    def tables(self) -> list[str]:
        return sorted(self._tables)

    def tile(self, name: str) -> JsonObject:
        """*name*'s tile (docs/dashboard.md ``tile``)."""
        t = self._tables[name]
        st, status = t.state, t.status or {}
        stacks: dict[str, int] = st.get("stacks", {}) or {}
        bets: dict[str, int] = st.get("bets", {}) or {}
        folded = set(st.get("folded", ()) or ())
        in_hand = bool(st.get("in_hand"))
        alarms = sorted(set(status.get("alarms", ()) or ()) | set((t.health or {}).get("alarms", ()) or ()))
        alarms += sorted(t.device_alarms.values())
        alarms += [f"{k}: {v}" for k, v in sorted(t.controller_alarms.items()) if k not in alarms]
        state = "silent" if t.silent else status.get("status", "unknown")
        return {"table": name, "status": state, "since": t.since, "source": status.get("source"),
                "profile": (t.birth or {}).get("profile"), "hand": st.get("hand", 0), "in_hand": in_hand,
                "street": st.get("street") if in_hand else None, "blinds": list(st.get("blinds", ()) or ()),
                "ante": st.get("ante", 0), "pot": int(st.get("pot", 0) or 0) + sum(bets.values()),
                "seats": sum(1 for s, v in stacks.items() if v > 0 or bets.get(s, 0) > 0),
                "in_play": sum(1 for s in stacks if int(s) not in folded) if in_hand else 0,
                "paused": t.paused, "open": len(t.open), "alarms": alarms, "last_seen": t.last_seen}

    def tiles(self) -> list[JsonObject]:
        return [self.tile(n) for n in self.tables()]

    def queue(self) -> list[JsonObject]:
        """Every table's open irregularities, oldest first."""
        items = [i for t in self._tables.values() for i in t.open.values()]
        return sorted(items, key=lambda i: (float(i.get("time") or 0), i["id"]))

    def page(self, name: str, holes: bool) -> JsonObject | None:
        """*name*'s page (without the finished hands, which the archive holds); hole cards with *holes*."""
        if name not in self._tables:
            return None
        t = self._tables[name]
        st = t.state
        shown = st.get("shown", {}) or {}
        folded = set(st.get("folded", ()) or ())
        bets = st.get("bets", {}) or {}
        seats = [{"seat": int(s), "stack": stack, "bet": bets.get(s, 0), "folded": int(s) in folded,
                  "shown": shown.get(s), "holes": self._released(t, int(s)) if holes else None}
                 for s, stack in sorted((st.get("stacks", {}) or {}).items(), key=lambda kv: int(kv[0]))]
        return {"tile": self.tile(name), "button": st.get("button"), "board": list(st.get("board", ()) or ()),
                "seats": seats, "actions": list(t.actions), "queue": [i for i in self.queue() if i["table"] == name]}

    def in_hand(self, name: str) -> bool:
        return name in self._tables and bool(self._tables[name].state.get("in_hand"))

    def online(self, name: str) -> bool:
        t = self._tables.get(name)
        return t is not None and not t.silent and (t.status or {}).get("status") == "online"

    @staticmethod
    def _released(t: _Table, seat: int) -> list[str] | None:
        cards = [c for c, _ in t.holes.get(seat, ()) if (seat, c) in t.released]
        return cards or None


def _moved(tile: JsonObject) -> JsonObject:
    """What a tile shows (its ``last_seen`` alone changes with every message: not worth a push)."""
    return {k: v for k, v in tile.items() if k != "last_seen"}


def describe(body: JsonObject) -> str:
    """An event body as the TD's one line (the table's own wording: ``firmware_host.cli.display``)."""
    from firmware_host.cli.display import describe as line
    from firmware_host.events import from_dict
    try:
        return line(from_dict({k: v for k, v in body.items() if k != "session"}))
    except (KeyError, TypeError, ValueError) as exc:
        return f"#{body.get('seq', '?')} {body.get('kind')}: unreadable ({exc})"


def replay(stored: list[tuple[str, JsonObject, float]]) -> list[tuple[str, JsonObject, float]]:
    """A table's archived messages (``SqlStore.latest``: topic, payload, received) as the room receives them
    live, from the last hand's start: the secure events (for the hole cards), the public events the table
    published (secret kinds left out, cards not yet public masked, as :class:`PublicView` does on the table),
    the irregularities. The room is seeded so after the hall restarts: the queue and the hand go on."""
    from firmware_host.events import from_dict
    from firmware_host.mqtt.public_view import PublicView
    start = max((k for k, (topic, p, _) in enumerate(stored) if topic == "secure-event"
                 and isinstance(p.get("event"), dict) and p["event"].get("kind") == "hand-started"), default=0)
    view, out = PublicView(), []
    for topic, payload, received in stored[start:]:
        table = str(payload.get("table"))
        if topic == "irregularity":
            out.append((f"{ROOT}/table/{table}/irregularity", payload, received))
            continue
        out.append((f"{SECURE_ROOT}/table/{table}/event", payload, received))
        try:
            body = view.apply(from_dict(payload["event"]))
        except (KeyError, TypeError, ValueError):
            continue
        if body is not None:
            public = {**payload, "schema": "pokerhall.event", "event": body}
            out.append((f"{ROOT}/table/{table}/event", public, received))
    return out
