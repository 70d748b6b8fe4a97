"""Chips pushed into a betting zone become an action, by the house's rules.

Pure functions: no I/O, no state. The engine builds a :class:`Situation` from
the hand state, the camera gives a :class:`Push`, and :func:`rule` returns
the :class:`Ruling` the dealer applies.

A declaration keyed by the dealer prevails over the chips (000 §40A, 001 'Les
Relances' "c'est la parole qui fait loi", 003 art. 45, 004 A.a). Without one:

* post-flop with no bet facing, the push is a bet of its value (000 §44,
  001 'Les Relances', 004 A.i), completed to the minimum bet (000 §52A);
* less than the call is an undercall, completed (000 §51B, 003 art. 53),
  or a call all-in with the last chips;
* a single chip is a call (000 §44, 001, 003 art. 66, 004 A.i), and so are
  several chips all needed for the call (000 §45A, 003 art. 66);
* above that, a raise if it reaches the minimum (:func:`min_raise_to`), else
  ``short_raise`` decides (000 §43A, 003 art. 51 / 001 'Les Relances').

>>> s = Situation("flop", 100, highest_bet=1000, own_bet=0, stack=9000,
...               last_increment=1000, previous_bet=1000, may_raise=True)
>>> r = rule(s, Push((1000, 100, 100, 100, 100)), BettingRules())
>>> r.kind, r.total, r.returned, r.rule
('call', 1000, 400, '000 §43A')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["BettingError", "BettingRules", "Push", "Ruling", "Situation", "min_raise_to", "rule"]

MinRaise = Literal["tda", "double", "bb-multiple", "bb-multiple-above"]
ShortRaise = Literal["fifty-percent", "call"]
Street = Literal["preflop", "flop", "turn", "river"]
Declared = Literal["raise", "all-in", "call", "bet"]
Kind = Literal["check", "call", "bet", "raise"]

_STREETS = ("preflop", "flop", "turn", "river")
_DECLARED = (None, "raise", "all-in", "call", "bet")


@dataclass(frozen=True)
class BettingRules:
    """The betting variants of one house (the ``[betting]`` table of a profile).

    min_raise
        ``"tda"``: at least the largest previous bet or raise increment of the
        round (000 §43A, the TDA reading); ``"double"``: at least double the
        previous bet (000 §43A French reading, 001 'Les Relances', 003 art. 51-52);
        ``"bb-multiple"``: as TDA, and the raise is a multiple of the big blind
        (one reading of 004 'Règles du jeu' 5 and A.g); ``"bb-multiple-above"``:
        any multiple of the big blind above the bet faced, the letter of 004
        'Règles du jeu' 5: "chaque relance doit être un multiple de la big blind
        supérieur à la relance précédente. Par exemple, si la big blind est 100,
        on peut relancer à 200 ou 500 mais pas à 50 ou 150" (the raise named by
        its total), raising by a big blind at least (A.f). Under both, a push above the minimum that is no multiple is
        the multiple below it, the rest handed back (004 A.g).
    short_raise
        What an unannounced push between a call and the legal minimum raise is:
        ``"fifty-percent"``: at least 50% of the required increment is completed
        to the minimum raise, less is a call (000 §43A, 003 art. 51), and the
        player's last chips are an all-in whatever the 50% (000 §45B);
        ``"call"``: always a call without a raise announcement, last chips
        included (001 'Les Relances', 004 A.e).
    """

    min_raise: MinRaise = "tda"
    short_raise: ShortRaise = "fifty-percent"


@dataclass(frozen=True)
class Situation:
    """The betting round as the actor faces it; every amount is a total for this round.

    ``highest_bet`` is the big blind preflop (000 §51B: the posted big blind is
    the opening bet) and 0 post-flop before a bet; ``last_increment`` is the
    largest full bet or raise increment (the big blind preflop when unraised);
    ``previous_bet`` the total of the largest previous bet or raise (what the
    French "double" doubles); ``may_raise`` is False once the actor has acted
    and since faced only short all-ins (000 §47A).
    """

    street: Street
    big_blind: int
    highest_bet: int
    own_bet: int
    stack: int
    last_increment: int
    previous_bet: int
    may_raise: bool

    @property
    def to_call(self) -> int:
        """Chips the actor must add to call (0 when nothing is faced)."""
        return self.highest_bet - self.own_bet

    @property
    def all_in_total(self) -> int:
        return self.own_bet + self.stack


@dataclass(frozen=True)
class Push:
    """One gesture: the NEW chips pushed (one value per chip) and the dealer-keyed declaration.

    ``declared_amount`` is a total for the round ("raise, 8000" = 8000 in all,
    000 §43B); an amount alone is the same as pushing it silently (000 §40C).
    """

    chips: tuple[int, ...]
    declared: Declared | None = None
    declared_amount: int | None = None

    @property
    def amount(self) -> int:
        return sum(self.chips)


@dataclass(frozen=True)
class Ruling:
    """What the push is: ``total`` is the actor's bet for the round after it.

    ``returned`` chips go back to the actor, ``owed`` chips he must add;
    always ``returned + (total - own_bet) == push.amount + owed``.
    """

    kind: Kind
    total: int
    all_in: bool
    returned: int
    owed: int
    rule: str
    reason: str


class BettingError(ValueError):
    """An impossible situation or push (negative amounts, more chips than the stack...)."""


# -- the minimum -------------------------------------------------------------

def min_raise_to(situation: Situation, rules: BettingRules) -> int:
    """The legal minimum total for a raise (a bet post-flop), capped at the actor's all-in."""
    _check_situation(situation)
    return min(_min_total(situation, rules), situation.all_in_total)


