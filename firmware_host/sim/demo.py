"""A built-in session at a 6-seat table: three hands, one of them with a premature card.

An engine-level session (observations, no raw streams) used by the engine tests. Each line of
:data:`SCRIPT` is one observation, as the drivers would produce it.
"""
from __future__ import annotations

from firmware_host.observations import (
    CardEntered,
    ChipsInZone,
    ConsolePress,
    Declaration,
    MoveButton,
    Observation,
    SeatPresence,
    SetLevel,
)


def _deal(t: float, order: list[int], cards: list[str]) -> list[Observation]:
    """Round-robin deal: shoe draw then the seat's antenna, for each card."""
    obs: list[Observation] = []
    for k, card in enumerate(cards):
        seat = order[k % len(order)]
        obs += [CardEntered(t, "shoe", card), CardEntered(t + 0.2, f"seat:{seat}", card)]
        t += 0.5
    return obs


def _board(t: float, street: str, burn: str, cards: list[str]) -> list[Observation]:
    obs: list[Observation] = [CardEntered(t, "shoe", burn), CardEntered(t + 0.2, "burn", burn)]
    for k, card in enumerate(cards):
        obs += [CardEntered(t + 1 + k, "shoe", card), CardEntered(t + 1.2 + k, f"board:{street}", card)]
    return obs


def _push(t: float, seat: int, *chips: tuple[int, int]) -> ChipsInZone:
    return ChipsInZone(t, f"bet:{seat}", sum(v * n for v, n in chips), tuple(chips))


def _sweep(t: float, *seats: int) -> list[Observation]:
    return [ChipsInZone(t, f"bet:{s}", 0) for s in seats]


def script() -> list[Observation]:
    """The demo session, in time order."""
    obs: list[Observation] = []
    obs += [SeatPresence(0, s, True, player=name, stack=10000)
            for s, name in [(1, "Ana"), (2, "Bob"), (3, "Chloé"), (4, "Dev"), (6, "Eve")]]
    obs += [SetLevel(1, 50, 100, number=1), MoveButton(2, 6), ConsolePress(3, "new-hand")]
    # Hand 1: button 6, SB 1, BB 2. Preflop: 3 raises to 300, 4 folds, 6 calls, 1 folds, 2 calls.
    obs += _deal(10, [1, 2, 3, 4, 6], ["As", "7d", "Kh", "2c", "9s", "Ad", "8d", "Kd", "3c", "9h"])
    obs += [_push(20, 3, (100, 3)), CardEntered(24, "muck", "2c"), CardEntered(24.1, "muck", "3c"),
            _push(30, 6, (100, 3)), CardEntered(33, "muck", "As"), CardEntered(33.1, "muck", "Ad"),
            _push(40, 2, (100, 3))]
    obs += _sweep(45, 1, 2, 3, 6)
    obs += _board(50, "flop", "5c", ["Ks", "8h", "2d"])
    # Flop: 2 checks (confirm), 3 bets a single 500 chip silently (000 §44: a bet of the chip's value),
    # 6 folds, 2 calls.
    obs += [ConsolePress(60, "confirm"), _push(65, 3, (500, 1)), CardEntered(70, "muck", "9s"),
            CardEntered(70.1, "muck", "9h"), _push(75, 2, (100, 5))]
    obs += _sweep(80, 2, 3)
    obs += _board(85, "turn", "4h", ["8s"])
    # Turn: 2 bets 1000 (two 500s), 3 raises to 2500 announced, 2 calls.
    obs += [_push(90, 2, (500, 2)), Declaration(94, 3, "raise"), _push(95, 3, (1000, 2), (500, 1)),
            _push(100, 2, (1000, 2), (500, 1))]
    obs += _sweep(105, 2, 3)
    obs += _board(110, "river", "Jc", ["Qd"])
    # River: both check (the second implied by the confirm), showdown on confirm.
    obs += [ConsolePress(120, "confirm"), ConsolePress(121, "confirm"), ConsolePress(125, "confirm")]
    # Hand 2: button 1, SB 2, BB 3. A flop card is read while seat 2 still has to act: premature.
    obs += [ConsolePress(200, "new-hand")]
    obs += _deal(205, [2, 3, 4, 6, 1], ["Tc", "Th", "6s", "Jd", "Qs", "Ts", "6h", "6d", "Jh", "Qh"])
    obs += [_push(215, 4, (100, 2)), CardEntered(218, "muck", "Jd"), CardEntered(218.1, "muck", "Jh"),
            CardEntered(220, "muck", "Qs"), CardEntered(220.1, "muck", "Qh"),
            CardEntered(225, "board:flop", "4c"), ConsolePress(227, "confirm"),   # the floor's procedure applied
            CardEntered(230, "muck", "Tc"), CardEntered(230.1, "muck", "Ts"), _push(232, 3, (100, 2))]
    obs += _sweep(235, 2, 3, 4)
    obs += _board(240, "flop", "4d", ["4c", "7c", "Ac"])
    obs += [ConsolePress(245, "confirm"), ConsolePress(246, "confirm")]
    obs += _board(250, "turn", "5d", ["2h"])
    obs += [_push(255, 3, (100, 2)), CardEntered(258, "muck", "6s"), CardEntered(258.1, "muck", "6d")]
    return obs
