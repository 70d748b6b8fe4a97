"""``tablectl doctor`` against the emulated devices and a real broker running the shipped config (issue 17)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from gpiozero.pins.mock import MockFactory, MockPin

from calibration.geometry import calibrate_table, load_layout
from calibration.wiring import load_wiring
from drivers.camera import open_replay
from drivers.emulated.mfrc522 import VirtualClock
from drivers.emulated.shoe import SimShoe
from drivers.zones import open_emulated
from firmware_host.service.doctor import Doctor, Openers
from firmware_host.sim.render import HOUSE_004
from firmware_host.vision import counter as vision
from mqtt_helpers import MOSQUITTO_DIR, Broker, make_certificates

ROOT = Path(__file__).parents[1]
TABLE = ROOT / "hardware" / "tables" / "demo-10.toml"
DATA = ROOT / "tests" / "data" / "vision"
TABLECTL = Path(sys.executable).with_name("tablectl")


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    """The shipped broker config, ACL and passwords, over TLS."""
    d = tmp_path_factory.mktemp("hall")
    ca, cert, key = make_certificates(d / "certs")
    broker = Broker(d / "broker", config=MOSQUITTO_DIR / "mosquitto.conf.example", acl_file=MOSQUITTO_DIR /
                    "acl.example", password_file=MOSQUITTO_DIR / "passwd.example", tls=(ca, cert, key)).start()
    yield broker, ca
    broker.stop()


def table_config(tmp_path: Path, port: int, ca: Path, password: str = "example-table-t1") -> Path:
    """The example config a technician copies, with /etc/tablectl and /var/lib/tablectl moved into *tmp_path*."""
    etc = tmp_path / "etc"
    etc.mkdir(parents=True, exist_ok=True)
    text = (MOSQUITTO_DIR / "table.example.toml").read_text()
    text = text.replace("/etc/tablectl/", f"{etc}/").replace("/var/lib/tablectl/", f"{tmp_path}/data/")
    text = text.replace('host = "broker.hall.local"', 'host = "127.0.0.1"').replace("port = 8883", f"port = {port}")
    text = text.replace(f"{etc}/hall-ca.crt", str(ca))
    for name, secret in (("mqtt-password", password), ("command-key", "k" * 32), ("public-password",
                                                                                 "example-public")):
        (etc / name).write_text(secret + "\n")
        (etc / name).chmod(0o600)
    (etc / "table.toml").write_text(text)
    return etc / "table.toml"


def camera_calibration(tmp_path: Path) -> tuple[Path, Path]:
    """The right camera calibrated as an installer does, and a video of what it sees now."""
    layout = load_layout(ROOT / "hardware" / "camera" / "table8.toml").view("right")
    image = cv2.imread(str(DATA / "table_right.jpg"))
    calib = calibrate_table(image, layout)
    models = vision.learn_chips(calib, {v: cv2.imread(str(DATA / f"chips_right_{v}.jpg")) for v in HOUSE_004})
    calibration = tmp_path / "calibration"
    calibration.mkdir()
    calib.save(calibration / "camera-right-table.json")
    models.save(calibration / "camera-right-chips.json")
    return calibration, image


def video(path: Path, frame: np.ndarray) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 10, (frame.shape[1], frame.shape[0]))
    for _ in range(3):
        writer.write(frame)
    writer.release()
    return path


class ShortedToGround(MockPin):
    """A button line shorted to ground: it reads low whatever the pull-up."""

    def _set_pull(self, value):
        super()._set_pull(value)
        self.drive_low()


class Bench:
    """The table's devices, emulated: readers at register level, a shoe on a pty, mock pins, a recorded camera."""

    def __init__(self, tmp_path: Path, frame: np.ndarray, versions: dict[str, int] | None = None,
                 hello: bool = True) -> None:
        self.master, slave = os.openpty()
        self.port = os.ttyname(slave)
        self.slave = slave
        self.shoe = SimShoe(self.master, hello=hello)
        self.video = video(tmp_path / "right.mp4", frame)
        self.versions = versions or {}
        self.factory = MockFactory()

    def readers(self, wiring):
        chips, emulators = open_emulated(wiring.readers, VirtualClock())
        for zone, version in self.versions.items():
            emulators[zone].version = version
        return chips

    def camera(self, camera, size):
        if camera.name != "right":
            raise OSError(f"cannot open camera device {camera.index}")
        return open_replay(str(self.video), start=time.monotonic())

    def openers(self, clock: int = 0) -> Openers:
        return Openers(self.readers, self.camera, self.factory, lambda: clock)

    def close(self) -> None:
        self.shoe.close()
        os.close(self.master)
        os.close(self.slave)


def one_camera_profile(tmp_path: Path) -> Path:
    """demo-10 with only the right camera (the test data calibrates that one)."""
    text = TABLE.read_text()
    left = text.index("[[cameras]]\nname = \"left\"")
    path = tmp_path / "demo-10.toml"
    path.write_text(text[:left])
    return path


