"""House-rules profiles: the five built-in profiles carry the rulebooks' values, bad files are refused."""
from __future__ import annotations

import dataclasses
import tomllib
from importlib import resources
from typing import Literal

import pytest

from firmware_host.configfile import ConfigError
from firmware_host.rules import profile as profile_module
from firmware_host.rules.betting import BettingRules
from firmware_host.rules.profile import (
    Chip,
    Clock,
    Irregularities,
    Level,
    Profile,
    builtin_ids,
    builtin_profile,
    load_profile,
)
from firmware_host.rules.seating import SeatingRules

IDS = ("000", "001", "002", "003", "004")


def builtin_text(profile_id: str) -> str:
    return resources.files("firmware_host.rules").joinpath("profiles", f"{profile_id}.toml").read_text("utf-8")


# -- the built-in profiles --------------------------------------------------

def test_builtin_ids():
    assert builtin_ids() == IDS


@pytest.mark.parametrize("profile_id", IDS)
def test_builtin_profile_loads(profile_id):
    p = builtin_profile(profile_id)
    assert isinstance(p, Profile)
    assert p.id == profile_id
    assert p.rulebook.startswith(profile_id + "_") and p.rulebook.endswith(".txt")
    assert isinstance(p.betting, BettingRules) and isinstance(p.seating, SeatingRules)
    assert [c.value for c in p.chips] == sorted(c.value for c in p.chips)
    assert p.smallest_chip == p.chips[0].value
    assert all(lv.small_blind % p.smallest_chip == 0 for lv in p.levels)
    assert [lv.number for lv in p.levels] == list(range(1, len(p.levels) + 1))


def test_builtin_profile_unknown_id():
    with pytest.raises(ValueError, match="000, 001, 002, 003, 004"):
        builtin_profile("005")
    with pytest.raises(ValueError):
        builtin_profile("../profile")


@pytest.mark.parametrize("profile_id, house", [
    ("000", "RC Poker81"),
    ("001", "Good Fold Poker Club Annecy"),
    ("002", "fripoker.ch"),
    ("003", "Casino de Pougues-les-Eaux"),
    ("004", "RedCactus league / Le Deauville"),
])
def test_house_and_rulebook(profile_id, house):
    p = builtin_profile(profile_id)
    assert p.house == house
    header = builtin_text(profile_id).split("\n\n")[0]
    assert header.startswith("#") and house in header and p.rulebook in header


@pytest.mark.parametrize("profile_id, action, extension", [
    ("000", 25, 5),     # 000 §29
    ("001", 30, 0),     # 001 'Temps de réflexion'
    ("002", 60, 10),    # 002 C.2 'Mains mortes'
    ("003", 45, 0),     # 003 art. 62
    ("004", 60, 0),     # 004 F.a
])
def test_clock(profile_id, action, extension):
    assert builtin_profile(profile_id).clock == Clock(action, extension)


@pytest.mark.parametrize("profile_id, seats", [("000", 10), ("001", 10), ("002", 10), ("003", 10), ("004", 8)])
def test_seats(profile_id, seats):
    assert builtin_profile(profile_id).seats == seats     # 003 art. 7, 004 'Tables mises à disposition'


@pytest.mark.parametrize("profile_id, odd_chip", [
    ("000", "left-of-button"),  # 000 §20A
    ("001", "left-of-button"),  # 001 'Les Jetons indivisibles'
    ("002", "left-of-button"),  # default
    ("003", "left-of-button"),  # default
    ("004", "next-pot"),        # 004 B.b
])
def test_odd_chip(profile_id, odd_chip):
    assert builtin_profile(profile_id).odd_chip == odd_chip


@pytest.mark.parametrize("profile_id, substantial", [
    ("000", "tda-36"), ("001", "tda-36"), ("002", "tda-36"), ("003", "two-actions"), ("004", "tda-36"),
])
def test_substantial_action(profile_id, substantial):
    assert builtin_profile(profile_id).substantial_action == substantial   # 000 §36, 003 art. 47


@pytest.mark.parametrize("profile_id, min_raise, short_raise", [
    ("000", "tda", "fifty-percent"),        # 000 §43A
    ("001", "double", "call"),              # 001 'Les Relances'
    ("002", "tda", "fifty-percent"),        # 002 C.4
    ("003", "double", "fifty-percent"),     # 003 art. 51-52
    ("004", "bb-multiple-above", "call"),   # 004 A.e-g, 'Règles du jeu' 5
])
def test_betting(profile_id, min_raise, short_raise):
    assert builtin_profile(profile_id).betting == BettingRules(min_raise=min_raise, short_raise=short_raise)


