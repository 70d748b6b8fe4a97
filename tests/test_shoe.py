"""The shoe driver through a real pty, with the simulated shoe (written from the spec) on the other end."""
import binascii
import json
import os
import queue
import re
import subprocess
import sys
import time
import tty
from pathlib import Path

import pytest

from calibration.deck import Deck, Registry
from drivers.emulated import shoe as shoe_sim
from drivers.emulated.shoe import SimShoe
from drivers.shoe import (
    FrameDecoder,
    Shoe,
    ShoeReplay,
    ShoeSession,
    cobs_decode,
    cobs_encode,
    crc16,
    encode_frame,
    load_chunks,
    save_chunks,
)
from firmware_host.observations import (
    DECK,
    CardEntered,
    DeviceFault,
    DeviceRecovered,
    ForeignCard,
    WrongBackCard,
)

SPEC = Path(__file__).resolve().parents[1] / "hardware/shoe-protocol.md"
RED = Deck("red-1", "red", {card: f"04{i:012X}" for i, card in enumerate(DECK, 1)})
BLUE = Deck("blue-1", "blue", {card: f"{0xB0000000 + i:08X}" for i, card in enumerate(DECK, 1)})


def uid(card, deck=RED):
    return deck.cards[card]


def registry():
    return Registry([RED, BLUE], in_play="red-1")


class Pty:
    """A real pty pair: the simulator writes the master, the driver opens the slave's path."""

    def __init__(self):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)              # no echo, no line editing before the driver configures it
        self.path = os.ttyname(self.slave)

    def close(self):
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


@pytest.fixture
def pty():
    pair = Pty()
    yield pair
    pair.close()


def take(shoe, n, timeout=5.0):
    """The next *n* observations (fewer if they do not come within *timeout*)."""
    got, deadline = [], time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        try:
            got.append(shoe.get(timeout=0.05))
        except queue.Empty:
            pass
    return got


def quiet(shoe, seconds=0.3):
    """Nothing more comes within *seconds*."""
    return take(shoe, 1, seconds) == []


def start(pty, **sim):
    """A simulated shoe on the master (heartbeat slow unless asked) and the driver on the slave."""
    sim.setdefault("heartbeat", 10.0)
    shoe = Shoe(pty.path, registry(), read_timeout=0.02)
    simulator = SimShoe(pty.master, **sim)
    assert simulator.wait_acked(5), "hello not acked"
    return shoe, simulator


# -- the spec's numbers ------------------------------------------------------------------

def test_crc_is_ccitt_false_with_the_spec_test_vector():
    assert crc16(b"123456789") == 0x29B1 == shoe_sim.crc_ccitt_false(b"123456789")
    data = os.urandom(300)
    assert crc16(data) == shoe_sim.crc_ccitt_false(data) == binascii.crc_hqx(data, 0xFFFF)


def test_cobs_round_trips_including_long_runs_and_zeros():
    for data in (b"", b"\x00", b"\x00\x00", bytes(range(1, 256)) * 2, b"\x11" * 254, b"\x11" * 253 + b"\x00",
                 os.urandom(1000)):
        encoded = cobs_encode(data)
        assert 0 not in encoded and encoded == shoe_sim.cobs(data)
        assert cobs_decode(encoded) == data


def test_the_worked_examples_of_the_spec_are_what_both_sides_encode():
    text = SPEC.read_text()
    pairs = re.findall(r"decoded: ([0-9A-F ]+)\n(?:.*\n)?wire: +([0-9A-F ]+)\n", text)
    assert len(pairs) == 7
    for decoded, wire in pairs:
        raw, wire = bytes.fromhex(decoded), bytes.fromhex(wire)
        assert encode_frame(raw[0], raw[1], raw[2:-2]) == wire == shoe_sim.frame(raw[0], raw[1], raw[2:-2])
        frame, = FrameDecoder().feed(wire)
        assert (frame.kind, frame.seq, frame.body) == (raw[0], raw[1], raw[2:-2])


# -- the driver on a pty ---------------------------------------------------------------------