def _min_total(s: Situation, rules: BettingRules) -> int:
    """The minimum raise (or bet) total, uncapped."""
    bb = s.big_blind
    tda = s.highest_bet + max(s.last_increment, bb)     # 000 §43A; the minimum bet is the big blind
    if rules.min_raise == "double":       # 000 §43A (French), 001 'Les Relances', 003 art. 51
        # never below the full raise over a short all-in (000 §47A): double the last full bet, or more
        return max(2 * s.previous_bet, tda)
    if rules.min_raise == "tda":
        return tda
    if rules.min_raise == "bb-multiple":  # 004 A.f-g: a multiple of the big blind
        return -(-tda // bb) * bb
    if rules.min_raise == "bb-multiple-above":   # 004 'Règles du jeu' 5: a multiple above the bet; A.f: by a BB
        return -(-(s.highest_bet + bb) // bb) * bb
    raise BettingError(f"unknown min_raise {rules.min_raise!r}")


# -- the ruling --------------------------------------------------------------

def rule(situation: Situation, push: Push, rules: BettingRules) -> Ruling:
    """The action *push* is in *situation* under *rules*; raise :class:`BettingError` if impossible."""
    s = situation
    _check_situation(s)
    _check_push(s, push)
    if rules.short_raise not in ("fifty-percent", "call"):
        raise BettingError(f"unknown short_raise {rules.short_raise!r}")
    _min_total(s, rules)   # validates min_raise
    declared = push.declared
    if declared == "call":
        if s.to_call == 0:
            return _ruling(s, push, s.own_bet, "000 §55A", "call declared with no bet to call: a check")
        return _ruling(s, push, s.highest_bet, "000 §51A", "call declared: binding")
    if declared == "all-in":
        return _raise(s, push, rules, s.all_in_total, "000 §51A", "all-in declared")
    if declared in ("raise", "bet"):
        if push.declared_amount is not None:
            return _raise(s, push, rules, push.declared_amount, "000 §43B",
                          f"raise declared to {push.declared_amount} in all")
        if len(push.chips) == 1:
            return _raise(s, push, rules, s.own_bet + push.amount, "000 §44",
                          f"raise declared without amount: the single {push.amount} chip plays in full")
        return _raise(s, push, rules, s.own_bet + push.amount, "000 §42A",
                      f"raise declared: {push.amount} pushed in one gesture")
    if push.declared_amount is not None:
        if push.declared_amount < s.own_bet:
            raise BettingError(f"declared {push.declared_amount} is less than the {s.own_bet} already bet")
        return _silent(s, push, rules, push.declared_amount - s.own_bet, None,
                       f"{push.declared_amount} announced without a declaration (000 §40C)")
    if not push.chips:
        raise BettingError("nothing pushed and nothing declared")
    return _silent(s, push, rules, push.amount, push.chips, f"{push.amount} pushed silently")


def _silent(s: Situation, push: Push, rules: BettingRules, amount: int,
            chips: tuple[int, ...] | None, what: str) -> Ruling:
    """A push of *amount* (chips *chips*, None for a bare verbal amount) without a declaration."""
    call, last = s.to_call, amount >= s.stack
    single = chips is not None and len(chips) == 1
    if s.highest_bet == 0:                                   # post-flop, no bet faced
        if not s.may_raise:
            return _ruling(s, push, s.own_bet, "000 §47A", f"{what}: may not bet, a check")
        return _raise(s, push, rules, s.own_bet + amount, "000 §44" if single else "000 §40C",
                      f"{what} with no bet faced: a bet of its value")
    if amount == call:
        return _ruling(s, push, s.highest_bet, "000 §41B", f"{what}: exactly the call")
    if amount < call:
        if last:
            return _ruling(s, push, s.all_in_total, "000 §45B", f"{what}: last chips, a call all-in for less")
        return _ruling(s, push, s.highest_bet, "000 §51B",
                       f"{what} facing {call} to call: undercall, completed to the call (003 art. 53)")
    if single:
        return _ruling(s, push, s.highest_bet, "000 §44",
                       f"{what}: a single chip without a raise declared is a call")
    if chips is not None and amount - min(chips) < call:
        return _ruling(s, push, s.highest_bet, "000 §45A",
                       f"{what}: without one {min(chips)} chip it is less than the call, a call")
    if not s.may_raise:
        return _ruling(s, push, s.highest_bet, "000 §47A",
                       f"{what}: betting not reopened by a short all-in, a call")
    total, low = s.own_bet + amount, _min_total(s, rules)
    if total >= low:
        return _raise(s, push, rules, total, "000 §40C" if chips is None else "000 §45B",
                      f"{what}: a raise" if s.to_call else what)
    fifty = rules.short_raise == "fifty-percent"
    if fifty and last:
        return _ruling(s, push, s.all_in_total, "000 §45B",
                       f"{what}: last chips, an all-in raise whatever the 50%")
    if fifty and 2 * (total - s.highest_bet) >= low - s.highest_bet:
        return _ruling(s, push, low, "000 §43A",
                       f"{what}: 50% or more of the raise, completed to the minimum {low} (003 art. 51)")
    if fifty:
        return _ruling(s, push, s.highest_bet, "000 §43A",
                       f"{what}: less than 50% of the minimum raise to {low}, a call (003 art. 51)")
    return _ruling(s, push, s.highest_bet, "001 'Les Relances'",
                   f"{what}: below the minimum raise to {low} without a raise declared, a call (004 A.e)")


def _raise(s: Situation, push: Push, rules: BettingRules, target: int, rule_: str, reason: str) -> Ruling:
    """A bet or raise to *target*: completed to the minimum, capped at all-in (a call if not above the bet)."""
    if not s.may_raise and s.all_in_total > s.highest_bet:
        return _ruling(s, push, s.highest_bet, "000 §47A",
                       f"{reason}: betting not reopened by a short all-in, a call (003 art. 52)")
    low = _min_total(s, rules)
    if target >= s.all_in_total:
        return _ruling(s, push, s.all_in_total, rule_, f"{reason}: all-in")
    if target < low:
        return _ruling(s, push, low, "000 §52A", f"{reason}: below the minimum, completed to {low}"
                       + (" (001 'Les Relances', 003 art. 51)" if rules.min_raise == "double" else ""))
    if rules.min_raise.startswith("bb-multiple") and s.highest_bet and target % s.big_blind:
        total = target - target % s.big_blind
        return _ruling(s, push, total, "004 A.g",
                       f"{reason}: a raise is a multiple of the big blind {s.big_blind}, so {total}")
    return _ruling(s, push, target, rule_, reason)


def _ruling(s: Situation, push: Push, total: int, rule_: str, reason: str) -> Ruling:
    """The ruling for *total* (capped at all-in): kind, chips returned or owed."""
    total = min(total, s.all_in_total)
    if total > s.highest_bet:
        kind: Kind = "raise" if s.highest_bet else "bet"
    else:
        kind = "check" if total == s.own_bet else "call"
    added = total - s.own_bet
    return Ruling(kind, total, total == s.all_in_total, max(push.amount - added, 0),
                  max(added - push.amount, 0), rule_, reason)


# -- checks ------------------------------------------------------------------

def _check_situation(s: Situation) -> None:
    if s.street not in _STREETS:
        raise BettingError(f"unknown street {s.street!r}")
    if s.big_blind <= 0:
        raise BettingError(f"big blind {s.big_blind} is not positive")
    for name in ("highest_bet", "own_bet", "stack", "last_increment", "previous_bet"):
        if getattr(s, name) < 0:
            raise BettingError(f"{name} {getattr(s, name)} is negative")
    if s.own_bet > s.highest_bet:
        raise BettingError(f"own bet {s.own_bet} is above the highest bet {s.highest_bet}")
    if s.previous_bet > s.highest_bet:
        raise BettingError(f"previous bet {s.previous_bet} is above the highest bet {s.highest_bet}")


def _check_push(s: Situation, push: Push) -> None:
    if s.stack == 0:
        raise BettingError("the actor is all-in: no chips behind to act with")
    if push.declared not in _DECLARED:
        raise BettingError(f"unknown declaration {push.declared!r}")
    if any(chip <= 0 for chip in push.chips):
        raise BettingError(f"chip values must be positive: {push.chips}")
    if push.amount > s.stack:
        raise BettingError(f"{push.amount} pushed but only {s.stack} behind")
    if push.declared_amount is not None and push.declared_amount <= 0:
        raise BettingError(f"declared amount {push.declared_amount} is not positive")
