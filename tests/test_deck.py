"""Deck registration: files, validation, the registry, and `tablectl calibrate deck` against the simulated shoe."""
import json
import os
import random
import subprocess
import sys
import tty

import pytest

from calibration.deck import Deck, DeckError, Registry, load_deck, load_decks
from drivers.emulated.shoe import SimShoe
from firmware_host.observations import DECK

RED = {card: f"04{i:012X}" for i, card in enumerate(DECK, 1)}
BLUE = {card: f"{0xB0000000 + i:08X}" for i, card in enumerate(DECK, 1)}


def write(directory, name, data):
    path = directory / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def deck_file(deck="red-1", back="red", cards=None):
    return {"format": "pokertable-deck/1", "deck": deck, "back": back, "cards": dict(RED if cards is None else cards)}


# -- files ----------------------------------------------------------------------------------

def test_a_deck_saves_and_loads_back(tmp_path):
    path = Deck("red-1", "red", RED).save(tmp_path / "decks")
    assert path.name == "deck-red-1.json"
    deck = load_deck(path)
    assert deck == Deck("red-1", "red", RED) and deck.uids[RED["As"]] == "As"
    assert list(deck.cards) == list(DECK)


def test_a_missing_card_is_named_with_the_file(tmp_path):
    cards = dict(RED)
    del cards["Qh"]
    path = write(tmp_path, "deck-red-1.json", deck_file(cards=cards))
    with pytest.raises(DeckError, match=r"deck-red-1.json: deck 'red-1': cards: missing Qh$"):
        load_deck(path)


def test_a_repeated_card_is_named(tmp_path):
    text = json.dumps(deck_file()).replace('"3c": "04000000000002"', '"3c": "04000000000002", "3c": "04000000009999"')
    path = write(tmp_path, "deck-red-1.json", text)
    with pytest.raises(DeckError, match=r"deck-red-1.json: 3c: appears twice"):
        load_deck(path)


def test_a_repeated_uid_is_named(tmp_path):
    cards = dict(RED, Kd=RED["As"])
    path = write(tmp_path, "deck-red-1.json", deck_file(cards=cards))
    with pytest.raises(DeckError, match=r"deck-red-1.json: deck 'red-1': cards.As: UID 04000000000034 is already "
                                        r"cards.Kd"):
        load_deck(path)


@pytest.mark.parametrize("uid, key", [("ZZ000000", "cards.5h"), ("0102", "cards.5h"), (42, "cards.5h")])
def test_an_unreadable_uid_is_named(tmp_path, uid, key):
    path = write(tmp_path, "deck-red-1.json", deck_file(cards=dict(RED, **{"5h": uid})))
    with pytest.raises(DeckError, match=rf"deck-red-1.json: deck 'red-1': {key}: not a tag UID"):
        load_deck(path)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(cards={**d["cards"], "1x": "01020304"}), r"cards.1x: not a card"),
    (lambda d: d.pop("back"), r"back: missing"),
    (lambda d: d.update(back=" "), r"back: the back colour is required"),
    (lambda d: d.update(deck="../etc"), r"deck: bad deck id"),
    (lambda d: d.update(format="v0"), r"format: expected"),
    (lambda d: d.update(colour="red"), r"colour: unknown key"),
    (lambda d: d.update(cards=[1, 2]), r"cards: expected an object"),
])
def test_bad_keys_are_named(tmp_path, change, message):
    data = deck_file()
    change(data)
    path = write(tmp_path, "deck-x.json", data)
    with pytest.raises(DeckError, match=rf"deck-x.json: .*{message}"):
        load_deck(path)


def test_unreadable_files_are_named(tmp_path):
    with pytest.raises(DeckError, match=r"deck-a.json: not JSON"):
        load_deck(write(tmp_path, "deck-a.json", "{nope"))
    with pytest.raises(DeckError, match=r"deck-none.json: cannot read"):
        load_deck(tmp_path / "deck-none.json")