@pytest.mark.parametrize("profile_id, new_player, button", [
    ("000", "anywhere", "dead"), ("001", "anywhere", "dead"), ("002", "anywhere", "dead"),
    ("003", "not-button-or-small-blind", "dead"),   # 003 art. 27; art. 80 "virtuellement"
    ("004", "anywhere", "stays"),                   # 004 D.b
])
def test_seating(profile_id, new_player, button):
    assert builtin_profile(profile_id).seating == SeatingRules(dead_button=True, new_player=new_player,
                                                               button_when_small_blind_out=button)


@pytest.mark.parametrize("profile_id, expected", [
    # 000 §35, §37, §68, §39
    ("000", Irregularities("replace-with-burn", "live-penalty", "tda-rp5", "board-stands", "may-receive", False)),
    # 001 'Annonce de sa main'
    ("001", Irregularities("replace-with-burn", "dead", "tda-rp5", "board-stands", "may-receive", False)),
    # 002 C.1-C.3, C.6
    ("002", Irregularities("replace-with-burn", "dead", "discard", "board-stands", "misdeal", True)),
    # 003 art. 48, 76, 77
    ("003", Irregularities("misdeal", "dead-unless-nuts", "art-76", "art-76", "misdeal", False)),
    # 004 H.a, H.b
    ("004", Irregularities("misdeal", "live-penalty", "tda-rp5", "board-stands", "may-receive", False)),
])
def test_irregularities(profile_id, expected):
    assert builtin_profile(profile_id).irregularities == expected


def test_004_chips_structure_and_stack():
    p = builtin_profile("004")
    assert p.chips == (Chip(50, "grey"), Chip(100, "red"), Chip(200, "green"), Chip(500, "blue"),
                       Chip(1000, "black"), Chip(2000, "pink"))
    assert p.smallest_chip == 50
    assert p.starting_stack == 5000 == 4 * 50 + 4 * 100 + 2 * 200 + 2 * 500 + 1000 + 2000
    assert [(lv.small_blind, lv.big_blind, lv.minutes) for lv in p.levels] == [
        (50, 100, 20), (100, 200, 20), (150, 300, 20), (200, 400, 15), (300, 600, 15), (400, 800, 15),
        (500, 1000, 10), (600, 1200, 10), (800, 1600, 10), (1000, 2000, 10), (2000, 4000, 10),
        (3000, 6000, 10), (5000, 10000, 0),
    ]
    assert all(lv.ante == lv.big_blind_ante == 0 for lv in p.levels)


@pytest.mark.parametrize("profile_id, smallest", [("000", 25), ("001", 50), ("002", 50), ("003", 50), ("004", 50)])
def test_smallest_chip(profile_id, smallest):
    """000 §45 Ex-2 and §61 use a 25 chip; 003 art. 33 and 004 start at 50/100."""
    assert builtin_profile(profile_id).smallest_chip == smallest


def test_000_chips_cover_its_examples():
    values = {c.value for c in builtin_profile("000").chips}
    assert {25, 500, 1000} <= values          # 000 §45 Ex-1, Ex-2, §61


def test_003_structure_and_stack():
    p = builtin_profile("003")
    assert p.starting_stack == 10000                                     # 003 art. 30
    assert len(p.levels) == 18 and all(lv.minutes == 20 for lv in p.levels)   # 003 art. 16, 33
    assert p.levels[0] == Level(number=1, small_blind=50, big_blind=100, minutes=20)
    assert (p.levels[6].small_blind, p.levels[6].big_blind) == (600, 1200)
    assert (p.levels[-1].small_blind, p.levels[-1].big_blind) == (50000, 100000)


@pytest.mark.parametrize("profile_id", IDS)
def test_every_field_is_stated(profile_id):
    """No house silently inherits a code default: a field added to a rules class must be decided here."""
    data = tomllib.loads(builtin_text(profile_id))
    for table, cls in [("clock", Clock), ("betting", BettingRules), ("seating", SeatingRules),
                       ("irregularities", Irregularities)]:
        assert set(data[table]) == {f.name for f in dataclasses.fields(cls)}, table
    assert set(data) == {f.name for f in dataclasses.fields(Profile)}