def test_draws_become_cards_with_their_face_and_are_acked(pty):
    shoe, sim = start(pty)
    with shoe, sim:
        sim.draw(uid("As"), face="up")
        sim.draw(uid("Td"), face="down")
        sim.draw(uid("2c"), face="unknown")
        got = take(shoe, 3)
        assert [(type(o), o.zone, o.card, o.face_up) for o in got] == [
            (CardEntered, "shoe", "As", True), (CardEntered, "shoe", "Td", False), (CardEntered, "shoe", "2c", None)]
        assert sim.wait_acked()
        assert sim.acks == [0, 1, 2, 3]               # hello, then the three draws
        assert all(isinstance(o.t, float) for o in got) and got[0].t <= got[1].t <= got[2].t
        assert quiet(shoe)
        assert shoe.counters["draws"] == 3 and shoe.counters["crc_errors"] == 0
        assert shoe.session.hello == {"protocol": 1, "firmware": "1.2.3", "shoe_id": 0x1234}


def test_garbage_and_bit_errors_are_counted_dropped_and_later_frames_decoded(pty):
    shoe, sim = start(pty)
    with shoe, sim:
        sim.garbage(b"\x13\x37garbage\x00\xff" * 3 + os.urandom(100) + b"\x00")
        sim.draw(uid("Kh"))
        assert [o.card for o in take(shoe, 1)] == ["Kh"]
        after_garbage = shoe.counters
        assert after_garbage["crc_errors"] + after_garbage["framing_errors"] >= 3
        sim.corrupt_next("flip")                       # the Qs draw is spoilt once, then resent
        sim.draw(uid("Qs"))
        assert [o.card for o in take(shoe, 1)] == ["Qs"]
        assert quiet(shoe)
        counters = shoe.counters
        assert counters["crc_errors"] + counters["framing_errors"] == \
            after_garbage["crc_errors"] + after_garbage["framing_errors"] + 1
        assert counters["draws"] == 2 and counters["duplicates"] == 0


def test_truncated_frames_are_dropped_and_the_card_still_arrives_by_resend(pty):
    shoe, sim = start(pty)
    with shoe, sim:
        sim.corrupt_next("truncate")
        sim.draw(uid("9c"))
        sim.draw(uid("8c"))
        assert [o.card for o in take(shoe, 2)] == ["9c", "8c"]
        assert quiet(shoe)
        counters = shoe.counters
        assert counters["crc_errors"] + counters["framing_errors"] >= 1


def test_a_duplicate_frame_is_acked_again_and_ignored(pty):
    shoe, sim = start(pty)
    with shoe, sim:
        sim.corrupt_next("duplicate")
        sim.draw(uid("Jh"), face="up")
        assert [o.card for o in take(shoe, 1)] == ["Jh"]
        assert quiet(shoe)
        assert shoe.counters["duplicates"] == 1
        assert sim.acks.count(1) == 2                  # both copies acked


def test_a_sequence_gap_is_a_possibly_missed_card(pty):
    shoe, sim = start(pty)
    with shoe, sim:
        sim.draw(uid("5s"))
        assert sim.wait_acked()
        sim.skip(2)
        sim.draw(uid("6s"))
        got = take(shoe, 3)
        assert isinstance(got[0], CardEntered) and got[0].card == "5s"
        assert isinstance(got[1], DeviceFault) and got[1].fault == "possibly-missed-card"
        assert "from 1 to 4" in got[1].detail and "2 frame(s) missed" in got[1].detail
        assert isinstance(got[2], CardEntered) and got[2].card == "6s"
        assert shoe.counters["gaps"] == 1


def test_sequence_numbers_wrap_from_255_to_0_without_a_gap(pty):
    shoe, sim = start(pty)
    with shoe, sim:
        for i in range(300):
            sim.draw(uid(DECK[i % 52]))
        got = take(shoe, 300, timeout=20)
        assert [o.card for o in got] == [DECK[i % 52] for i in range(300)]
        assert shoe.counters["gaps"] == 0 and shoe.counters["duplicates"] == 0


def test_silence_is_a_heartbeat_timeout_then_recovery(pty):
    shoe = Shoe(pty.path, registry(), heartbeat_timeout=0.3, read_timeout=0.02)
    with shoe, SimShoe(pty.master, heartbeat=0.1) as sim:
        assert sim.wait_acked()
        assert quiet(shoe, 0.5)                        # heartbeats keep it alive
        sim.silence(1.0)
        fault, recovered = take(shoe, 2, timeout=3)
        assert isinstance(fault, DeviceFault) and fault.fault == "heartbeat-timeout" and fault.device == "shoe"
        assert isinstance(recovered, DeviceRecovered) and recovered.t - fault.t > 0.4
        sim.draw(uid("Ah"))
        assert [o.card for o in take(shoe, 1)] == ["Ah"]


