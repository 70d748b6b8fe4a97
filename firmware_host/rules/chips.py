"""Chip arithmetic: odd chips in a split pot, and breaking an amount into chips."""
from __future__ import annotations

from collections.abc import Callable, Sequence


def odd_chip_divmod(unit: int, keep_remainder: bool = True) -> Callable[[int, int], tuple[int, int]]:
    """A ``divmod`` for pokerkit that splits a pot in whole chips of *unit*.

    Each share is a multiple of the smallest chip in play; pokerkit gives the
    remainder (the odd chips) to the first winner in position order, the first
    seat left of the button (000 §20A). With ``keep_remainder=False`` the
    remainder is withheld from the split so it can stay in the pot for the next
    hand (004 B.b); the caller carries it over.
    """
    if unit <= 0:
        raise ValueError(f"smallest chip must be positive, not {unit}")

    def split(amount: int, parts: int) -> tuple[int, int]:
        if parts == 1:
            return amount, 0
        share = amount // parts // unit * unit
        remainder = amount - share * parts
        return (share, remainder) if keep_remainder else (share, 0)

    return split


def breakdown(amount: int, denominations: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Break *amount* greedily into ``(denomination, count)`` pairs, largest first.

    Raises ValueError when the smallest denomination cannot make the amount.
    """
    pairs = []
    rest = amount
    for value in sorted(set(denominations), reverse=True):
        count, rest = divmod(rest, value)
        if count:
            pairs.append((value, count))
    if rest:
        raise ValueError(f"{amount} cannot be paid with chips {sorted(denominations)}")
    return tuple(pairs)


def chip_list(pairs: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """One entry per chip, e.g. ``((500, 1), (100, 2))`` -> ``(500, 100, 100)``."""
    return tuple(value for value, count in pairs for _ in range(count))


def subtract(total: Sequence[tuple[int, int]], before: Sequence[tuple[int, int]]) -> tuple[int, ...] | None:
    """The chips in *total* that were not in *before*, or None if some were taken away."""
    counts: dict[int, int] = {}
    for value, count in total:
        counts[value] = counts.get(value, 0) + count
    for value, count in before:
        counts[value] = counts.get(value, 0) - count
    if any(n < 0 for n in counts.values()):
        return None
    return tuple(v for v in sorted(counts, reverse=True) for _ in range(counts[v]))


def added(total: Sequence[tuple[int, int]], before: Sequence[tuple[int, int]],
          before_amount: int) -> tuple[int, ...] | None:
    """The chips pushed on top of what was in a zone, one entry per chip.

    *before* is the zone's last breakdown (empty when unknown, as for a posted
    blind); when it does not fit inside *total*, the smallest chips making up
    *before_amount* are taken as the old ones. None when nothing fits.
    """
    if before:
        new = subtract(total, before)
        if new is not None:
            return new
    chips = sorted(chip_list(total))
    rest = before_amount
    kept = []
    for chip in chips:
        if 0 < chip <= rest:
            rest -= chip
        else:
            kept.append(chip)
    return tuple(sorted(kept, reverse=True)) if rest == 0 else None
