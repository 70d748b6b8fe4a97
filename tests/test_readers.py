"""Zone readers: the table profile's reader mapping, the debounce, emulated and replayed runs."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from gpiozero import DigitalOutputDevice
from gpiozero.exc import GPIOPinInUse
from gpiozero.pins.mock import MockFactory

from calibration.readers import ReaderTable, load_readers, parse_readers
from drivers.emulated.mfrc522 import VirtualClock
from drivers.zones import (
    PollRecord,
    ZoneReaders,
    ZoneTracker,
    load_records,
    open_emulated,
    replay,
    save_records,
)
from firmware_host.configfile import ConfigError
from firmware_host.observations import (
    CardEntered,
    CardLeft,
    DeviceFault,
    DeviceRecovered,
    ForeignCard,
    WrongBackCard,
)

DEMO = Path(__file__).parent.parent / "hardware" / "tables" / "demo-10.toml"
DECK = {"04000000000001": "As", "04000000000002": "Kd", "04000000000003": "Qh",
        "04000000000004": "Jc", "04000000000005": "Tc", "DEADBEEF": "2s"}
lookup = DECK.get
UID = {card: uid for uid, card in DECK.items()}


def small_table(enter=2, leave=3, **reader_extra) -> ReaderTable:
    return parse_readers({"readers": {
        "enter_polls": enter, "leave_polls": leave,
        "reader": [
            {"id": "a", "zone": "seat:1", "bus": 0, "cs": 0, **reader_extra},
            {"id": "b", "zone": "seat:2", "bus": 0, "cs": 1},
            {"id": "c", "zone": "board:flop", "bus": 1, "cs": 0, "max_tags": 3},
        ]}}, "test.toml")


def emulated(table, **kwargs):
    clock = VirtualClock()
    chips, emus = open_emulated(table, clock, pin_factory=kwargs.pop("pin_factory", None))
    records: list[PollRecord] = []
    readers = ZoneReaders(table, chips, kwargs.pop("lookup", lookup), clock, record=records.append, **kwargs)
    return clock, emus, readers, records


def rounds(readers, n):
    out = []
    for _ in range(n):
        out += readers.poll_round()
    return out


# -- the table profile ---------------------------------------------------------------------

def test_demo_table_maps_every_zone_once():
    table = load_readers(DEMO)
    assert table.name == "demo-10" and len(table.readers) == 15
    zones = [r.zone for r in table.readers]
    assert sorted(zones) == sorted([f"seat:{i}" for i in range(1, 11)]
                                   + ["board:flop", "board:turn", "board:river", "burn", "muck"])
    assert (table.enter_polls, table.leave_polls, table.spi_hz) == (2, 3, 4_000_000)
    assert table.reader("r11").zone == "board:flop"


def good() -> dict:
    return {"readers": {"enter_polls": 2, "leave_polls": 3, "reader": [
        {"id": "r1", "zone": "seat:1", "bus": 0, "cs": 0, "reset_pin": "GPIO25"},
        {"id": "r2", "zone": "muck", "bus": 0, "cs": 1}]}}


def broken(change):
    data = good()
    change(data["readers"], data["readers"]["reader"])
    return data


@pytest.mark.parametrize("change, key, reason", [
    (lambda t, r: t.update(spi_mhz=4), "readers.spi_mhz", "unknown key"),
    (lambda t, r: r[1].update(zne="muck"), "readers.reader[1].zne", "unknown key"),
    (lambda t, r: r[0].update(zone="seat:11"), "readers.reader[0].zone", "seat must be 1..10"),
    (lambda t, r: r[0].update(zone="table"), "readers.reader[0].zone", "bad zone"),
    (lambda t, r: r[0].update(zone="board:preflop"), "readers.reader[0].zone", "bad zone"),
    (lambda t, r: r[0].update(zone="bet:1"), "readers.reader[0].zone", "bad zone"),
    (lambda t, r: r[1].update(cs=0), "readers.reader[1].cs", "bus 0 cs 0 already used by readers.reader[0]"),
    (lambda t, r: r[1].update(zone="seat:1"), "readers.reader[1].zone", "already used"),
    (lambda t, r: r[1].update(id="r1"), "readers.reader[1].id", "already used"),
    (lambda t, r: r[1].update(reset_pin="GPIO25"), "readers.reader[1].reset_pin", "already used"),
    (lambda t, r: t.update(enter_polls=0), "readers.enter_polls", "out of range 1..20"),
    (lambda t, r: t.update(leave_polls=True), "readers.leave_polls", "expected an integer"),
    (lambda t, r: t.update(spi_hz=20_000_000), "readers.spi_hz", "out of range"),
    (lambda t, r: t.update(timeout_us="1ms"), "readers.timeout_us", "expected an integer"),
    (lambda t, r: r[0].update(cs=-1), "readers.reader[0].cs", "out of range"),
    (lambda t, r: r[0].update(max_tags=0), "readers.reader[0].max_tags", "out of range"),
    (lambda t, r: r[0].pop("bus"), "readers.reader[0].bus", "missing"),
    (lambda t, r: t.pop("leave_polls"), "readers.leave_polls", "missing"),
    (lambda t, r: r.clear(), "readers.reader", "no reader"),
])
def test_profile_errors_name_file_key_and_reason(change, key, reason):
    with pytest.raises(ConfigError) as info:
        parse_readers(broken(change), "bad.toml")
    assert info.value.file == "bad.toml" and info.value.key == key
    assert reason in info.value.reason
    assert str(info.value).startswith(f"bad.toml: {key}: ")


def test_profile_file_errors(tmp_path):
    bad = tmp_path / "t.toml"
    bad.write_text("[readers\n")
    with pytest.raises(ConfigError, match="t.toml: not valid TOML"):
        load_readers(bad)
    bad.write_text("name = 'x'\n[shoe]\nport = '/dev/ttyUSB0'\n")
    with pytest.raises(ConfigError, match="t.toml: readers: missing"):
        load_readers(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        load_readers(tmp_path / "none.toml")


def test_other_devices_sections_are_left_to_their_loaders():
    data = good() | {"shoe": {"port": "/dev/ttyUSB0"}}
    assert len(parse_readers(data, "t.toml").readers) == 2


# -- the debounce (pure) --------------------------------------------------------------------

def feed(tracker, *polls):
    out = []
    for t, uids in enumerate(polls):
        rec = uids if isinstance(uids, PollRecord) else PollRecord(float(t), "a", tuple(uids))
        out += tracker.feed(rec)
    return out


def test_enters_after_n_consecutive_polls_and_leaves_after_m_misses():
    tracker = ZoneTracker({"a": "seat:1"}, enter_polls=3, leave_polls=2, lookup=lookup)
    a = UID["As"]
    assert feed(tracker, [a], [a]) == []
    out = feed(tracker, [a], [a], [a], [], [a], [], [])
    assert out == [CardEntered(0.0, "seat:1", "As"), CardLeft(6.0, "seat:1", "As")]


def test_a_miss_before_entering_starts_the_count_again():
    tracker = ZoneTracker({"a": "seat:1"}, enter_polls=2, leave_polls=1, lookup=lookup)
    a = UID["As"]
    assert feed(tracker, [a], [], [a]) == []
    assert tracker.feed(PollRecord(9.0, "a", (a,))) == [CardEntered(9.0, "seat:1", "As")]


def test_read_errors_and_truncated_polls_count_no_miss():
    tracker = ZoneTracker({"a": "seat:1"}, enter_polls=1, leave_polls=1, lookup=lookup)
    a, k = UID["As"], UID["Kd"]
    out = feed(tracker, [a, k], PollRecord(1.0, "a", error="read-error", detail="parity: x"),
               PollRecord(2.0, "a", (k,), truncated=True))
    assert out == [CardEntered(0.0, "seat:1", "As"), CardEntered(0.0, "seat:1", "Kd")]
    assert tracker.feed(PollRecord(3.0, "a", (k,))) == [CardLeft(3.0, "seat:1", "As")]


def test_unknown_uid_is_a_foreign_card_once():
    tracker = ZoneTracker({"a": "muck"}, enter_polls=1, leave_polls=1, lookup=lookup)
    out = feed(tracker, ["04FFFFFFFFFFFF"], ["04FFFFFFFFFFFF"], [])
    assert out == [ForeignCard(0.0, "muck", "04FFFFFFFFFFFF")]
    assert tracker.counts["foreign"] == 1


def test_a_broken_lookup_is_a_fault_not_a_crash():
    def raises(uid):
        raise KeyError(uid)
    for bad, detail in ((raises, "KeyError"), (lambda uid: "Ax", "not a card")):
        tracker = ZoneTracker({"a": "seat:1"}, enter_polls=1, leave_polls=1, lookup=bad)
        [fault] = tracker.feed(PollRecord(1.0, "a", (UID["As"],)))
        assert (fault.device, fault.fault) == ("reader:seat:1", "bad-lookup")
        assert detail in fault.detail or "04000000000001" in fault.detail
        assert tracker.counts["bad-lookup"] == 1
        assert tracker.feed(PollRecord(2.0, "a")) == []         # and no CardLeft for it


def test_deck_registry_lookup_plugs_in_as_is():
    from calibration.deck import Lookup

    answers = {"04000000000001": Lookup("card", "As", "red-1"),
               "04000000000002": Lookup("wrong-back", "Kd", "blue-1"),
               "04000000000003": Lookup("foreign")}
    tracker = ZoneTracker({"a": "seat:1"}, enter_polls=1, leave_polls=1, lookup=answers.__getitem__)
    out = tracker.feed(PollRecord(1.0, "a", tuple(answers)))
    assert out == [CardEntered(1.0, "seat:1", "As"), WrongBackCard(1.0, "seat:1", "Kd", "blue-1"),
                   ForeignCard(1.0, "seat:1", "04000000000003")]
    assert tracker.feed(PollRecord(2.0, "a")) == [CardLeft(2.0, "seat:1", "As")]   # only our deck's card


def test_lookup_may_return_card_and_deck():
    tracker = ZoneTracker({"a": "seat:1"}, enter_polls=1, leave_polls=1, lookup=lambda uid: ("Kd", "red"))
    assert tracker.feed(PollRecord(1.0, "a", (UID["As"],))) == [CardEntered(1.0, "seat:1", "Kd")]


def test_faults_are_reported_once_and_recovered():
    tracker = ZoneTracker({"a": "seat:3"}, enter_polls=1, leave_polls=1, lookup=lookup, errors_for_fault=2)
    down = PollRecord(1.0, "a", error="not-answering", detail="no interrupt")
    out = feed(tracker, down, down, PollRecord(2.0, "a"))
    assert out == [DeviceFault(1.0, "reader:seat:3", "not-answering", "no interrupt"),
                   DeviceRecovered(2.0, "reader:seat:3", "after not-answering")]
    err = PollRecord(3.0, "a", error="read-error", detail="crc: SAK")
    [fault] = feed(tracker, err, err, err)
    assert fault.fault == "read-errors" and "crc: SAK" in fault.detail
    assert tracker.feed(PollRecord(4.0, "nobody")) == [] and tracker.counts["unknown-reader"] == 1


# -- emulated table: the real driver over emulated chips -----------------------------------------

def test_cards_dealt_to_a_seat_and_the_flop_enter_and_leave():
    table = small_table(enter=2, leave=3)
    clock, emus, readers, _ = emulated(table)
    assert readers.poll_round() == []
    emus["seat:1"].place(UID["As"])
    emus["seat:1"].place(UID["Kd"])
    for card in ("Qh", "Jc", "Tc"):
        emus["board:flop"].place(UID[card])
    assert readers.poll_round() == []                           # seen once: N = 2
    second = readers.poll_round()
    assert [(o.zone, o.card) for o in second] == [
        ("seat:1", "As"), ("seat:1", "Kd"), ("board:flop", "Qh"), ("board:flop", "Jc"), ("board:flop", "Tc")]
    assert all(isinstance(o, CardEntered) and 0 < o.t <= clock() for o in second)
    emus["seat:1"].remove(UID["As"])                            # the player mucks one card
    assert rounds(readers, 2) == []
    [left] = readers.poll_round()
    assert left == CardLeft(left.t, "seat:1", "As")
    assert rounds(readers, 3) == []                             # Kd and the flop stay


def test_foreign_tag_on_the_antenna():
    clock, emus, readers, _ = emulated(small_table(enter=1))
    emus["seat:2"].place("04FFFFFFFFFFFF")
    [obs] = readers.poll_round()
    assert obs == ForeignCard(obs.t, "seat:2", "04FFFFFFFFFFFF")


def test_a_dead_reader_is_a_fault_the_others_keep_reading_then_it_recovers():
    table = small_table(enter=1, leave=1)
    clock, emus, readers, _ = emulated(table, retry_s=0.05)
    emus["seat:2"].answering = False
    emus["seat:1"].place(UID["As"])
    out = readers.poll_round()
    assert [type(o) for o in out] == [DeviceFault, CardEntered]
    assert out[0].device == "reader:seat:2" and out[0].fault == "not-answering"
    assert [o for o in rounds(readers, 5) if isinstance(o, DeviceFault)] == []   # reported once
    emus["seat:2"].answering = True
    emus["seat:2"].place(UID["Kd"])
    while clock() < 0.2:
        out = readers.poll_round()
        if out:
            break
    assert [type(o) for o in out] == [DeviceRecovered, CardEntered]
    assert readers.tracker.present("a") == {UID["As"]: "As"}


def test_read_errors_do_not_make_cards_leave():
    table = small_table(enter=1, leave=1)
    clock, emus, readers, _ = emulated(table)
    emus["seat:1"].place(UID["As"])
    assert len(readers.poll_round()) == 1
    emus["seat:1"].inject("parity", times=5)
    out = rounds(readers, 5)
    assert [(o.fault, o.device) for o in out] == [("read-errors", "reader:seat:1")]
    assert readers.tracker.present("a") == {UID["As"]: "As"}
    [back] = readers.poll_round()
    assert back == DeviceRecovered(back.t, "reader:seat:1", "after read-errors")


def test_replay_of_the_recorded_polls_gives_the_same_observations(tmp_path):
    table = small_table(enter=2, leave=2)
    clock, emus, readers, records = emulated(table, retry_s=0.01)
    live = readers.poll_round()
    script = [("seat:1", "place", "As"), ("seat:1", "place", "Kd"), ("board:flop", "place", "Qh"),
              ("seat:2", "place", "04FFFFFFFFFFFF"), ("seat:1", "remove", "As"), ("seat:2", "dead", None),
              ("board:flop", "place", "Jc"), ("seat:2", "alive", None), ("board:flop", "parity", None)]
    for zone, action, what in script:
        emu = emus[zone]
        if action == "place":
            emu.place(UID.get(what, what))
        elif action == "remove":
            emu.remove(UID[what])
        elif action in ("dead", "alive"):
            emu.answering = action == "alive"
        else:
            emu.inject(action)
        live += rounds(readers, 3)
    assert {type(o).__name__ for o in live} >= {"CardEntered", "CardLeft", "ForeignCard", "DeviceFault",
                                                 "DeviceRecovered"}
    save_records(tmp_path / "polls.jsonl", records)
    assert replay(load_records(tmp_path / "polls.jsonl"), table, lookup) == live


def test_bad_recorded_lines_are_skipped_and_counted(tmp_path):
    path = tmp_path / "polls.jsonl"
    path.write_text('{"t": 1, "reader": "a", "uids": ["04000000000001"]}\n'
                    'not json\n{"t": 2, "reader": "a", "colour": "red"}\n{"reader": "a"}\n'
                    '{"t": 3, "reader": "a", "error": "fire"}\n\n'
                    '{"t": 4, "reader": "a", "uids": "04000000000001"}\n')
    counts = Counter()
    records = load_records(path, counts)
    assert counts["bad-record"] == 4 and len(records) == 2
    assert replay(records, small_table(enter=2), lookup) == [CardEntered(4.0, "seat:1", "As")]


def test_close_releases_only_the_readers_own_pins():
    factory = MockFactory()
    other = DigitalOutputDevice(17, pin_factory=factory)
    table = small_table(reset_pin=25)
    clock, emus, readers, _ = emulated(table, pin_factory=factory)
    readers.poll_round()
    readers.close()
    DigitalOutputDevice(25, pin_factory=factory).close()
    with pytest.raises(GPIOPinInUse):
        DigitalOutputDevice(17, pin_factory=factory)
    other.close()


# -- timing of the demo table at its SPI clock ---------------------------------------------------

def test_demo_table_round_timing():
    table = load_readers(DEMO)
    clock, emus, readers, records = emulated(table)
    readers.poll_round()
    t0 = clock()
    readers.poll_round()
    empty = clock() - t0
    assert 15 * 1.0e-3 < empty < 15 * 1.4e-3                   # 15 x (REQA + 1 ms timer + SPI)
    for seat in range(1, 11):
        emus[f"seat:{seat}"].place(f"04{seat:02X}0000000001")
        emus[f"seat:{seat}"].place(f"04{seat:02X}0000000002")
    for i, zone in enumerate(("board:flop", "board:flop", "board:flop", "board:turn", "board:river")):
        emus[zone].place(f"04EE00000000{i:02X}")
    rounds(readers, 2)
    t0 = clock()
    entered = readers.poll_round()
    full = clock() - t0
    assert entered == []
    # 10 seats x 2 tags (~12 ms), flop 3 tags (~18 ms), turn and river (~6 ms), burn and muck empty
    assert 0.13 < full < 0.18
    seat_poll = [r.duration for r in records[-15:] if r.reader == "r01"][0]
    assert 10e-3 < seat_poll < 14e-3                            # two 7-byte tags + final REQA timeout


# -- why the field is cycled ------------------------------------------------------------------

def test_without_field_cycling_halted_tags_would_seem_to_leave():
    clock, emus, readers, _ = emulated(small_table(enter=1, leave=2), field_cycle=False)
    emus["seat:1"].place(UID["As"])
    out = rounds(readers, 3)
    assert out == [CardEntered(out[0].t, "seat:1", "As"), CardLeft(out[1].t, "seat:1", "As")]


def test_field_is_back_on_long_enough_for_tags_to_power_up_on_the_demo_table():
    """Each reader's field comes back on half a round before its poll: on the demo table
    (15 readers, empty polls of ~1.2 ms) that is > 5 ms, the ISO/IEC 14443 power-up time."""
    table = load_readers(DEMO)
    clock, emus, readers, _ = emulated(table)
    for emu in emus.values():
        emu.powerup_s = 5e-3
    readers.poll_round()
    emus["seat:7"].place(UID["As"])
    emus["burn"].place(UID["Kd"])
    out = rounds(readers, 2)
    assert sorted((o.zone, o.card) for o in out) == [("burn", "Kd"), ("seat:7", "As")]


def test_a_reader_with_the_wrong_version_register_is_a_fault():
    clock, emus, readers, _ = emulated(small_table(enter=1))
    emus["board:flop"].version = 0x12
    out = readers.poll_round()
    assert [(o.device, o.fault) for o in out] == [("reader:board:flop", "bad-version")]
    assert "0x12" in out[0].detail