@pytest.mark.parametrize("profile_id", IDS)
def test_every_setting_cites_a_rule(profile_id):
    for line in builtin_text(profile_id).splitlines():
        if "=" in line and not line.lstrip().startswith("#") and not line.rstrip().endswith("["):
            assert "#" in line, line
            comment = line.split("#", 1)[1]
            assert profile_id in comment or "not stated" in comment or "default" in comment, line


# -- validation --------------------------------------------------------------

VALID = """\
id = "t"
house = "Test house"
rulebook = "test.txt"
seats = 9
odd_chip = "left-of-button"
substantial_action = "tda-36"
starting_stack = 3000
chips = [
    { value = 100, colour = "red" },
    { value = 25, colour = "white" },
]
levels = [
    { number = 1, small_blind = 25, big_blind = 50, minutes = 20 },
    { number = 2, small_blind = 50, big_blind = 100, ante = 25, minutes = 20 },
    { number = 3, small_blind = 75, big_blind = 150, big_blind_ante = 150, minutes = 0 },
]

[clock]
action_seconds = 30
extension_seconds = 0

[betting]
min_raise = "tda"
short_raise = "fifty-percent"

[seating]
dead_button = true
new_player = "anywhere"

[irregularities]
exposed_card = "misdeal"
own_exposure = "live-penalty"
premature_card = "tda-rp5"
missed_burn = "board-stands"
button_missing_card = "may-receive"
two_decks = false
"""


@pytest.fixture
def write(tmp_path):
    def write(text: str, name: str = "t.toml"):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path
    return write


def edit(old: str, new: str) -> str:
    assert old in VALID
    return VALID.replace(old, new, 1)


