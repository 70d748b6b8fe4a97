"""The table simulator: a short script of what happens at the table -> a recording of raw streams.

The script format is in docs/scenarios.md. The simulator plays the hardware:
the shoe's wire frames (``drivers.emulated.shoe``'s encoder, written from the
protocol spec), the zone readers' polls (round-robin, only around changes:
between changes a reader's polls repeat the same answer, which the
debounce cannot tell from no poll), the console's GPIO edges, the hall's
commands and the camera: its stable chip counts as ``camera`` lines or, when
the script says ``camera NAME``, the bets filmed (``firmware_host.sim.filming``):
the video is rendered when the recording is saved.
"""
from __future__ import annotations

import hashlib
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from calibration.deck import Deck
from calibration.readers import parse_readers
from drivers.console import load_console_pins
from drivers.emulated.shoe import FAULTS, T_ACK, T_DRAW, T_FAULT, T_HEARTBEAT, T_HELLO, draw_body, frame
from firmware_host import data as package_data
from firmware_host.configfile import ConfigError
from firmware_host.hil.recording import Recording, merge
from firmware_host.observations import (
    DECK,
    CardExposed,
    ChipsInZone,
    Declaration,
    Declared,
    MoveButton,
    Observation,
    Pause,
    Resolution,
    SeatPresence,
    SetLevel,
    VoidHand,
    to_dict,
)
from firmware_host.rules.chips import breakdown
from firmware_host.rules.profile import resolve_profile
from firmware_host.sim.filming import FPS, Film

STEP = 0.6            # seconds between two script lines
ROUND = 0.25          # seconds for one round of every zone reader
HEARTBEAT = 1.0
CHIP_SET = (1, 5, 25, 100, 500, 1000, 5000, 25000)   # chips the simulated players use


class ScriptError(ValueError):
    """A script line the simulator cannot play: the message names the line."""


def demo_deck(deck: str, back: str) -> Deck:
    """A deck with reproducible 7-byte UIDs (NTAG-like, 0x04 manufacturer byte)."""
    return Deck(deck, back, {c: "04" + hashlib.sha256(f"{deck}:{c}".encode()).hexdigest()[:12].upper()
                             for c in DECK})


@dataclass
class _Shoe:
    """The shoe's side of hardware/shoe-protocol.md: reliable frames numbered from the hello (seq 0)."""

    seq: int = -1
    host_seq: int = 0
    lines: list[dict[str, Any]] = field(default_factory=list)
    mangle: str | None = None
    quiet: list[tuple[float, float]] = field(default_factory=list)     # (from, to) without heartbeats

    def _rx(self, t: float, wire: bytes) -> None:
        self.lines.append({"t": round(t, 4), "s": "shoe", "dir": "rx", "hex": wire.hex()})

    def send(self, t: float, kind: int, body: bytes = b"") -> None:
        """A reliable frame (hello, draw, fault), and the host's ack of it."""
        self.seq = 0 if kind == T_HELLO else (self.seq + 1) % 256
        if self.mangle == "gap":                   # a frame lost for good: its seq is skipped
            self.seq = (self.seq + 1) % 256
        wire = frame(kind, self.seq, body)
        if self.mangle == "flip":                  # a bit error: dropped by the host, resent 250 ms later
            self._rx(t, wire[:3] + bytes((wire[3] ^ 0x04,)) + wire[4:])
            t += 0.25
        self.mangle = None
        self._rx(t, wire)
        self.lines.append({"t": round(t + 0.004, 4), "s": "shoe", "dir": "tx",
                           "hex": frame(T_ACK, self.host_seq, bytes((self.seq,))).hex()})
        self.host_seq = (self.host_seq + 1) % 256

    def heartbeat(self, t: float) -> None:
        self._rx(t, frame(T_HEARTBEAT, max(self.seq, 0), int(t * 1000).to_bytes(4, "big") + b"\x00"))