def lines(doctor: Doctor) -> dict[str, tuple[bool, str]]:
    return {check.name: (check.ok, check.detail) for check in doctor.run()}


def test_a_healthy_table_passes_every_check(tmp_path, hall):
    broker, ca = hall
    calibration, image = camera_calibration(tmp_path)
    bench = Bench(tmp_path, image)
    try:
        doctor = Doctor(table_config(tmp_path, broker.port, ca), one_camera_profile(tmp_path), calibration,
                        bench.port, tmp_path / "etc" / "public-password", openers=bench.openers())
        got = lines(doctor)
    finally:
        bench.close()
    failed = {name: detail for name, (ok, detail) in got.items() if not ok}
    assert failed == {}
    assert [f"reader r{n:02d}" for n in range(1, 16)] == [n for n in got if n.startswith("reader ")]
    assert "VersionReg 0x92" in got["reader r01"][1]
    assert "firmware 1.2.3" in got["shoe"][1] and "every button released" in got["console"][1]
    assert "markers within" in got["camera right"][1] and "TLS" in got["broker TLS"][1]
    assert "cannot read it" in got["broker secure tree"][1]
    for name in ("config", "profile", "secret broker.password_file", "secret commands.key_file", "storage", "disk",
                 "clock", "broker account", "broker publish", "table profile"):
        assert name in got


def test_each_fault_is_a_failed_line_with_its_fix(tmp_path, hall):
    broker, ca = hall
    calibration, image = camera_calibration(tmp_path)
    moved = np.roll(image, 25, axis=1)                         # the camera knocked sideways
    bench = Bench(tmp_path, moved, versions={"board:turn": 0x00}, hello=False)
    config = table_config(tmp_path, broker.port, ca)
    (tmp_path / "etc" / "command-key").chmod(0o644)
    bench.factory.pin(6, pin_class=ShortedToGround)             # the confirm button's line: low, pressed
    try:
        got = lines(Doctor(config, one_camera_profile(tmp_path), calibration, bench.port, None,
                           timeout=1.5, openers=bench.openers(clock=5)))
    finally:
        bench.close()
    assert got["secret commands.key_file"] == (False, f"{tmp_path}/etc/command-key is mode 0644: "
                                                      f"chmod 0600 {tmp_path}/etc/command-key")
    assert not got["reader r12"][0] and "VersionReg reads 0x00, no MFRC522 answers" in got["reader r12"][1]
    assert got["reader r11"][0]
    assert not got["shoe"][0] and "no hello: unplug and replug" in got["shoe"][1]      # heartbeats, no hello
    assert got["console"] == (False, "button(s) confirm read pressed with nobody on them: stuck, or wired to the "
                                     "wrong pin (hardware/wiring/)")
    assert not got["camera right"][0] and "the camera moved; recalibrate" in got["camera right"][1]
    assert not got["clock"][0] and "timedatectl set-ntp true" in got["clock"][1]
    assert not got["broker secure tree"][0] and "--public-password-file" in got["broker secure tree"][1]


def test_a_wrong_broker_password_is_named(tmp_path, hall):
    broker, ca = hall
    config = table_config(tmp_path, broker.port, ca, password="not-the-password")
    got = lines(Doctor(config, openers=Openers(clock_state=lambda: 0)))
    ok, detail = got["broker account"]
    assert not ok and detail.startswith(f"table-t1 at 127.0.0.1:{broker.port}: refused: ")
    assert "broker publish" not in got


def test_tablectl_doctor_prints_one_line_per_check_and_fails_without_devices(tmp_path, hall):
    """On this machine (no SPI bus, no shoe): the command runs every check, says what to fix, exits 1."""
    broker, ca = hall
    config = table_config(tmp_path, broker.port, ca)
    done = subprocess.run([str(TABLECTL), "doctor", "--config", str(config), "--devices", str(TABLE),
                           "--shoe", str(tmp_path / "no-shoe"), "--timeout", "1",
                           "--public-password-file", str(tmp_path / "etc" / "public-password")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    out = done.stdout.splitlines()
    assert all(re.match(r"(ok  |FAIL) [a-z][\w .-]*: .+", line) for line in out[:-1]), out
    assert any(line.startswith("ok   broker account: table-t1 connected") for line in out)
    assert any(line.startswith("FAIL readers: cannot open the SPI readers") for line in out)
    assert any(line.startswith("FAIL shoe: ") and "no frame in 1 s" in line for line in out)
    assert re.fullmatch(r"\d+ check\(s\) failed", out[-1])


def test_the_wiring_profile_of_the_doctor_is_the_one_run_loads():
    assert load_wiring(TABLE).shoe.port.startswith("/dev/serial/by-id/")
