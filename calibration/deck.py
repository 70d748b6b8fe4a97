"""Deck registration: which RFID tag UID is which card, per deck.

One JSON file per deck, ``deck-<id>.json`` in a directory chosen by the caller::

    {"format": "pokertable-deck/1", "deck": "red-1", "back": "red",
     "cards": {"2c": "04A1B2C3D4E5F6", "3c": "...", ...}}

``cards`` maps each of the 52 cards (pokerkit notation, ``firmware_host.observations.DECK``)
to its tag UID (upper-case hex, 4 or 7 bytes). Loading validates everything and
names the file and key at fault. A :class:`Registry` holds the one or two decks
of a table (002 C.1: two decks of different back colours) and answers
``lookup(uid)`` relative to the deck in play.
"""
from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from firmware_host.observations import DECK

log = logging.getLogger(__name__)

FORMAT = "pokertable-deck/1"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
_UID = re.compile(r"^(?:[0-9A-F]{8}|[0-9A-F]{14})$")


class DeckError(ValueError):
    """A deck file or registry that cannot be used; the message names the file and key."""


def check_uid(uid: str) -> str:
    """*uid* normalised to upper-case hex; DeckError unless it is 4 or 7 bytes of hex."""
    norm = uid.strip().upper().replace(":", "") if isinstance(uid, str) else uid
    if not isinstance(norm, str) or not _UID.match(norm):
        raise DeckError(f"not a tag UID (4 or 7 bytes of hex): {uid!r}")
    return norm


def check_deck_id(deck: str) -> str:
    """*deck* if it is a usable deck id (it names the file), else DeckError."""
    if not isinstance(deck, str) or not _ID.match(deck):
        raise DeckError(f"deck: bad deck id {deck!r} (letters, digits, - and _, at most 32)")
    return deck


@dataclass(frozen=True)
class Deck:
    """One registered deck: ``deck`` id, ``back`` colour, ``cards`` card -> UID (all 52)."""

    deck: str
    back: str
    cards: Mapping[str, str]
    uids: Mapping[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        where = f"deck {self.deck!r}"
        check_deck_id(self.deck)
        if not isinstance(self.back, str) or not self.back.strip():
            raise DeckError(f"{where}: back: the back colour is required")
        cards: dict[str, str] = {}
        uids: dict[str, str] = {}
        for card, uid in self.cards.items():
            if card not in DECK:
                raise DeckError(f"{where}: cards.{card}: not a card (ranks 23456789TJQKA, suits cdhs)")
            try:
                uid = check_uid(uid)
            except DeckError as exc:
                raise DeckError(f"{where}: cards.{card}: {exc}") from None
            if uid in uids:
                raise DeckError(f"{where}: cards.{card}: UID {uid} is already cards.{uids[uid]}")
            cards[card], uids[uid] = uid, card
        missing = [card for card in DECK if card not in cards]
        if missing:
            raise DeckError(f"{where}: cards: missing {', '.join(missing)}")
        object.__setattr__(self, "cards", {card: cards[card] for card in DECK})
        object.__setattr__(self, "uids", uids)

    @property
    def filename(self) -> str:
        return f"deck-{self.deck}.json"

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "deck": self.deck, "back": self.back, "cards": dict(self.cards)},
                          indent=1) + "\n"

    def save(self, directory: str | Path) -> Path:
        """Write ``deck-<id>.json`` into *directory* (created if needed); return the path."""
        path = Path(directory) / self.filename
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(self.to_json(), encoding="utf-8")
        tmp.replace(path)
        return path


