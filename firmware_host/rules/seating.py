"""Seat map, button and blinds: who is dealt in and who posts what.

Pure functions over seat numbers (1..seat_count, clockwise). pokerkit knows
positions, not seats: this module decides the button, the blinds and who is
dealt in, under the dead-button rule and the heads-up rules.

Dead button (000 §32): the big blind advances to the next seat holding a
player; the small blind goes to the seat that was big blind, and is dead if
that player is gone; the button goes to the seat that was small blind, and is
dead if that player is gone (001 'Déplacement du bouton', 003 art. 80,
004 D.a-c). Heads-up the button posts the small blind (000 §34, 003 art. 71,
004 C.c); as the big blind always advances, nobody posts it twice in a row.
A player who has just sat down waits, listed in ``waiting``, while he would be
on the button or in the small blind (003 art. 27, ``SeatingRules.new_player``)
or between them (000 §8A); pass each hand's :class:`Positions` to the next call,
it carries who still waits.

>>> p = first_hand(range(1, 9), button=1, seat_count=8, rules=SeatingRules())
>>> p.small_blind, p.big_blind, p.dealt_in
(2, 3, (2, 3, 4, 5, 6, 7, 8, 1))
>>> q = next_hand(p, {1, 3, 4, 5, 6, 7, 8}, 8, SeatingRules())  # 000 §32: the small blind is out
>>> q.button, q.small_blind, q.big_blind, q.dealer, q.rules
(2, 3, 4, 1, ('000 §32', '004 D.b', '003 art. 80', "001 'Déplacement du bouton'"))
>>> r = next_hand(p, {1, 3, 4, 5, 6, 7, 8}, 8, SeatingRules(button_when_small_blind_out="stays"))  # 004 D.b
>>> r.button, r.small_blind, r.big_blind, r.dealer
(1, 3, 4, 1)
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

__all__ = ["NewPlayerRule", "Positions", "SeatingError", "SeatingRules", "first_hand", "next_hand",
           "replay_hand"]

NewPlayerRule = Literal["not-button-or-small-blind", "anywhere"]

_HEADS_UP = ("000 §34", "001 'Distribution en heads-up'", "003 art. 71", "004 C.c")


@dataclass(frozen=True)
class SeatingRules:
    """The seating variants of one house (the ``[seating]`` table of a profile).

    dead_button
        The big blind always advances; small blind and button adjust and may be
        dead (000 §32, 001 'Déplacement du bouton', 004 D, 003 art. 80).
        ``False``: the button moves to the next player and the blinds are the
        two players after it (004 'Nouveau tour' read alone); no house uses it.
        Players who have just sat down then never take the button or the small
        blind (else the big blind could stay on the same player).
    button_when_small_blind_out
        The small blind's player is gone, the next small blind is live.
        ``"dead"``: the button moves to his empty seat, a dead button (000 §32,
        001 'Déplacement du bouton', 003 art. 80 "virtuellement");
        ``"stays"``: "le bouton dealer reste devant le même joueur qui distribuera
        deux fois de suite" (004 D.b). When both blinds are gone the button goes
        to the small blind's empty seat either way (004 D.c, 001).
    new_player
        ``"not-button-or-small-blind"``: a player who has just sat down may not
        be dealt in on the button or in the small blind (003 art. 27);
        ``"anywhere"``: dealt in at once wherever they sit.
        Either way nobody is dealt in between the button and the small blind
        (000 §8A, §10).
    """

    dead_button: bool = True
    new_player: NewPlayerRule = "not-button-or-small-blind"
    button_when_small_blind_out: Literal["dead", "stays"] = "dead"


@dataclass(frozen=True)
class Positions:
    """Who has the button, who posts the blinds, who is dealt in, for one hand.

    ``button`` may be a seat whose player is not dealt in (empty: dead button,
    or a new player who waits). ``small_blind`` is None when the small blind is
    dead; ``dead_small_blind`` is then the seat it fell on, where the button
    goes next hand (004 D.c). ``dealt_in`` is in pokerkit position order: from
    the first seat dealt in after the button, clockwise; heads-up it is
    ``(big_blind, button)``.
    """

    button: int
    small_blind: int | None
    big_blind: int
    dealt_in: tuple[int, ...]
    waiting: tuple[int, ...]
    heads_up: bool
    rules: tuple[str, ...]
    dead_small_blind: int | None = None

    @property
    def dealer(self) -> int:
        """The player who acts last and, at a dealerless table, deals.

        The button, or behind a dead button the last player before it, who so
        deals twice or three times in a row (003 art. 80 "factuellement",
        004 D.a-c).
        """
        return self.dealt_in[-1]


class SeatingError(ValueError):
    """The seats given cannot make a hand (bad seat numbers, fewer than 2 players...)."""


def first_hand(occupied: Iterable[int], button: int, seat_count: int, rules: SeatingRules) -> Positions:
    """The first hand: the button on the drawn seat, the blinds on the next players.

    Everybody is dealt in (003 art. 22, 004 'Les blinds'); heads-up the button
    posts the small blind (000 §34).
    """
    seats = _seats(occupied, seat_count)
    _check_seat(button, seat_count, "button")
    if button not in seats:
        raise SeatingError(f"the button seat {button} has no player with chips")
    if len(seats) == 2:
        return _heads_up(button, _next(button, seats, seat_count), (), ())
    small = _next(button, seats, seat_count)
    big = _next(small, seats, seat_count)
    return Positions(button, small, big, _order(seats, button, seat_count), (), False,
                     ("003 art. 22", "004 'Les blinds'"))


def next_hand(previous: Positions, occupied: Iterable[int], seat_count: int, rules: SeatingRules,
              new: Iterable[int] = ()) -> Positions:
    """The hand after *previous*, with *occupied* the seats holding a player with chips now.

    *new* are the seats whose player sat down since *previous*; they, and the
    players still waiting from *previous*, may have to wait (``rules.new_player``).
    A player absent from his seat still counts: he is dealt in and posts (000 §30).
    """
    seats = _seats(occupied, seat_count)
    for name in ("button", "big_blind"):
        _check_seat(getattr(previous, name), seat_count, f"previous {name}")
    fresh = set(_checked(new, seat_count, "new"))
    if fresh - seats:
        raise SeatingError(f"new seat(s) {sorted(fresh - seats)} have no player with chips")
    fresh |= seats & set(previous.waiting)
    if rules.dead_button:
        return _dead_button(previous, seats, seat_count, rules, frozenset(fresh))
    return _moving_button(previous, seats, seat_count, rules, frozenset(fresh))


def replay_hand(previous: Positions) -> Positions:
    """The exact replay after a misdeal: same button, blinds and seats; new players still wait (000 §35C)."""
    return dataclasses.replace(previous, rules=tuple(dict.fromkeys(previous.rules + ("000 §35C",))))


# -- the two rotations -------------------------------------------------------

def _dead_button(prev: Positions, seats: frozenset[int], n: int, rules: SeatingRules,
                 fresh: frozenset[int]) -> Positions:
    small = prev.big_blind                # 000 §32: the small blind goes where the big blind was,
    big = _next(small, seats, n)          # the big blind to the next player, always.
    behind = _between(big, small, n)
    was_small = prev.small_blind if prev.small_blind is not None else prev.dead_small_blind
    if was_small is None:                 # a Positions not made here: assume the seat after the button
        was_small = prev.button % n + 1
    if was_small in behind:               # the button goes where the small blind was (004 D.c)
        button: int | None = was_small
    else:                                 # the table went round (heads-up, or new players only there)
        button = next((s for s in reversed(behind) if s in seats), None)
    between = fresh & set(_between(button, small, n)) if button is not None else frozenset()
    waiting = set(between)
    if rules.new_player == "not-button-or-small-blind":
        waiting |= fresh & {button, small}                    # 003 art. 27
    if len(seats - waiting) < 2:          # nobody to play against: the waiting rule cannot apply
        waiting = set(between) if len(seats - between) >= 2 else set()
    dealt = seats - waiting
    cited = ["000 §32"]
    if waiting & {button, small}:
        cited.append("003 art. 27")
    if waiting & between:
        cited.append("000 §8A")
    if len(dealt) == 2:
        button = _other(big, dealt)
        return _heads_up(button, big, _order(waiting, button, n), tuple(cited))
    assert button is not None            # 3+ players: one sits in ``behind``
    inside = [s for s in _between(button, small, n) if s in dealt]
    if inside:                            # forced in above: the last of them takes the button
        button = inside[-1]
    live_small = small if small in dealt else None
    if (rules.button_when_small_blind_out == "stays" and button not in dealt and live_small is not None
            and prev.button in dealt):    # 004 D.b: the button stays in front of the same player
        button = prev.button
    cited += _dead_cases(prev, live_small is None, button not in dealt)
    return Positions(button, live_small, big, _order(dealt, button, n), _order(waiting, button, n), False,
                     tuple(cited), None if live_small is not None else small)


def _moving_button(prev: Positions, seats: frozenset[int], n: int, rules: SeatingRules,
                   fresh: frozenset[int]) -> Positions:
    cited = ["004 'Nouveau tour'"]
    eligible = seats - fresh              # a new player on the button or small blind would stall the big blind
    if len(eligible) >= 2:
        button = _next(prev.button, eligible, n)
        small = _next(button, eligible, n)
        big = _next(small, seats, n)
    else:                                 # hardly anybody left but new players: the big blind leads
        big = _next(prev.big_blind, seats, n)
        small = _order(seats - {big}, big, n)[-1]
        button = _order(seats - {small}, small, n)[-1]
    waiting = fresh & set(_between(button, small, n))
    if waiting:
        cited.append("003 art. 27" if rules.new_player == "not-button-or-small-blind" else "000 §8A")
    dealt = seats - waiting
    if len(dealt) == 2:
        big = _other(button, dealt)
        if big == prev.big_blind:         # 003 art. 71: never the big blind twice in a row
            button, big = big, button
        return _heads_up(button, big, _order(waiting, button, n), tuple(cited))
    return Positions(button, small, big, _order(dealt, button, n), _order(waiting, button, n), False,
                     tuple(cited))


def _dead_cases(prev: Positions, small_dead: bool, button_dead: bool) -> list[str]:
    """The worked case of 004 D (and 001, 003 art. 80) that a dead blind or button is."""
    if small_dead:
        cases = ["004 D.c" if button_dead else "004 D.a"]   # both blinds out / the big blind out
    elif not button_dead:
        return []
    elif prev.small_blind is not None:
        cases = ["004 D.b", "003 art. 80"]                   # the small blind out
    else:                                                    # the button reaches the dead small blind's seat
        cases = ["004 D.a" if prev.button in prev.dealt_in else "004 D.c"]
    return cases + ["001 'Déplacement du bouton'"]


def _heads_up(button: int, big: int, waiting: tuple[int, ...], cited: tuple[str, ...]) -> Positions:
    """Heads-up: the button posts the small blind and acts first preflop (000 §34, 004 C.c)."""
    return Positions(button, button, big, (big, button), waiting, True, cited + _HEADS_UP)


# -- seats -------------------------------------------------------------------

def _clockwise(start: int, n: int) -> Iterator[int]:
    """The seats after *start*, clockwise, ending with *start*."""
    return (((start + k - 1) % n) + 1 for k in range(1, n + 1))


def _next(start: int, pool: Iterable[int], n: int) -> int:
    pool = set(pool)
    return next(s for s in _clockwise(start, n) if s in pool)


def _between(first: int, last: int, n: int) -> list[int]:
    """The seats strictly between *first* and *last*, clockwise."""
    out = []
    for s in _clockwise(first, n):
        if s == last or s == first:
            break
        out.append(s)
    return out


def _order(seats: Iterable[int], button: int, n: int) -> tuple[int, ...]:
    pool = set(seats)
    return tuple(s for s in _clockwise(button, n) if s in pool)


def _other(seat: int, pair: Iterable[int]) -> int:
    return next(s for s in pair if s != seat)


def _check_seat(seat: object, n: int, what: str) -> None:
    if isinstance(seat, bool) or not isinstance(seat, int) or not 1 <= seat <= n:
        raise SeatingError(f"{what} {seat!r} is not a seat of a {n}-seat table (1..{n})")


def _checked(seats: Iterable[int], n: int, what: str) -> list[int]:
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise SeatingError(f"seat_count must be an integer of at least 2, not {n!r}")
    out = list(seats)
    for s in out:
        _check_seat(s, n, f"{what} seat")
    twice = sorted({s for s in out if out.count(s) > 1})
    if twice:
        raise SeatingError(f"{what} seat(s) {twice} listed twice")
    return out


def _seats(occupied: Iterable[int], n: int) -> frozenset[int]:
    seats = frozenset(_checked(occupied, n, "occupied"))
    if len(seats) < 2:
        raise SeatingError(f"a hand needs at least 2 players with chips, got {len(seats)}: {sorted(seats)}")
    return seats