def test_cable_pulled_and_put_back(tmp_path):
    link = tmp_path / "ttyShoe"
    first = Pty()
    link.symlink_to(first.path)
    shoe = Shoe(str(link), registry(), backoff=(0.05, 0.2), read_timeout=0.02)
    sim = SimShoe(first.master, heartbeat=0.2)
    try:
        assert sim.wait_acked()
        sim.draw(uid("3h"))
        assert [o.card for o in take(shoe, 1)] == ["3h"]

        sim.close()                                    # pull the cable: the port vanishes
        first.close()
        link.unlink()
        fault, = take(shoe, 1)
        assert isinstance(fault, DeviceFault) and fault.fault == "disconnected"
        assert quiet(shoe, 0.8)                        # retried with back-off, reported once
        assert not shoe.connected

        second = Pty()                                 # put it back (a new tty, as USB gives)
        link.symlink_to(second.path)
        sim = SimShoe(second.master, heartbeat=0.2)    # the shoe powered up again: hello
        got = take(shoe, 2, timeout=5)
        assert isinstance(got[0], DeviceRecovered) and "opened" in got[0].detail
        assert isinstance(got[1], DeviceFault) and got[1].fault == "possibly-missed-card"
        assert "restarted" in got[1].detail
        sim.draw(uid("4h"), face="up")
        assert [(o.card, o.face_up) for o in take(shoe, 1)] == [("4h", True)]
        assert shoe.counters["reconnects"] == 1
    finally:
        sim.close()
        shoe.close()
        first.close()
        if "second" in locals():
            second.close()


def test_a_port_missing_at_start_is_reported_and_opened_when_it_appears(tmp_path):
    link = tmp_path / "ttyShoe"
    with Shoe(str(link), registry(), backoff=(0.05, 0.1)) as shoe:
        fault, = take(shoe, 1)
        assert fault.fault == "disconnected" and "cannot open" in fault.detail
        pair = Pty()
        try:
            link.symlink_to(pair.path)
            with SimShoe(pair.master, heartbeat=10) as sim:
                recovered, = take(shoe, 1)
                assert isinstance(recovered, DeviceRecovered)
                sim.draw(uid("Ks"))
                assert [o.card for o in take(shoe, 1)] == ["Ks"]
        finally:
            pair.close()


def test_foreign_wrong_back_and_unreadable_cards(pty):
    shoe, sim = start(pty)
    with shoe, sim:
        sim.draw("0499999999999A")
        sim.draw(uid("7d", BLUE), face="up")
        sim.draw(None, face="down")
        sim.draw(uid("7d"))
        a, b, c, d = take(shoe, 4)
        assert a == ForeignCard(a.t, "shoe", "0499999999999A")
        assert b == WrongBackCard(b.t, "shoe", "7d", "blue-1")
        assert isinstance(c, DeviceFault) and c.fault == "unreadable-card"
        assert isinstance(d, CardEntered) and d.card == "7d"


def test_shoe_fault_frames_become_faults_with_the_code_name(pty):
    shoe, sim = start(pty)
    with shoe, sim:
        sim.fault("antenna-open")
        sim.fault("antenna-open", raised=False)
        sim.fault(0x42)
        a, b, c = take(shoe, 3)
        assert isinstance(a, DeviceFault) and a.fault == "antenna-open"
        assert isinstance(b, DeviceRecovered) and "antenna-open cleared" in b.detail
        assert isinstance(c, DeviceFault) and c.fault == "shoe-fault-0x42"


def test_the_replay_gives_the_observations_of_the_live_run(pty, tmp_path):
    chunks, live = [], []
    shoe = Shoe(pty.path, registry(), read_timeout=0.02, heartbeat_timeout=0.3,
                recorder=lambda t, data: chunks.append((t, data)), on_observation=live.append)
    time.sleep(0.5)                                    # the shoe is silent from the start: a timeout
    with shoe, SimShoe(pty.master, heartbeat=0.1) as sim:
        sim.garbage(os.urandom(50) + b"\x00")
        sim.draw(uid("As"), face="up")
        sim.corrupt_next("duplicate")
        sim.draw(uid("Ks", BLUE))
        sim.skip(1)
        sim.corrupt_next("flip")
        sim.draw("DEADBEEF")
        sim.draw(uid("Qs"), face="down")
        assert sim.wait_acked()
        sim.silence(0.6)
        time.sleep(1.0)
        sim.draw(uid("Js"))
        assert sim.wait_acked()
        time.sleep(0.1)
    kinds = [type(o).__name__ for o in live]
    assert kinds.count("CardEntered") == 3 and "ForeignCard" in kinds and "WrongBackCard" in kinds
    assert kinds.count("DeviceRecovered") == 2         # both silences were seen and ended
    path = tmp_path / "shoe.jsonl"
    save_chunks(path, chunks)
    with ShoeReplay(load_chunks(path), registry(), heartbeat_timeout=0.3) as replay:
        assert list(replay) == live
        assert replay.counters == {**shoe.counters, "acks_sent": replay.counters["acks_sent"]}