def _no_repeated_keys(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise DeckError(f"{key}: appears twice")
        seen[key] = value
    return seen


def load_deck(path: str | Path) -> Deck:
    """Load and validate one deck file; DeckError naming the file and key."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_no_repeated_keys)
    except OSError as exc:
        raise DeckError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except DeckError as exc:
        raise DeckError(f"{path}: {exc}") from None
    except ValueError as exc:
        raise DeckError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise DeckError(f"{path}: expected a JSON object")
    unknown = sorted(set(data) - {"format", "deck", "back", "cards"})
    if unknown:
        raise DeckError(f"{path}: {unknown[0]}: unknown key")
    if data.get("format") != FORMAT:
        raise DeckError(f"{path}: format: expected {FORMAT!r}, not {data.get('format')!r}")
    for key in ("deck", "back", "cards"):
        if key not in data:
            raise DeckError(f"{path}: {key}: missing")
    if not isinstance(data["cards"], dict):
        raise DeckError(f"{path}: cards: expected an object card -> UID")
    try:
        return Deck(data["deck"], data["back"], data["cards"])
    except DeckError as exc:
        raise DeckError(f"{path}: {exc}") from None


def load_decks(directory: str | Path) -> list[Deck]:
    """Every ``deck-*.json`` in *directory*, validated, sorted by file name."""
    return [load_deck(path) for path in sorted(Path(directory).glob("deck-*.json"))]


@dataclass(frozen=True)
class Lookup:
    """What a UID is: ``kind`` ``card`` (of the deck in play), ``wrong-back`` (of another
    deck of the table; ``card`` and ``deck`` say which) or ``foreign`` (no deck)."""

    kind: Literal["card", "wrong-back", "foreign"]
    card: str | None = None
    deck: str | None = None


class Registry:
    """The decks of a table (one or two, of different back colours) and the one in play.

    ``in_play`` defaults to the first deck. The dealer switches decks between hands (002 C.1:
    two decks of different backs alternate): after :meth:`next_hand` (the dealer's new-hand
    press) the first card drawn from the shoe (:meth:`draw`) puts its deck in play; a card of
    the other deck later in the hand is then a wrong-back card. :meth:`use` sets it outright.
    """

    def __init__(self, decks: Iterable[Deck] = (), in_play: str | None = None):
        self.decks: dict[str, Deck] = {}
        owner: dict[str, str] = {}
        for deck in decks:
            if deck.deck in self.decks:
                raise DeckError(f"deck {deck.deck!r}: registered twice")
            for other in self.decks.values():
                if other.back.lower() == deck.back.lower():
                    raise DeckError(f"deck {deck.deck!r}: back: {deck.back!r} is also the back of deck "
                                    f"{other.deck!r} (the decks of a table differ in colour, 002 C.1)")
            for uid, card in deck.uids.items():
                if uid in owner:
                    raise DeckError(f"deck {deck.deck!r}: cards.{card}: UID {uid} is also in deck {owner[uid]!r}")
            owner.update(dict.fromkeys(deck.uids, deck.deck))
            self.decks[deck.deck] = deck
        if len(self.decks) > 2:
            raise DeckError(f"a table has one or two decks, not {len(self.decks)}")
        self._owner = owner
        self._choose = False  # the next card drawn from the shoe decides the deck in play
        self.in_play: str | None = None
        if in_play is not None or self.decks:
            self.use(in_play if in_play is not None else next(iter(self.decks)))

    @classmethod
    def from_directory(cls, directory: str | Path, ids: Iterable[str] | None = None,
                       in_play: str | None = None) -> Registry:
        """The decks *ids* (default: all) of *directory*."""
        if ids is None:
            return cls(load_decks(directory), in_play)
        return cls([load_deck(Path(directory) / f"deck-{i}.json") for i in ids], in_play)

    def use(self, deck: str) -> None:
        """Put deck *deck* in play."""
        if deck not in self.decks:
            raise DeckError(f"in_play: no deck {deck!r} (registered: {', '.join(self.decks) or 'none'})")
        self.in_play = deck

    def next_hand(self) -> None:
        """A new hand: its first card drawn from the shoe decides which deck is in play."""
        self._choose = len(self.decks) > 1

    def draw(self, uid: str) -> Lookup:
        """:meth:`lookup` for a card drawn from the shoe, the first of a hand choosing the deck."""
        if self._choose:
            deck = self._owner.get(uid.upper())
            if deck is not None:
                self._choose = False
                if deck != self.in_play:
                    log.info("deck %s in play (its card %s is the first of the hand)", deck, uid.upper())
                    self.in_play = deck
        return self.lookup(uid)

    def lookup(self, uid: str) -> Lookup:
        """Card, wrong-back or foreign, for the tag *uid* (hex, any case)."""
        uid = uid.upper()
        deck = self._owner.get(uid)
        if deck is None:
            return Lookup("foreign")
        card = self.decks[deck].uids[uid]
        return Lookup("card" if deck == self.in_play else "wrong-back", card, deck)