def refused(path, key: str, reason: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_profile(path)
    error = info.value
    assert (error.file, error.key) == (path.name, key), str(error)
    assert reason in error.reason, str(error)
    assert str(error).startswith(f"{path.name}: {key}: ")
    return error


def test_valid_file_loads(write):
    p = load_profile(write(VALID))
    assert p.chips == (Chip(25, "white"), Chip(100, "red"))      # sorted by value
    assert p.smallest_chip == 25
    assert p.levels[1] == Level(number=2, small_blind=50, big_blind=100, ante=25, minutes=20)
    assert p.levels[2].big_blind_ante == 150 and p.levels[2].minutes == 0
    assert p.clock.total_seconds == 30
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.seats = 4


def test_error_message_format(write):
    error = refused(write(edit('min_raise = "tda"', 'min_raise = "triple"'), "000.toml"),
                    "betting.min_raise", "")
    assert str(error) == ("000.toml: betting.min_raise: 'triple' is not one of "
                          "'tda', 'double', 'bb-multiple', 'bb-multiple-above'")
    assert isinstance(error, ValueError)


@pytest.mark.parametrize("old, new, key", [
    ('seats = 9', 'seats = 9\ncolor = "red"', "color"),
    ('min_raise = "tda"', 'min_raise = "tda"\nmax_raises = 3', "betting.max_raises"),
    ('dead_button = true', 'dead_button = true\nbutton = 1', "seating.button"),
    ('action_seconds = 30', 'action_seconds = 30\ntime_bank = 60', "clock.time_bank"),
    ('two_decks = false', 'two_decks = false\nfouled = "void"', "irregularities.fouled"),
    ('{ value = 25, colour = "white" }', '{ value = 25, colour = "white", rfid = 1 }', "chips[1].rfid"),
    ('big_blind = 50, minutes', 'big_blind = 50, straddle = 100, minutes', "levels[0].straddle"),
    ('[betting]', '[tournament]\nname = "x"\n\n[betting]', "tournament"),
])
def test_unknown_key(write, old, new, key):
    refused(write(edit(old, new)), key, "unknown key")


def test_unknown_key_lists_the_fields(write):
    error = refused(write(edit('min_raise = "tda"', 'min_raise = "tda"\nmin_rase = "tda"')),
                    "betting.min_rase", "unknown key")
    assert "min_raise" in error.reason and "short_raise" in error.reason


@pytest.mark.parametrize("old, new, key, reason", [
    ('seats = 9', 'seats = "nine"', "seats", "expected an integer, not a string ('nine')"),
    ('seats = 9', 'seats = 9.0', "seats", "expected an integer"),
    ('seats = 9', 'seats = true', "seats", "expected an integer, not a boolean"),
    ('two_decks = false', 'two_decks = 0', "irregularities.two_decks", "expected a boolean"),
    ('house = "Test house"', 'house = 81', "house", "expected a string"),
    ('[clock]\naction_seconds = 30\nextension_seconds = 0', 'clock = 30', "clock", "expected a table"),
    ('{ value = 100, colour = "red" },\n    { value = 25, colour = "white" },',
     '100, 25', "chips[0]", "expected a table"),
    ('odd_chip = "left-of-button"', 'odd_chip = 1', "odd_chip", "1 is not one of"),
])
def test_wrong_type(write, old, new, key, reason):
    refused(write(edit(old, new)), key, reason)


def test_chips_must_be_an_array(write):
    text = edit('chips = [\n    { value = 100, colour = "red" },\n    { value = 25, colour = "white" },\n]\n', "")
    text = text.replace("[clock]", "[chips]\nvalue = 25\ncolour = \"white\"\n\n[clock]")
    refused(write(text), "chips", "expected an array, not a table")


@pytest.mark.parametrize("old, new, key, choices", [
    ('odd_chip = "left-of-button"', 'odd_chip = "random"', "odd_chip", "'left-of-button', 'next-pot'"),
    ('substantial_action = "tda-36"', 'substantial_action = "three"', "substantial_action",
     "'tda-36', 'two-actions'"),
    ('short_raise = "fifty-percent"', 'short_raise = "raise"', "betting.short_raise", "'fifty-percent', 'call'"),
    ('new_player = "anywhere"', 'new_player = "big-blind"', "seating.new_player",
     "'not-button-or-small-blind', 'anywhere'"),
    ('exposed_card = "misdeal"', 'exposed_card = "keep"', "irregularities.exposed_card",
     "'misdeal', 'replace-with-burn'"),
    ('own_exposure = "live-penalty"', 'own_exposure = "warn"', "irregularities.own_exposure",
     "'live-penalty', 'dead', 'dead-unless-nuts'"),
    ('premature_card = "tda-rp5"', 'premature_card = "art-77"', "irregularities.premature_card",
     "'tda-rp5', 'art-76', 'discard'"),
    ('missed_burn = "board-stands"', 'missed_burn = "redeal"', "irregularities.missed_burn",
     "'board-stands', 'art-76'"),
])
def test_value_not_a_choice(write, old, new, key, choices):
    refused(write(edit(old, new)), key, "is not one of " + choices)


@pytest.mark.parametrize("seats", [0, 1, 11])
def test_seats_out_of_range(write, seats):
    refused(write(edit("seats = 9", f"seats = {seats}")), "seats", f"{seats} is not in 2..10")


@pytest.mark.parametrize("seats", [2, 10])
def test_seats_bounds(write, seats):
    assert load_profile(write(edit("seats = 9", f"seats = {seats}"))).seats == seats


@pytest.mark.parametrize("old, new, key", [
    ("number = 2,", "number = 1,", "levels[1].number"),                              # number repeats
    ("number = 3,", "number = 2,", "levels[2].number"),
    ("small_blind = 50, big_blind = 100, ante = 25,", "small_blind = 25, big_blind = 50,", "levels[1]"),  # same
    ("small_blind = 75, big_blind = 150,", "small_blind = 25, big_blind = 75,", "levels[2]"),   # smaller blinds
])
def test_levels_not_increasing(write, old, new, key):
    refused(write(edit(old, new)), key, "levels do not increase")


@pytest.mark.parametrize("small, big", [(50, 50), (50, 25)])
def test_big_blind_not_greater_than_small_blind(write, small, big):
    text = edit("small_blind = 25, big_blind = 50,", f"small_blind = {small}, big_blind = {big},")
    refused(write(text), "levels[0].big_blind", f"big blind {big} is not greater than small blind {small}")


def test_level_amount_not_payable(write):
    text = edit("small_blind = 75, big_blind = 150,", "small_blind = 80, big_blind = 160,")
    refused(write(text), "levels[2].small_blind", "80 cannot be paid with the smallest chip 25")
    text = edit("ante = 25,", "ante = 10,")
    refused(write(text), "levels[1].ante", "10 cannot be paid with the smallest chip 25")


@pytest.mark.parametrize("old, new, key, reason", [
    ("action_seconds = 30", "action_seconds = 0", "clock.action_seconds", "0 is not positive"),
    ("extension_seconds = 0", "extension_seconds = -5", "clock.extension_seconds", "-5 is negative"),
    ('house = "Test house"', 'house = " "', "house", "is empty"),
])
def test_bad_scalar(write, old, new, key, reason):
    refused(write(edit(old, new)), key, reason)


def test_starting_stack_not_payable(write):
    refused(write(edit("starting_stack = 3000", "starting_stack = 3010")), "starting_stack",
            "not a positive multiple of the smallest chip 25")


def test_only_the_last_level_may_be_open_ended(write):
    text = edit("ante = 25, minutes = 20", "ante = 25, minutes = 0")
    refused(write(text), "levels[1].minutes", "only the last level may be 0")


def test_empty_levels_and_chips(write):
    levels = VALID[VALID.index("levels = ["):VALID.index("\n[clock]")]
    refused(write(VALID.replace(levels, "levels = []\n")), "levels", "empty")
    chips = VALID[VALID.index("chips = ["):VALID.index("levels = [")]
    refused(write(VALID.replace(chips, "chips = []\n")), "chips", "empty")


@pytest.mark.parametrize("new, key, reason", [
    ('{ value = 100, colour = "white" }', "chips[1].colour", "'white' is not unique"),
    ('{ value = 25, colour = "red" }', "chips[1].value", "25 is not unique"),
    ('{ value = 0, colour = "red" }', "chips[0].value", "0 is not positive"),
    ('{ value = -100, colour = "red" }', "chips[0].value", "-100 is not positive"),
])
def test_bad_chip_set(write, new, key, reason):
    if key.startswith("chips[1]"):     # the second chip repeats the first's value or colour
        text = edit('{ value = 100, colour = "red" },\n    { value = 25, colour = "white" },',
                    '{ value = 25, colour = "white" },\n    ' + new + ',')
    else:
        text = edit('{ value = 100, colour = "red" }', new)
    refused(write(text), key, reason)


@pytest.mark.parametrize("old, key", [
    ('house = "Test house"\n', "house"),
    ("action_seconds = 30\n", "clock.action_seconds"),
    ('min_raise = "tda"\n', None),                                  # has a default in BettingRules
    ("big_blind = 50, minutes = 20 }", "levels[0].minutes"),
    ('[irregularities]\nexposed_card = "misdeal"\nown_exposure = "live-penalty"\npremature_card = "tda-rp5"\n'
     'missed_burn = "board-stands"\nbutton_missing_card = "may-receive"\ntwo_decks = false\n', "irregularities"),
    ('two_decks = false\n', "irregularities.two_decks"),
])
def test_missing_required_key(write, old, key):
    new = "big_blind = 50 }" if old.startswith("big_blind") else ""
    text = VALID.replace(old, new, 1)
    assert text != VALID
    if key is None:
        assert load_profile(write(text)).betting.min_raise == BettingRules().min_raise
    else:
        refused(write(text), key, "missing required key")


def test_not_toml(write):
    path = write("seats = \n", "bad.toml")
    with pytest.raises(ConfigError) as info:
        load_profile(path)
    assert info.value.file == "bad.toml" and info.value.key == ""
    assert str(info.value).startswith("bad.toml: not valid TOML")


def test_new_rules_field_is_picked_up(write, monkeypatch):
    """A field added to BettingRules is a valid [betting] key at once, type-checked, defaulted when absent."""
    @dataclasses.dataclass(frozen=True)
    class Extended(BettingRules):
        single_chip: Literal["call", "raise"] = "call"
        max_raises: int = 0

    monkeypatch.setattr(profile_module, "BettingRules", Extended)
    text = edit('min_raise = "tda"', 'min_raise = "tda"\nsingle_chip = "raise"\nmax_raises = 4')
    assert load_profile(write(text)).betting == Extended("tda", "fifty-percent", "raise", 4)
    assert load_profile(write(VALID)).betting == Extended()
    refused(write(edit('min_raise = "tda"', 'min_raise = "tda"\nsingle_chip = "fold"')),
            "betting.single_chip", "'fold' is not one of 'call', 'raise'")
    refused(write(edit('min_raise = "tda"', 'min_raise = "tda"\nmax_raises = "4"')),
            "betting.max_raises", "expected an integer")
