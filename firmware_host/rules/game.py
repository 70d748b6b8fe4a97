"""Our adapter over pokerkit: one hand of No-Limit Hold'em, addressed by seat.

pokerkit knows player indices in position order; the table knows seats. This
module maps one to the other, feeds pokerkit only the cards actually observed
(it never deals or burns by itself), turns every pokerkit warning into an
error (a duplicate card is refused, not warned about), and reads back the
pots, side pots, showdown order and hand evaluation.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from pokerkit import Automation, Card, Mode, NoLimitTexasHoldem, State
from pokerkit.state import ChipsPushing, HoleCardsShowingOrMucking

from firmware_host.events import Pot

STREETS = ("preflop", "flop", "turn", "river")

_AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.RUNOUT_COUNT_SELECTION,
    Automation.CHIPS_PULLING,
)


class GameError(ValueError):
    """pokerkit refused an operation (illegal action, duplicate card...)."""


@contextmanager
def _strict() -> Iterator[None]:
    """Run pokerkit with warnings as errors, and its errors as GameError."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            yield
        except (ValueError, UserWarning) as exc:
            raise GameError(str(exc)) from None


@dataclass(frozen=True)
class PotResult(Pot):
    """One pot pushed by pokerkit, and the odd chips it withheld from the split (004 B.b)."""

    withheld: int