# -- the registry -----------------------------------------------------------------------------

def test_two_decks_card_wrong_back_and_foreign():
    registry = Registry([Deck("red-1", "red", RED), Deck("blue-1", "blue", BLUE)])
    assert registry.in_play == "red-1"
    found = registry.lookup(RED["Ts"].lower())
    assert (found.kind, found.card, found.deck) == ("card", "Ts", "red-1")
    found = registry.lookup(BLUE["Ts"])
    assert (found.kind, found.card, found.deck) == ("wrong-back", "Ts", "blue-1")
    assert registry.lookup("0499999999999A").kind == "foreign"
    registry.use("blue-1")                       # the next hand is dealt with the blue deck
    assert registry.lookup(BLUE["Ts"]).kind == "card" and registry.lookup(RED["Ts"]).kind == "wrong-back"
    with pytest.raises(DeckError, match="in_play: no deck 'green'"):
        registry.use("green")


def test_the_first_card_drawn_after_new_hand_puts_its_deck_in_play():
    """002 C.1: the decks alternate between hands. Only the shoe's first card of a hand decides;
    a card of the other deck after it is a wrong-back card; one deck alone never switches."""
    registry = Registry([Deck("red-1", "red", RED), Deck("blue-1", "blue", BLUE)])
    assert registry.draw(BLUE["As"]).kind == "wrong-back"      # no new hand yet: red stays in play
    registry.next_hand()
    assert registry.lookup(BLUE["Ks"]).kind == "wrong-back"    # a zone's read decides nothing
    assert registry.draw("04DEADBEEF0001").kind == "foreign"   # nor a foreign tag
    found = registry.draw(BLUE["As"])
    assert (found.kind, found.card, registry.in_play) == ("card", "As", "blue-1")
    assert registry.draw(RED["Ks"]).kind == "wrong-back"       # later in the hand: the other back
    registry.next_hand()
    assert registry.draw(RED["Qs"]).kind == "card" and registry.in_play == "red-1"
    alone = Registry([Deck("red-1", "red", RED)])
    alone.next_hand()
    assert alone.draw(BLUE["As"]).kind == "foreign" and alone.in_play == "red-1"


def test_the_registry_refuses_decks_a_table_cannot_tell_apart():
    red = Deck("red-1", "red", RED)
    with pytest.raises(DeckError, match=r"deck 'red-2': back: 'Red' is also the back of deck 'red-1'"):
        Registry([red, Deck("red-2", "Red", BLUE)])
    with pytest.raises(DeckError, match=r"deck 'blue-1': cards.As: UID .* is also in deck 'red-1'"):
        Registry([red, Deck("blue-1", "blue", dict(BLUE, As=RED["As"]))])
    with pytest.raises(DeckError, match="registered twice"):
        Registry([red, red])
    green = {card: f"{0xC0000000 + i:08X}" for i, card in enumerate(DECK, 1)}
    with pytest.raises(DeckError, match="one or two decks, not 3"):
        Registry([red, Deck("blue-1", "blue", BLUE), Deck("green-1", "green", green)])


def test_a_registry_from_a_directory(tmp_path):
    Deck("red-1", "red", RED).save(tmp_path)
    Deck("blue-1", "blue", BLUE).save(tmp_path)
    registry = Registry.from_directory(tmp_path, in_play="red-1")
    assert set(registry.decks) == {"red-1", "blue-1"}
    assert Registry.from_directory(tmp_path, ["blue-1"]).in_play == "blue-1"
    assert [d.deck for d in load_decks(tmp_path)] == ["blue-1", "red-1"]
    empty = Registry()
    assert empty.in_play is None and empty.lookup(RED["As"]).kind == "foreign"


# -- tablectl calibrate deck, against the simulated shoe on a pty ---------------------------------

@pytest.fixture
def pty():
    master, slave = os.openpty()
    tty.setraw(slave)
    yield master, os.ttyname(slave)
    os.close(master)
    os.close(slave)