def test_observations_go_to_a_callback_whose_errors_do_not_stop_the_driver(pty):
    seen = []

    def consumer(obs):
        seen.append(obs)
        raise RuntimeError("consumer bug")

    with Shoe(pty.path, registry(), on_observation=consumer) as shoe, SimShoe(pty.master, heartbeat=10) as sim:
        sim.draw(uid("2d"))
        sim.draw(uid("3d"))
        assert sim.wait_acked()
        time.sleep(0.1)
        assert [o.card for o in seen] == ["2d", "3d"]
    shoe.close()                                       # idempotent


def test_iteration_ends_when_the_shoe_is_closed(pty):
    with SimShoe(pty.master, heartbeat=10) as sim:
        shoe = Shoe(pty.path, registry())
        sim.draw(uid("Tc"))
        assert sim.wait_acked()
        shoe.close()
        assert [o.card for o in shoe] == ["Tc"]


def test_bad_settings_are_refused_naming_them():
    with pytest.raises(ValueError, match="baudrate"):
        Shoe("/dev/null", registry(), baudrate=0)
    with pytest.raises(ValueError, match="heartbeat_timeout"):
        ShoeSession(registry(), heartbeat_timeout=0)
    with pytest.raises(ValueError, match="backoff"):
        Shoe("/dev/null", registry(), backoff=(1.0, 0.5))


def test_recorded_reads_file_errors_name_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"t": 1.0, "hex": "00"}\n{"t": 2.0, "hex": "zz"}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: not a recorded read"):
        load_chunks(path)


def test_session_core_without_io():
    session = ShoeSession(registry(), heartbeat_timeout=3.0)
    assert session.tick(0.0) == []
    obs, acks = session.feed(shoe_sim.frame(3, 7, shoe_sim.draw_body(uid("Ac"), "up"))[:5], 0.5)
    assert obs == [] and acks == b""                   # half a frame: nothing yet
    obs, acks = session.feed(shoe_sim.frame(3, 7, shoe_sim.draw_body(uid("Ac"), "up"))[5:], 0.6)
    assert obs == [CardEntered(0.6, "shoe", "Ac", True)]
    assert shoe_sim.unframe(acks[:-1]) == (0x81, 0, b"\x07")
    assert session.tick(3.5) == []
    fault, = session.tick(3.7)
    assert fault == DeviceFault(3.7, "shoe", "heartbeat-timeout", "no valid frame for 3.1 s")
    assert session.tick(9.0) == []                     # reported once
    obs, _ = session.feed(shoe_sim.frame(2, 7, bytes(5)), 9.5)
    assert obs == [DeviceRecovered(9.5, "shoe", "frames again")]
    obs, acks = session.feed(shoe_sim.frame(3, 8, b"\x05\x01\x02\x03\x04\x05\x00"), 10.0)   # 5-byte UID
    assert obs[0].fault == "possibly-missed-card" and session.counters["malformed"] == 1
    assert acks                                        # acked all the same: resending cannot fix it


def test_bench_shoe_prints_figures_then_one_json_line():
    done = subprocess.run([sys.executable, "-m", "firmware_host.cli", "bench", "shoe", "--frames", "200"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    figures = json.loads(lines[-1])
    assert figures["bench"] == "shoe" and figures["lost"] == 0 and figures["latency_frames"] == 200
    assert figures["decoder_frames_per_s"] > 0 and figures["driver_frames_per_s"] > 0
    assert 0 < figures["latency_median_ms"] <= figures["latency_p99_ms"]
    assert any(line.startswith("latency") for line in lines[:-1])


def test_a_failing_deck_lookup_is_a_fault_not_a_crash():
    class Broken:
        def lookup(self, uid):
            raise KeyError(uid)

    session = ShoeSession(Broken())
    obs, acks = session.feed(shoe_sim.frame(3, 1, shoe_sim.draw_body(uid("As"))), 1.0)
    assert obs == [DeviceFault(1.0, "shoe", "bad-lookup", f"{uid('As')}: '{uid('As')}'")]
    assert acks