class Game:
    """One hand in pokerkit, addressed by seat number.

    *order* is the dealt-in seats in position order (first seat left of the
    button first, button last; heads-up: big blind, then button).
    """

    def __init__(
        self,
        order: Sequence[int],
        stacks: Mapping[int, int],
        *,
        small_blind: int,
        big_blind: int,
        has_small_blind: bool,
        ante: int = 0,
        big_blind_ante: int = 0,
        divmod: Callable[[int, int], tuple[int, int]],
    ) -> None:
        self.order = tuple(order)
        self.index = {seat: i for i, seat in enumerate(self.order)}
        count = len(self.order)
        heads_up = count == 2
        if heads_up or has_small_blind:
            blinds: tuple[int, ...] = (small_blind, big_blind)
            bb_index = 0 if heads_up else 1
        else:
            blinds = (big_blind,)
            bb_index = 0
        antes: int | dict[int, int] = {bb_index: big_blind_ante} if big_blind_ante else ante
        self.big_blind = big_blind
        self._ranks: dict[tuple[int, int], str] = {}
        with _strict():
            self.state: State = NoLimitTexasHoldem.create_state(
                _AUTOMATIONS,
                not big_blind_ante,
                antes,
                blinds + (0,) * (count - len(blinds)),
                big_blind,
                tuple(stacks[s] for s in self.order),
                count,
                mode=Mode.TOURNAMENT,
                divmod=divmod,
            )

    # -- reading ---------------------------------------------------------
    def seat_of(self, index: int | None) -> int | None:
        return None if index is None else self.order[index]

    @property
    def actor(self) -> int | None:
        """The seat in turn to act, or None."""
        return self.seat_of(self.state.actor_index)

    @property
    def street(self) -> str:
        index = self.state.street_index
        return STREETS[index] if index is not None else "showdown"

    @property
    def over(self) -> bool:
        return not self.state.status

    @property
    def in_hand(self) -> tuple[int, ...]:
        """Seats still holding live cards."""
        return tuple(s for s, live in zip(self.order, self.state.statuses) if live)

    def bet(self, seat: int) -> int:
        return self.state.bets[self.index[seat]]

    def stack(self, seat: int) -> int:
        return self.state.stacks[self.index[seat]]

    def stacks(self) -> dict[int, int]:
        return dict(zip(self.order, self.state.stacks))

    def hole(self, seat: int) -> tuple[str, ...]:
        return tuple(repr(c) for c in self.state.hole_cards[self.index[seat]])

    @property
    def board(self) -> tuple[str, ...]:
        return tuple(repr(cards[0]) for cards in self.state.board_cards)

    @property
    def expects_hole(self) -> bool:
        return self.state.hole_dealee_index is not None

    @property
    def expects_burn(self) -> bool:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.state.can_burn_card()

    @property
    def board_count_expected(self) -> int:
        """How many board cards pokerkit expects now (0 if none)."""
        return self.state.board_dealing_count or 0 if self.state.can_deal_board() else 0

    @property
    def showdown_seat(self) -> int | None:
        return self.seat_of(self.state.showdown_index)

    @property
    def all_in_runout(self) -> bool:
        """True when betting is over because at most one player can still bet (000 §16)."""
        return self.state.all_in_status

    def can_check(self, seat: int) -> bool:
        return self.actor == seat and self.state.checking_or_calling_amount == 0

    def may_raise(self) -> bool:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                self.state._verify_completion_betting_or_raising()  # noqa: SLF001 - pokerkit's own rule check
            except (ValueError, UserWarning):
                return False
        return True

    @property
    def last_increment(self) -> int:
        return max(self.state.completion_betting_or_raising_amount, 0)

    @property
    def last_full_bet(self) -> int:
        """The highest bet of the round not counting short all-ins on top of it (000 §47A)."""
        return max(self.state.bets) - sum(self.state.consecutive_short_all_in_amounts)

    def rank(self, seat: int) -> str:
        """The best hand of *seat* with the board, e.g. ``'Flush (AsKsQsJs9s)'``."""
        key = (seat, len(self.state.board_cards))
        if key not in self._ranks:              # hand evaluation is the dear part: once per board size
            hand = self.state.get_hand(self.index[seat], 0, 0)
            self._ranks[key] = "" if hand is None else str(hand)
        return self._ranks[key]

    # -- acting ----------------------------------------------------------
    def deal_hole(self, seat: int, card: str) -> None:
        with _strict():
            self.state.deal_hole(card, self.index[seat])

    def burn(self, card: str | None) -> None:
        with _strict():
            self.state.burn_card(card or "??")

    def deal_board(self, cards: Sequence[str]) -> None:
        with _strict():
            self.state.deal_board("".join(cards))

    def replace_hole_card(self, seat: int, old: str, new: str) -> None:
        """Swap an exposed hole card for its replacement (002 C.2). pokerkit has no operation for a
        card taken back, so its card lists are edited here, and only here."""
        cards = self.state.hole_cards[self.index[seat]]
        cards[[repr(c) for c in cards].index(old)] = self._swap(old, new)

    def _swap(self, old: str, new: str) -> Card:
        """*old* goes back to pokerkit's deck (it will be burned), *new* leaves it."""
        (old_card,), (new_card,) = Card.clean(old), Card.clean(new)
        deck = self.state.deck_cards
        if new_card in deck:
            deck.remove(new_card)
        deck.append(old_card)
        return new_card

    def replace_board_card(self, old: str, new: str) -> None:
        """Put *new* on the board in place of *old* (000 §39: the four-card flop's random burn)."""
        for spot in self.state.board_cards:
            if repr(spot[0]) == old:
                spot[0] = self._swap(old, new)
                return
        raise GameError(f"{old} is not on the board")

    def fold(self) -> None:
        """Fold the actor. A fold when a check was possible still kills the hand (000 §58):
        pokerkit refuses it in tournament mode, so it is made in cash-game mode."""
        state = self.state
        if state.actor_index is not None and state.bets[state.actor_index] >= max(state.bets):
            others = [i for i in state.player_indices
                      if i != state.actor_index and state.statuses[i] and state.stacks[i]]
            if not others:
                raise GameError("the last player able to bet cannot fold facing no bet: the pots he "
                                "contested would have no one left to win them; check")
            state.mode = Mode.CASH_GAME
            try:
                with _strict(), warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message="There is no reason for this player to fold")
                    state.fold()
            finally:
                state.mode = Mode.TOURNAMENT
            return
        with _strict():
            state.fold()

    def kill(self, seat: int) -> None:
        """*seat*'s hand is dead, in turn or not (a wrong number of cards after substantial action:
        000 §38, 003 art. 78): its cards are mucked, its chips stay in the pot. pokerkit folds only
        the actor, so a seat out of turn leaves the betting here, and only here."""
        state, i = self.state, self.index[seat]
        if not state.statuses[i]:
            raise GameError(f"seat {seat} has no live hand")
        if sum(state.statuses) <= 2 and not state.actor_indices:
            raise GameError(f"seat {seat} is one of the last two hands and no betting round is open: "
                            "the TD awards the pot")
        if i == state.actor_index:
            return self.fold()
        betting = bool(state.actor_indices)
        if i in state.actor_indices:
            state.actor_indices.remove(i)
        state._muck_hole_cards(i)
        if betting:
            state._update_betting()         # the last live hand left wins: the round ends

    def check_or_call(self) -> None:
        with _strict():
            self.state.check_or_call()

    def raise_to(self, total: int) -> None:
        """Bet or raise to *total*, which :mod:`.betting` ruled legal under the house's minimum. Where that
        minimum is below the TDA's that pokerkit applies (004 'Règles du jeu' 5: any multiple of the big
        blind above the bet), pokerkit's last increment is lowered to let it, here and only here."""
        state = self.state
        floor = state.min_completion_betting_or_raising_to_amount
        if floor is not None and max(state.bets) < total < floor:
            state.completion_betting_or_raising_amount = total - max(state.bets)
        with _strict():
            state.complete_bet_or_raise_to(total)

    def show(self, show: bool) -> HoleCardsShowingOrMucking:
        with _strict():
            return self.state.show_or_muck_hole_cards(show)

    @property
    def pots_due(self) -> bool:
        """True when the betting and showdown are over and the pots are to be pushed."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.state.can_kill_hand() or self.state.can_push_chips()

    def push_pots(self) -> list[PotResult]:
        """Push every pot to its winners (pokerkit decides), in pot order."""
        before = [(pot.amount, pot.player_indices) for pot in self.state.pots]
        showdown = len(self.in_hand) > 1
        ranks = {seat: self.rank(seat) if showdown else "" for seat in self.in_hand}
        results = []
        with _strict():
            while self.state.can_kill_hand():     # hands that cannot win any pot
                self.state.kill_hand()
            # Killing merges pots whose contenders became the same: keep each pot's eligible seats
            # from before (pokerkit drains the pots as it pushes them, so read them now).
            pots, k = [], 0
            for pot in self.state.pots:
                eligible, total = before[k][1], 0
                while total < pot.amount:
                    total += before[k][0]
                    k += 1
                pots.append((pot.amount, eligible))
            while self.state.can_push_chips():
                op: ChipsPushing = self.state.push_chips()
                amount, eligible = pots[op.pot_index]
                winners = tuple(i for i, a in enumerate(op.amounts) if a)
                results.append(PotResult(
                    pot=op.pot_index,
                    amount=amount,
                    seats=tuple(self.order[i] for i in eligible),
                    winners=tuple(self.order[i] for i in winners),
                    amounts=tuple(op.amounts[i] for i in winners),
                    ranks=tuple(ranks[self.order[i]] for i in winners),
                    withheld=amount - sum(op.amounts),
                ))
        return results
