"""The MFRC522 driver against the register-level emulator (no hardware, no mocks of the driver)."""
from __future__ import annotations

import subprocess
import sys
import types

import pytest
from gpiozero import DigitalOutputDevice
from gpiozero.exc import GPIOPinInUse
from gpiozero.pins.mock import MockFactory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers import mfrc522 as m
from drivers.emulated.mfrc522 import BIT_S, FDT_S, EmulatedTransport, MFRC522Emulator, VirtualClock
from drivers.mfrc522 import MFRC522, ChipFault, ReadError, crc_a, read_address, write_address
from drivers.spi import SpidevTransport

NTAG = "04A1B2C3D4E580"           # 7-byte NXP UID (NTAG / Ultralight): cascade level 2
NTAG2 = "04A1B2C3D4E581"          # differs from NTAG in the very last bit: collides in CL2
CLASSIC = "DEADBEEF"              # 4-byte UID (MIFARE Classic)


def rig(speed_hz=4_000_000, timeout_us=1000, **kwargs):
    clock = VirtualClock()
    emu = MFRC522Emulator(clock)
    transport = EmulatedTransport(emu, speed_hz)
    chip = MFRC522(transport, timeout_us=timeout_us, sleep=clock.sleep, **kwargs)
    return clock, emu, transport, chip


@pytest.fixture
def ready():
    clock, emu, transport, chip = rig()
    assert chip.init() == 0x92
    return clock, emu, chip


def accesses(chip):
    return chip.counts["reads"] + chip.counts["writes"]


# -- wire format and CRC ---------------------------------------------------------

def test_spi_address_bytes_follow_the_datasheet():
    assert read_address(m.VERSION) == 0xEE           # 1 (read) | 0x37 << 1
    assert write_address(m.COMMAND) == 0x02
    assert read_address(m.FIFO_DATA) == 0x92


def test_crc_a_known_vector_and_chip_calccrc_agree(ready):
    _, _, chip = ready
    assert crc_a(b"\x50\x00") == b"\x57\xcd"         # HLTA as every reader sends it
    frame = bytes.fromhex("9370DEADBEEF22")
    assert chip.calc_crc(frame) == crc_a(frame)


def test_init_sets_the_timer_and_antenna(ready):
    _, emu, _ = ready
    assert emu.field_on
    assert emu.timer_s == pytest.approx(1e-3, rel=0.03)


def test_timer_follows_configured_timeout():
    _, emu, _, chip = rig(timeout_us=5000)
    chip.init()
    assert emu.timer_s == pytest.approx(5e-3, rel=0.01)


# -- reading UIDs ------------------------------------------------------------------

def test_reads_a_4_byte_uid(ready):
    _, emu, chip = ready
    emu.place(CLASSIC)
    assert chip.request() == b"\x04\x00"
    tag = chip.select_tag()
    assert (tag.uid_hex, tag.sak) == (CLASSIC, 0x08)


def test_reads_a_full_7_byte_uid_through_cascade_level_2(ready):
    _, emu, chip = ready
    placed = emu.place(NTAG)
    assert chip.request() == b"\x44\x00"
    tag = chip.select_tag()
    assert tag.uid_hex == NTAG and len(tag.uid) == 7 and tag.sak == 0x00
    assert placed.state == "active"


def test_cascade_level_1_alone_is_ct_plus_three_bytes(ready):
    """What the mfrc522 package returns as "the UID" of an NTAG: CT 0x88 and 3 bytes."""
    _, emu, chip = ready
    emu.place(NTAG)
    chip.request()
    assert chip.anticollision(1) == bytes.fromhex("8804A1B2") + bytes((0x88 ^ 0x04 ^ 0xA1 ^ 0xB2,))


def test_reads_a_10_byte_uid_through_cascade_level_3(ready):
    _, emu, chip = ready
    emu.place("04112233445566778899")
    assert chip.scan().tags[0].uid_hex == "04112233445566778899"


