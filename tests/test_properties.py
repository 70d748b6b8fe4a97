"""Properties over random hands (hypothesis): chips are conserved, no card is accepted twice."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_host import events as ev
from firmware_host.observations import DECK, CardEntered, ConsolePress
from firmware_host.rules.chips import breakdown, chip_list
from table import Table

CHIPS = (25, 100, 500, 1000, 5000)


@st.composite
def hands(draw):
    players = draw(st.integers(2, 6))
    seats = sorted(draw(st.lists(st.integers(1, 10), min_size=players, max_size=players, unique=True)))
    stacks = {s: 25 * draw(st.integers(2, 800)) for s in seats}
    button = draw(st.sampled_from(seats))
    deck = draw(st.permutations(DECK))
    choices = draw(st.lists(st.tuples(st.sampled_from(["fold", "check", "push", "push", "all-in"]),
                                      st.integers(1, 400), st.booleans()), min_size=60, max_size=60))
    profile = draw(st.sampled_from(["000", "001", "003"]))
    return stacks, button, deck, choices, profile


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands())
def test_chips_are_conserved_in_every_hand(hand):
    stacks, button, deck, choices, profile = hand
    table = Table(stacks, button=button, blinds=(25, 50), profile=profile, chip_unit=25)
    table.new_hand()
    engine = table.engine
    started = table.events[-1]
    cards = iter(deck)
    table.deal({s: next(cards) + next(cards) for s in started.seats})
    streets = iter([("flop", 3), ("turn", 1), ("river", 1)])
    for kind, size, declared in choices:
        if not engine.in_hand:
            break
        game = engine.hand.game
        seat = game.actor
        if seat is None:
            if game.showdown_seat is not None:
                table.confirm()
                continue
            street, count = next(streets)
            table.board(street, "".join(next(cards) for _ in range(count)), burn=next(cards))
            continue
        if kind == "fold":
            table.fold(seat)
        elif kind == "check":
            table.confirm()
        else:
            stack = game.stack(seat)
            amount = stack if kind == "all-in" else min(stack, 25 * size)
            table.push(seat, *chip_list(breakdown(amount, CHIPS)), declared="raise" if declared else None)
    while engine.in_hand:     # finish: everyone left checks or folds
        game = engine.hand.game
        if game.actor is not None:
            if game.can_check(game.actor):
                table.confirm()
            else:
                table.fold(game.actor)
        elif game.showdown_seat is not None:
            table.confirm()
        else:
            street, count = next(streets)
            table.board(street, "".join(next(cards) for _ in range(count)), burn=next(cards))
    ended = table.ended()
    assert sum(ended.stacks) + ended.carried == sum(stacks.values())
    assert all(s >= 0 for s in ended.stacks)
    for award in table.awards():
        assert sum(award.amounts) == award.amount   # none of these profiles carries odd chips
    # every ruling of the betting rules is an action pokerkit accepts
    assert not [e.procedure for e in table.events if isinstance(e, ev.Irregularity)
                and e.irregularity == "push-refused"]


zones = st.sampled_from(["shoe", "seat:1", "seat:2", "seat:3", "seat:7", "board:flop", "board:turn",
                         "board:river", "burn", "muck"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(zones, st.sampled_from(DECK[:20]) | st.sampled_from(DECK)), min_size=1, max_size=120),
       st.lists(st.booleans(), min_size=120, max_size=120))
def test_never_accepts_a_card_twice_nor_a_53rd(reads, confirms):
    table = Table({1: 5000, 2: 5000, 3: 5000}, button=3)
    table.new_hand()
    for (zone, card), confirm in zip(reads, confirms):
        table.feed(CardEntered(table.tick(), zone, card))
        if confirm:
            table.feed(ConsolePress(table.tick(), "confirm"))
    accepted = []
    for e in table.events:
        if isinstance(e, (ev.HoleCardDealt, ev.CardBurned)):
            accepted.append(e.card)
        elif isinstance(e, ev.BoardDealt):
            accepted.extend(e.cards)
    assert len(accepted) == len(set(accepted)) <= 52
    hole = [e for e in table.events if isinstance(e, ev.HoleCardDealt)]
    for seat in (1, 2, 3):
        assert sum(e.seat == seat for e in hole) <= 2