class Simulator:
    """Plays a script; :meth:`recording` gives the result."""

    def __init__(self, table: str = "demo-1", table_profile: str = "demo-10", profile: str = "000"):
        self.t = 0.0
        self.table, self.profile = table, profile
        self.table_text = package_data.read_text(f"tables/{table_profile}.toml")     # shipped table profiles
        data = tomllib.loads(self.table_text)
        self.readers = parse_readers(data, f"{table_profile}.toml")
        self.pins = load_console_pins(data, f"{table_profile}.toml")
        self.decks = [demo_deck("blue", "blue"), demo_deck("red", "red")]
        self.using = 0  # the deck the dealer deals from (the recording's in-play deck at the start)
        self.uid = dict(self.decks[0].cards)
        self.shoe = _Shoe()
        self.lines: list[dict[str, Any]] = []
        self.zone_of = {r.zone: r.id for r in self.readers.readers}
        self.contents: dict[str, set[str]] = {zone: set() for zone in self.zone_of}
        self.changes: list[tuple[float, str, frozenset[str]]] = []
        self.misses: set[tuple[str, int]] = set()
        self.bets: dict[int, dict[int, int]] = {}
        self.pot: dict[int, int] = {}
        self.holes: dict[int, list[str]] = {}
        self.film: Film | None = None
        self.hands = 0
        self.shoe.send(0.05, T_HELLO, bytes((1, 1, 2, 3)) + (0x1234).to_bytes(4, "big"))

    # -- primitives ------------------------------------------------------
    def _hall(self, obs: Observation) -> None:
        self.lines.append({"t": round(self.t, 4), "s": "hall", "obs": to_dict(obs)})

    def draw(self, card: str, face_up: bool = False, uid: str | None = None) -> None:
        self.shoe.send(self.t, T_DRAW, draw_body(uid or self.uid[card], "up" if face_up else "down"))
        self.t += 0.2

    def arrive(self, zone: str, uid: str) -> None:
        self._change(zone, self.contents[self._zone(zone)] | {uid})

    def leave(self, zone: str, uid: str) -> None:
        self._change(zone, self.contents[self._zone(zone)] - {uid})

    def _zone(self, zone: str) -> str:
        if zone not in self.zone_of:
            raise ScriptError(f"no reader under zone {zone!r}")
        return zone

    def _change(self, zone: str, uids: set[str]) -> None:
        self.contents[self._zone(zone)] = uids
        self.changes.append((self.t, zone, frozenset(uids)))
        self.t += 0.1

    def press(self, button: str) -> None:
        pin = self.pins.buttons[button]
        self.lines.append({"t": round(self.t, 4), "s": "gpio", "pin": pin, "level": 0})
        self.lines.append({"t": round(self.t + 0.08, 4), "s": "gpio", "pin": pin, "level": 1})

    def _colours(self) -> dict[int, str]:
        return {chip.value: chip.colour for chip in resolve_profile(self.profile).chips}

    def _film(self, over: list[tuple[str, dict[str, dict[int, int]]]], dealer: bool) -> None:
        """Arms reach over each zone in turn, changing the chips; then the camera is given time
        to see every zone still (its observations land before the next line)."""
        if self.film is None:
            raise ScriptError("chips move on camera only after a 'camera' line")
        for zone, changes in over:
            if zone.startswith("bet:") and not self.film.counted(zone):
                raise ScriptError(f"{zone} is counted by no filmed camera ({', '.join(self.film.cameras)})")
            self.t += self.film.move(self.t, zone, changes, dealer)
        self.t += self.film.settle_seconds

    def chips(self, seat: int) -> None:
        pairs = tuple(sorted(self.bets.get(seat, {}).items(), reverse=True))
        obs = ChipsInZone(round(self.t, 4), f"bet:{seat}", sum(v * n for v, n in pairs), pairs)
        self.lines.append({"t": round(self.t, 4), "s": "camera", "obs": to_dict(obs)})

    # -- the script ------------------------------------------------------
    def run(self, text: str) -> Recording:
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            words = shlex.split(line)
            verb = VERBS.get(words[0])
            if verb is None:
                raise ScriptError(f"line {number}: unknown verb {words[0]!r}")
            try:
                verb(self, *words[1:])
            except (TypeError, ValueError, KeyError) as exc:
                raise ScriptError(f"line {number}: {line!r}: {exc}") from None
            self.t += STEP
        return self.recording()

    def seat(self, text: str) -> int:
        """A seat number of the script, checked against the house profile's seats."""
        seats = resolve_profile(self.profile).seats
        if not text.isdigit() or not 1 <= int(text) <= seats:
            raise ScriptError(f"seat {text!r} is not a seat of this table (1..{seats})")
        return int(text)

    def do_profile(self, profile: str) -> None:
        try:
            resolve_profile(profile)          # a profile replay could not load is refused here
        except ConfigError as exc:
            raise ScriptError(f"profile: {exc}") from None
        self.profile = profile
        if self.film:
            self.film.colours = self._colours()

    def do_camera(self, name: str, fps: str = str(FPS)) -> None:
        """The camera *name* films the bets: pushes and sweeps are in its video, not ``camera`` lines."""
        if self.hands:
            raise ScriptError("camera: must come before the first hand")
        if self.film is None:
            self.film = Film(self._colours(), int(fps))
        elif int(fps) != self.film.fps:
            raise ScriptError(f"camera {name}: every camera films at {self.film.fps} frames a second")
        self.film.add_camera(name)

    def do_seat(self, seat: str, name: str, stack: str) -> None:
        self._hall(SeatPresence(round(self.t, 4), self.seat(seat), True, player=name, stack=int(stack)))

    def do_leave(self, seat: str) -> None:
        self._hall(SeatPresence(round(self.t, 4), self.seat(seat), False))

    def do_level(self, small: str, big: str, *rest: str) -> None:
        extra = dict(zip(rest[::2], map(int, rest[1::2])))
        self._hall(SetLevel(round(self.t, 4), int(small), int(big), extra.get("ante", 0), extra.get("bba", 0)))

    def do_button(self, seat: str) -> None:
        self._hall(MoveButton(round(self.t, 4), self.seat(seat)))

    def do_hand(self, *posted: str) -> None:
        """A new hand; ``posted`` the blinds already in the bet zones, e.g. ``1:50 2:100``."""
        self.hands += 1
        if self.film:
            self._gather()
        self.bets, self.holes = {}, {}
        for zone, uids in self.contents.items():      # the dealer has gathered the last hand's cards
            if uids:
                self._change(zone, set())
        chip_set = sorted(self.film.colours) if self.film else CHIP_SET
        for entry in posted:
            where, amount = entry.split(":")
            seat = self.seat(where)
            self.bets[seat] = {value: count for value, count in breakdown(int(amount), chip_set)}
        self.press("new-hand")
        if self.film and self.bets:
            self.t += 0.1
            self._film([(f"bet:{seat}", {f"bet:{seat}": dict(chips)}) for seat, chips in self.bets.items()], False)

    def _gather(self) -> None:
        """Filmed: the dealer clears the last hand's chips off the table (pot and bets) before new-hand."""
        zones = [f"bet:{seat}" for seat, chips in self.bets.items() if chips] + (["pot"] if self.pot else [])
        self.pot = {}
        if zones:
            self._film([(zone, {zone: {}}) for zone in zones], True)

    def do_deal(self, *holes: str) -> None:
        pairs = [(self.seat(seat), cards) for seat, cards in (h.split(":") for h in holes)]
        for k in (0, 2):
            for seat, cards in pairs:
                card = cards[k:k + 2]
                self.draw(card)
                self.arrive(f"seat:{seat}", self.uid[card])
                self.holes.setdefault(seat, []).append(card)

    def do_draw(self, card: str, face: str = "down") -> None:
        self.draw(card, face == "up")

    def do_to(self, zone: str, card: str) -> None:
        self.arrive(zone, self.uid[card])
        if zone.startswith("seat:"):
            self.holes.setdefault(int(zone[5:]), []).append(card)

    def do_take(self, zone: str, card: str) -> None:
        self.leave(zone, self.uid[card])

    def do_push(self, seat: str, *chips: str) -> None:
        zone = self.bets.setdefault(self.seat(seat), {})
        for chip in chips:
            value, _, count = chip.partition("x")
            zone[int(value)] = zone.get(int(value), 0) + int(count or 1)
        if self.film:
            self._film([(f"bet:{seat}", {f"bet:{seat}": dict(zone)})], False)
        else:
            self.chips(int(seat))

    def do_handback(self, seat: str, *chips: str) -> None:
        """The dealer hands these chips back from the seat's bet zone (a string bet corrected, change)."""
        zone = self.bets.setdefault(self.seat(seat), {})
        for chip in chips:
            value, _, count = chip.partition("x")
            left = zone.get(int(value), 0) - int(count or 1)
            if left < 0:
                raise ScriptError(f"handback: seat {seat} has not {chip} in its bet zone")
            zone[int(value)] = left
            if not left:
                del zone[int(value)]
        if self.film:
            self._film([(f"bet:{seat}", {f"bet:{seat}": dict(zone)})], False)
        else:
            self.chips(int(seat))

    def do_restub(self, zone: str, card: str) -> None:
        """The dealer takes the card off *zone* and puts it back on top of the stub (003 art. 76): its reader
        no longer sees it, and no reader sees the stub; it may be drawn again."""
        self.leave(zone, self.uid[card])

    def do_sweep(self) -> None:
        swept = []
        for seat in [s for s, zone in self.bets.items() if zone]:
            for value, count in self.bets[seat].items():
                self.pot[value] = self.pot.get(value, 0) + count
            self.bets[seat] = {}
            if self.film:
                swept.append((f"bet:{seat}", {f"bet:{seat}": {}, "pot": dict(self.pot)}))
            else:
                self.chips(seat)
        if swept:
            self._film(swept, True)

    def do_fold(self, seat: str) -> None:
        for card in self.holes.get(self.seat(seat), []):
            self.leave(f"seat:{seat}", self.uid[card])
            self.arrive("muck", self.uid[card])

    def do_burn(self, card: str) -> None:
        self.draw(card)
        self.arrive("burn", self.uid[card])

    def do_board(self, street: str, cards: str, *burn: str) -> None:
        self.do_sweep()
        if burn:
            self.do_burn(burn[-1])
        for k in range(0, len(cards), 2):
            self.draw(cards[k:k + 2])
            self.arrive(f"board:{street}", self.uid[cards[k:k + 2]])

    def do_confirm(self) -> None:
        self.press("confirm")

    def do_misdeal(self) -> None:
        self.press("misdeal")

    def do_floor(self) -> None:
        self.press("floor")

    def do_declare(self, seat: str, declared: str, amount: str | None = None) -> None:
        said = cast(Declared, declared)      # checked by Declaration
        self._hall(Declaration(round(self.t, 4), int(seat), said, int(amount) if amount else None))

    def do_resolve(self, by: str, decision: str, card: str | None = None) -> None:
        self._hall(Resolution(round(self.t, 4), cast(Literal["dealer", "td"], by), decision, card))  # checked there

    def do_void(self, hand: str, reason: str) -> None:
        self._hall(VoidHand(round(self.t, 4), int(hand), reason))

    def do_pause(self, state: str, reason: str = "") -> None:
        self._hall(Pause(round(self.t, 4), state == "on", reason))

    def do_wait(self, seconds: str) -> None:
        self.t += float(seconds) - STEP

    def do_expose(self, zone: str, card: str) -> None:
        """The camera sees *card* face up in *zone*."""
        obs = CardExposed(round(self.t, 4), zone, card)
        self.lines.append({"t": round(self.t, 4), "s": "camera", "obs": to_dict(obs)})

    def do_foreign(self, zone: str, uid: str) -> None:
        self.draw("As", uid=uid)
        self.arrive(zone, uid)

    def do_usedeck(self, deck: str) -> None:
        """The dealer deals from deck *deck* from now on (002 C.1: the decks alternate between hands)."""
        names = [d.deck for d in self.decks]
        if deck not in names:
            raise ScriptError(f"usedeck: no deck {deck!r} (the decks are {', '.join(names)})")
        self.using = names.index(deck)
        self.uid = dict(self.decks[self.using].cards)

    def do_otherdeck(self, card: str, zone: str) -> None:
        uid = self.decks[1 - self.using].cards[card]
        self.draw(card, uid=uid)
        self.arrive(zone, uid)

    def do_shoe(self, what: str, arg: str = "") -> None:
        if what == "garbage":
            self.shoe.lines.append({"t": round(self.t, 4), "s": "shoe", "dir": "rx", "hex": arg})
        elif what in ("flip", "gap"):
            self.shoe.mangle = what
        elif what == "fault":
            self.shoe.send(self.t, T_FAULT, bytes((FAULTS[arg], 1)))   # (code, raised)
        elif what == "silence":
            self.shoe.quiet.append((self.t, self.t + float(arg)))
            self.t += float(arg)
        elif what == "unplug":
            self.shoe.lines.append({"t": round(self.t, 4), "s": "shoe", "event": "unplugged"})
            self.shoe.quiet.append((self.t, self.t + float(arg)))
            self.t += float(arg)
            self.shoe.lines.append({"t": round(self.t, 4), "s": "shoe", "event": "plugged"})
        else:
            raise ScriptError(f"unknown shoe event {what!r}")

    def do_reader(self, what: str, zone: str) -> None:
        if what != "miss":
            raise ScriptError(f"unknown reader event {what!r}")
        self.misses.add((self.zone_of[self._zone(zone)], self._slot(self.zone_of[zone], self.t)))

    # -- output ----------------------------------------------------------
    def _slot(self, reader: str, t: float) -> int:
        index = list(self.zone_of.values()).index(reader)
        offset = index * ROUND / len(self.zone_of)
        return int((t - offset) // ROUND) + 1

    def _polls(self) -> list[dict[str, Any]]:
        """Every reader's polls for a few rounds after each change of its antenna."""
        readers = list(self.zone_of.values())
        window = max(self.readers.enter_polls, self.readers.leave_polls) + 2
        slots: dict[str, set[int]] = {r: set() for r in readers}
        for t, zone, _ in self.changes:
            first = self._slot(self.zone_of[zone], t)
            slots[self.zone_of[zone]].update(range(first, first + window))
        for reader, slot in self.misses:
            slots[reader].update(range(slot - 1, slot + 2))
        lines = []
        for reader in readers:
            zone = self.readers.zones[reader]
            history = [(t, uids) for t, z, uids in self.changes if z == zone]
            index = readers.index(reader)
            for slot in sorted(slots[reader]):
                t = slot * ROUND + index * ROUND / len(readers)
                present: frozenset[str] = frozenset()
                for when, uids in history:
                    if when <= t:
                        present = uids
                if (reader, slot) in self.misses:
                    present = frozenset(sorted(present)[1:])
                lines.append({"t": round(t, 4), "s": "reader", "reader": reader, "uids": sorted(present)})
        return lines

    def _heartbeats(self, end: float) -> None:
        t = 1.0
        while t < end:
            if not any(a <= t < b for a, b in self.shoe.quiet):
                self.shoe.heartbeat(t)
            t += HEARTBEAT

    def recording(self) -> Recording:
        self._heartbeats(self.t + 1.0)
        lines = merge(self.lines, self.shoe.lines, self._polls())
        return Recording(self.table, self.profile, self.table_text, [self._deck_dict(d) for d in self.decks],
                         self.decks[0].deck, lines, cameras=self.film.tracks(self.t + 1.0) if self.film else [])

    @staticmethod
    def _deck_dict(deck: Deck) -> dict[str, Any]:
        return {"deck": deck.deck, "back": deck.back, "cards": dict(deck.cards)}


VERBS: dict[str, Callable[..., None]] = {
    "profile": Simulator.do_profile,
    "camera": Simulator.do_camera,
    "seat": Simulator.do_seat,
    "leave": Simulator.do_leave,
    "level": Simulator.do_level,
    "button": Simulator.do_button,
    "hand": Simulator.do_hand,
    "deal": Simulator.do_deal,
    "draw": Simulator.do_draw,
    "to": Simulator.do_to,
    "take": Simulator.do_take,
    "push": Simulator.do_push,
    "handback": Simulator.do_handback,
    "restub": Simulator.do_restub,
    "sweep": Simulator.do_sweep,
    "fold": Simulator.do_fold,
    "burn": Simulator.do_burn,
    "board": Simulator.do_board,
    "confirm": Simulator.do_confirm,
    "misdeal": Simulator.do_misdeal,
    "floor": Simulator.do_floor,
    "declare": Simulator.do_declare,
    "resolve": Simulator.do_resolve,
    "void": Simulator.do_void,
    "pause": Simulator.do_pause,
    "wait": Simulator.do_wait,
    "expose": Simulator.do_expose,
    "foreign": Simulator.do_foreign,
    "usedeck": Simulator.do_usedeck,
    "otherdeck": Simulator.do_otherdeck,
    "shoe": Simulator.do_shoe,
    "reader": Simulator.do_reader,
}
"""The script's verbs (docs/scenarios.md): each line is ``VERB ARGS...``."""


def simulate(script: str, **kwargs: str) -> Recording:
    """The recording a table makes of *script*."""
    return Simulator(**kwargs).run(script)
