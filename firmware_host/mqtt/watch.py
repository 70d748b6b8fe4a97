"""What ``tablectl watch`` shows of one table: its public topics folded into a text view (pure).

:class:`TableView` takes each message of the table's public tree (status, birth, state,
event, irregularity, health) and :meth:`~TableView.render` draws the technician's screen:
status and health, seats and stacks, board and pot, the irregularities still open, and
the last events. Cards are what the public tree carries: hole cards stay hidden.
"""
from __future__ import annotations

import time
from collections import deque
from typing import Any

from firmware_host.mqtt.contract import ROOT

TOPICS = ("status", "birth", "state", "event", "irregularity", "health")
"""The public topics of a table the view reads."""


def topics(table: str) -> list[str]:
    """The subscriptions of a watch on *table*."""
    return [f"{ROOT}/table/{table}/{name}" for name in TOPICS]


class TableView:
    """The latest of each public topic of a table, its open irregularities and its last *keep* events."""

    def __init__(self, table: str, keep: int = 8) -> None:
        self.table = table
        self.latest: dict[str, dict[str, Any]] = {}
        self.events: deque[str] = deque(maxlen=keep)
        self.open: dict[str, dict[str, Any]] = {}
        self.bad = 0
        """Messages that were not a JSON object of this table (counted, not shown)."""
        self.received = 0

    def feed(self, topic: str, payload: Any) -> None:
        """One message of the table's public tree."""
        self.received += 1
        name = topic.rsplit("/", 1)[-1]
        if not isinstance(payload, dict) or payload.get("table") != self.table or name not in TOPICS:
            self.bad += 1
            return
        self.latest[name] = payload
        if name == "event" and isinstance(payload.get("event"), dict):
            self._event(payload["event"])

    def _event(self, body: dict[str, Any]) -> None:
        from firmware_host.cli.display import describe
        from firmware_host.events import from_dict
        kind = body.get("kind")
        key = f"{body.get('hand')}:{body.get('irregularity')}"
        if kind == "irregularity":
            self.open[key] = body
        elif kind == "irregularity-resolved":
            self.open.pop(key, None)
        elif kind == "hand-started":
            self.open = {k: v for k, v in self.open.items() if not k.startswith(f"{body.get('hand')}:")}
        try:
            self.events.append(describe(from_dict(body)))
        except (KeyError, TypeError, ValueError) as exc:
            self.events.append(f"#{body.get('seq', '?')} {kind}: unreadable ({exc})")

    def render(self, now: float | None = None) -> str:
        """The screen, as lines of text."""
        now = time.time() if now is None else now
        out = [f"table {self.table}  " + self._status(now), self._health()]
        state = self.latest.get("state", {}).get("state")
        if state is None:
            out.append("no state received yet")
        else:
            out += self._hand(state)
        out.append("")
        out.append(f"open irregularities ({len(self.open)})" + (":" if self.open else ": none"))
        for body in self.open.values():
            floor = "  FLOOR" if body.get("needs_floor") else ""
            seats = ",".join(str(s) for s in body.get("seats", ()))
            out.append(f"  hand {body.get('hand')} {body.get('irregularity')} seats {seats or '-'}  "
                       f"{body.get('rule')}{floor}")
            out.append(f"    {body.get('procedure', '')}")
            if body.get("options"):
                out.append(f"    options: {', '.join(body['options'])}")
        out.append("")
        out.append("last events:" if self.events else "last events: none yet")
        out += [f"  {line}" for line in self.events]
        return "\n".join(out) + "\n"

    def _status(self, now: float) -> str:
        status = self.latest.get("status")
        if status is None:
            return "status unknown"
        text = f"{status.get('status', '?').upper()} ({status.get('source', '?')})"
        if status.get("reason"):
            text += f": {status['reason']}"
        if status.get("alarms"):
            text += f"  ALARMS {', '.join(status['alarms'])}"
        age = now - float(status.get("time", now))
        return text + f"  since {age:.0f} s"

    def _health(self) -> str:
        health = self.latest.get("health", {}).get("health")
        if health is None:
            return "health: none received yet"
        box = health.get("outbox", {})
        parts = [f"broker {'connected' if health.get('connected') else 'DISCONNECTED'}",
                 f"outbox {box.get('rows', '?')} msg {100 * float(box.get('level', 0)):.0f}%",
                 f"up {float(health.get('uptime', 0)) / 60:.0f} min"]
        if health.get("alarms"):
            parts.append(f"ALARMS {', '.join(health['alarms'])}")
        if health.get("last_error"):
            parts.append(f"last error: {health['last_error']}")
        return "health: " + "  ".join(parts)

    @staticmethod
    def _hand(state: dict[str, Any]) -> list[str]:
        blinds = "/".join(str(b) for b in state.get("blinds", ())) or "-"
        head = (f"hand {state.get('hand')}  {'in play' if state.get('in_hand') else 'between hands'}  "
                f"street {state.get('street', '-')}  button {state.get('button', '-')}  blinds {blinds}")
        if state.get("voided"):
            head += "  VOIDED"
        board = " ".join(state.get("board", ())) or "-"
        lines = [head, f"board {board}   pot {state.get('pot', 0)}", "seat  stack     bet  "]
        folded, shown, bets = set(state.get("folded", ())), state.get("shown", {}), state.get("bets", {})
        for seat, stack in sorted(state.get("stacks", {}).items(), key=lambda kv: int(kv[0])):
            mark = "folded" if int(seat) in folded else " ".join(shown.get(seat, ()))
            lines.append(f"{seat:>4}  {stack:>7}  {bets.get(seat, 0) or '':>6}  {mark}".rstrip())
        return lines