def test_empty_antenna_costs_one_timer_timeout_and_few_register_accesses(ready):
    clock, emu, chip = ready
    before, t0, irq_reads = accesses(chip), clock(), emu.reads[m.COM_IRQ]
    assert chip.scan().tags == ()
    assert accesses(chip) - before < 30                      # the mfrc522 package: 2,000 reads
    assert emu.reads[m.COM_IRQ] - irq_reads < 20
    assert 1.0e-3 < clock() - t0 < 1.5e-3                    # REQA on air + the 1 ms timer


def test_a_chip_whose_timer_never_fires_is_a_bounded_fault(ready):
    _, emu, chip = ready
    chip.write(m.T_MODE, 0x00)                               # TAuto off: no TimerIRq, ever
    irq_reads = emu.reads[m.COM_IRQ]
    with pytest.raises(ChipFault) as info:
        chip.request()
    assert info.value.fault == "not-answering"
    assert emu.reads[m.COM_IRQ] - irq_reads == chip.max_wait_reads < 50
    assert chip.counts["fault:not-answering"] == 1


def test_wrong_version_is_a_fault():
    _, emu, _, chip = rig()
    emu.version = 0x12
    with pytest.raises(ChipFault, match="VersionReg 0x12") as info:
        chip.init()
    assert info.value.fault == "bad-version"


def test_dead_chip_is_a_fault_not_a_hang():
    _, emu, _, chip = rig()
    emu.answering = False                                    # MISO reads 0x00
    with pytest.raises(ChipFault, match="VersionReg reads 0x00") as info:
        chip.init()
    assert info.value.fault == "not-answering"


def test_bcc_error_is_detected_and_counted(ready):
    _, emu, chip = ready
    emu.place(NTAG)
    emu.inject("bcc")
    chip.request()
    with pytest.raises(ReadError) as info:
        chip.select_tag()
    assert info.value.kind == "bcc"
    assert chip.counts["error:bcc"] == 1


def test_tag_with_wrong_bcc_is_refused(ready):
    _, emu, chip = ready
    emu.place(CLASSIC, bad_bcc=True)
    with pytest.raises(ReadError, match="BCC"):
        chip.scan()


@pytest.mark.parametrize("kind", ["crc", "parity", "protocol", "overflow"])
def test_frame_errors_raise_read_error(ready, kind):
    _, emu, chip = ready
    emu.place(NTAG)
    emu.inject(kind)
    with pytest.raises(ReadError) as info:
        chip.scan()
    assert info.value.kind == kind
    assert chip.counts[f"error:{kind}"] == 1


def test_tag_lost_mid_anticollision_is_a_read_error(ready):
    _, emu, chip = ready
    emu.place(NTAG)
    chip.request()
    emu.inject("silent")
    with pytest.raises(ReadError, match="left during anticollision"):
        chip.select_tag()


# -- several tags on one antenna ------------------------------------------------------------

def test_two_hole_cards_colliding_in_cascade_level_2(ready):
    _, emu, chip = ready
    emu.place(NTAG)
    emu.place(NTAG2)
    scan = chip.scan(max_tags=4)
    assert sorted(t.uid_hex for t in scan.tags) == [NTAG, NTAG2]
    assert not scan.truncated


def test_halted_tags_answer_again_only_after_the_field_is_cycled(ready):
    _, emu, chip = ready
    emu.place(NTAG)
    emu.place(CLASSIC)
    assert len(chip.scan().tags) == 2
    assert chip.scan().tags == ()                            # both in HALT: REQA wakes none
    chip.antenna(False)
    chip.antenna(True)
    assert len(chip.scan().tags) == 2


def test_more_tags_than_max_tags_is_truncated(ready):
    _, emu, chip = ready
    for uid in (NTAG, NTAG2, CLASSIC):
        emu.place(uid)
    scan = chip.scan(max_tags=2)
    assert len(scan.tags) == 2 and scan.truncated