def calibrate(port, directory, *extra, stdin=""):
    return subprocess.Popen(
        [sys.executable, "-m", "firmware_host.cli", "calibrate", "deck", "--port", port, "--deck", "red-1",
         "--back", "red", "--dir", str(directory), *extra],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run(process, stdin=""):
    out, err = process.communicate(stdin, timeout=60)
    return process.returncode, out, err


def test_calibrate_deck_in_deck_order(pty, tmp_path):
    master, port = pty
    with SimShoe(master, heartbeat=0.5) as shoe:
        process = calibrate(port, tmp_path, "--timeout", "10")
        for card in DECK:
            shoe.draw(RED[card], face="down")
        code, out, err = run(process)
    assert code == 0, err
    assert "52 cards registered" in out and "[1/52] pass 2c" in out and "[52/52] pass As" in out
    deck = load_deck(tmp_path / "deck-red-1.json")
    assert deck.back == "red" and dict(deck.cards) == RED


def test_calibrate_deck_named_in_any_order(pty, tmp_path):
    master, port = pty
    order = list(DECK)
    random.Random(7).shuffle(order)
    names = "\n".join(card if i % 3 else card.lower() for i, card in enumerate(order)) + "\n"
    with SimShoe(master, heartbeat=0.5) as shoe:
        process = calibrate(port, tmp_path, "--named", "--timeout", "10")
        for card in order:
            shoe.draw(RED[card])
        code, out, err = run(process, names)
    assert code == 0, err
    assert dict(load_deck(tmp_path / "deck-red-1.json").cards) == RED


def test_calibrate_deck_refuses_missing_repeated_and_unreadable_cards(pty, tmp_path):
    master, port = pty
    with SimShoe(master, heartbeat=0.5) as shoe:
        process = calibrate(port, tmp_path, "--timeout", "1.5")
        for card in DECK[:49]:
            if card == "7d":
                shoe.draw(None)                       # no tag read
            elif card == "9h":
                shoe.draw(RED["8h"])                  # 8h went through again instead of 9h
            else:
                shoe.draw(RED[card])
        code, out, err = run(process)
    assert code == 1
    assert "deck red-1 refused:" in err
    assert "7d: unreadable" in err
    assert f"9h: repeated: same tag {RED['8h']} as 8h" in err
    assert "missing: Qs Ks As" in err
    assert not (tmp_path / "deck-red-1.json").exists()


def test_calibrate_deck_named_refuses_a_card_named_twice_and_a_bad_name(pty, tmp_path):
    master, port = pty
    names = "\n".join(["As", "Zz", "As", *DECK[:-1]]) + "\n"
    with SimShoe(master, heartbeat=0.5) as shoe:
        process = calibrate(port, tmp_path, "--named", "--timeout", "1.5")
        shoe.draw(RED["As"])
        shoe.draw(RED["Ks"])
        for card in DECK[:50]:
            shoe.draw(RED[card])
        code, out, err = run(process, names)
    assert code == 1
    assert "stdin line 2: 'Zz' is not a card" in err
    assert "As: named twice" in err


def test_calibrate_deck_refuses_a_tag_of_another_deck_and_an_existing_file(pty, tmp_path):
    Deck("blue-1", "blue", BLUE).save(tmp_path)
    master, port = pty
    with SimShoe(master, heartbeat=0.5) as shoe:
        process = calibrate(port, tmp_path, "--timeout", "10")
        for card in DECK:
            shoe.draw(BLUE[card] if card == "Jc" else RED[card])
        code, out, err = run(process)
    assert code == 1 and "Jc: tag B000000A is already Jc of deck blue-1" in err
    Deck("red-1", "red", RED).save(tmp_path)
    code, out, err = run(calibrate(port, tmp_path))
    assert code == 2 and "deck-red-1.json exists (use --force" in err