uids = st.one_of(st.binary(min_size=4, max_size=4).filter(lambda b: b[0] != 0x88),
                 st.binary(min_size=6, max_size=6).map(lambda b: b"\x04" + b))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(uids, min_size=1, max_size=4, unique_by=lambda b: b[:4] if len(b) == 4 else b))
def test_any_set_of_tags_is_read_exactly(found):
    _, emu, _, chip = rig()
    chip.init()
    for uid in found:
        emu.place(uid)
    assert sorted(t.uid for t in chip.scan(max_tags=8).tags) == sorted(found)


# -- timing: air time and SPI as the datasheet says -----------------------------------------

def test_transfer_time_is_bytes_times_8_over_clock():
    clock, _, transport, chip = rig(speed_hz=1_000_000)
    chip.version()
    assert clock() == pytest.approx(2 * 8 / 1e6)
    assert transport.bytes == 2


def test_one_7_byte_tag_costs_its_frames_on_air(ready):
    clock, emu, chip = ready
    emu.place(NTAG)
    t0, air0 = clock(), emu.air_s
    chip.scan()
    # bits on air, each frame with its parity bits, start and end: REQA 7+2 -> ATQA 16+2+2;
    # twice anticollision 16+2+2 -> 40+5+2 and SELECT 72+9+2 -> 24+3+2; HLTA 32+4+2; last REQA 7+2
    bits = (9 + 20) + 2 * ((20 + 47) + (83 + 29)) + 38 + 9
    assert emu.air_s - air0 == pytest.approx(bits * BIT_S + 5 * FDT_S, rel=0.001)
    assert (emu.air_s - air0) + 1.0e-3 < clock() - t0 < (emu.air_s - air0) + 3.5e-3  # + REQA timeout + SPI


# -- pins and the bus: only our own -----------------------------------------------------

def test_reset_pin_pulses_on_init_and_close_releases_only_it():
    factory = MockFactory()
    neighbour = DigitalOutputDevice(17, pin_factory=factory)    # someone else's pin
    clock, emu, transport, chip = rig(reset_pin=25, pin_factory=factory)
    chip.init()
    assert [s.state for s in factory.pin(25).states][-2:] == [False, True]
    chip.close()
    assert transport.closed and not emu.field_on
    again = DigitalOutputDevice(25, pin_factory=factory)       # our pin is free again
    again.close()
    with pytest.raises(GPIOPinInUse):                         # the neighbour's is still taken
        DigitalOutputDevice(17, pin_factory=factory)
    neighbour.on()
    assert factory.pin(17).state
    neighbour.close()
    chip.close()                                              # idempotent


def test_closed_chip_refuses_to_talk():
    _, _, _, chip = rig()
    chip.close()
    with pytest.raises(ValueError, match="closed"):
        chip.version()


def test_hardware_modules_are_not_imported_by_the_package():
    code = ("import sys, drivers.zones, drivers.mfrc522, drivers.emulated.mfrc522, drivers.spi, calibration.readers; "
            "print(sorted({'spidev', 'lgpio', 'RPi'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_spidev_transport_drives_spidev(monkeypatch):
    opened = []

    class FakeSpiDev:
        def open(self, bus, device):
            opened.append((bus, device))

        def xfer2(self, data):
            return [0] + [0x92] * (len(data) - 1)

        def close(self):
            opened.append("closed")

    monkeypatch.setitem(sys.modules, "spidev", types.SimpleNamespace(SpiDev=FakeSpiDev))
    transport = SpidevTransport(0, 1, 2_000_000)
    chip = MFRC522(transport)
    assert chip.version() == 0x92 and opened == [(0, 1)]
    transport.close()
    assert opened[-1] == "closed"


def test_spidev_missing_off_a_pi_is_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "spidev", None)
    with pytest.raises(ImportError):
        SpidevTransport(0, 0)
