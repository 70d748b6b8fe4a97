"""``tablectl doctor``: is this table ready to run? One line per check, ok or the fix.

Each check opens what it checks, looks, closes it and says what it found; a check
that cannot run is a failed check naming why, never a crash. Run it with the
service stopped: it opens the same devices and takes the table's broker account
(docs/deploy.md). The devices are opened through :class:`Openers`, the real ones
by default, emulated ones in the tests.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import ssl
import stat
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpiozero.pins import Factory

    from calibration.wiring import Camera, Wiring
    from drivers.camera import Camera as CameraDevice
    from drivers.mfrc522 import MFRC522
    from firmware_host.service.config import Config

VOLATILE = {"tmpfs", "ramfs", "overlay", "squashfs"}
"""File systems a journal must not be on: gone at power-off, or read-only."""


@dataclass(frozen=True)
class Check:
    """What one check found: *ok*, and what it saw (ok) or what to do (not ok)."""

    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'} {self.name}: {self.detail}"


def _real_readers(wiring: Wiring) -> dict[str, MFRC522]:
    from drivers.zones import open_real
    return open_real(wiring.readers)


def _real_camera(camera: Camera, size: tuple[int, int]) -> CameraDevice:
    from drivers.camera import open_device
    return open_device(camera.index, size)


@dataclass
class Openers:
    """How the doctor opens the devices and reads the kernel's clock state (the real ones by default)."""

    readers: Callable[[Wiring], dict[str, MFRC522]] = _real_readers
    camera: Callable[[Camera, tuple[int, int]], CameraDevice] = _real_camera
    pin_factory: Factory | None = None
    clock_state: Callable[[], int | None] = field(default=lambda: clock_state())


@dataclass
class Doctor:
    """The checks of one table: its config, and with *table_profile* its devices."""

    config_path: Path
    table_profile: Path | None = None
    calibration: Path = Path(".")
    shoe_port: str | None = None
    public_password_file: Path | None = None
    timeout: float = 3.0
    openers: Openers = field(default_factory=Openers)
    uid: int = field(default_factory=os.geteuid)

    def run(self) -> Iterator[Check]:
        """Every check, in order, as it completes."""
        config = yield from self._config()
        if config is not None:
            yield from self._secrets(config)
            yield self._storage(config)
            yield self._disk(config)
        yield self._clock()
        if config is not None:
            yield from self._broker(config)
        if self.table_profile is not None:
            wiring = yield from self._wiring()
            if wiring is not None:
                yield from self._readers(wiring)
                yield self._shoe(self.shoe_port or wiring.shoe.port)
                yield self._console(wiring)
                for camera in wiring.cameras:
                    yield self._camera(camera)

    # -- files -------------------------------------------------------------------------------
    def _config(self) -> Generator[Check, None, Config | None]:
        from firmware_host.configfile import ConfigError
        from firmware_host.rules.profile import resolve_profile
        from firmware_host.service.config import load_config
        try:
            config = load_config(self.config_path)
        except (ConfigError, OSError) as exc:
            yield Check("config", False, f"{exc}: fix that key")
            return None
        yield Check("config", True, f"{self.config_path}: table {config.table}")
        try:
            profile = resolve_profile(config.profile)
        except (ConfigError, OSError, ValueError) as exc:
            yield Check("profile", False, f"{exc}: table.profile must be 000..004 or a profile file")
        else:
            yield Check("profile", True, f"house {profile.id}")
        return config

    def _secrets(self, config: Config) -> Iterator[Check]:
        for key, path in sorted(config.secret_files.items()):
            info = path.stat()
            if info.st_mode & 0o077:
                yield Check(f"secret {key}", False, f"{path} is mode {stat.S_IMODE(info.st_mode):04o}: "
                                                    f"chmod 0600 {path}")
            elif info.st_uid != self.uid:
                yield Check(f"secret {key}", False, f"{path} belongs to uid {info.st_uid}, not the service's "
                                                    f"{self.uid}: chown tablectl {path}")
            else:
                yield Check(f"secret {key}", True, f"{path}: 0600, the service user's")

    def _storage(self, config: Config) -> Check:
        kinds = {_fs_type(p) for p in (config.journal_path.parent, config.outbox_path.parent)}
        bad = kinds & VOLATILE
        if bad:
            return Check("storage", False, f"journal/outbox on {', '.join(sorted(bad))}: lost at power-off; "
                                           f"put them on a persistent partition (docs/deploy.md)")
        return Check("storage", True, f"journal and outbox on {', '.join(sorted(kinds))}")

    def _disk(self, config: Config) -> Check:
        where = _existing(config.outbox_path.parent)
        free = shutil.disk_usage(where).free
        need = 2 * config.outbox_max_bytes
        if free < need:
            return Check("disk", False, f"{free / 1e6:.0f} MB free at {where}, the outbox may take "
                                        f"{config.outbox_max_bytes / 1e6:.0f} MB and the journal grows: free space "
                                        f"or lower outbox.max_bytes")
        return Check("disk", True, f"{free / 1e9:.1f} GB free at {where}")

    # -- the host ----------------------------------------------------------------------------
    def _clock(self) -> Check:
        state = self.openers.clock_state()
        if state is None:
            return Check("clock", False, "cannot read the kernel's clock state (adjtimex)")
        if state == 5:      # TIME_ERROR: the kernel is told no time source disciplines the clock
            return Check("clock", False, "not synchronised: event times would drift; enable NTP "
                                         "(timedatectl set-ntp true) and reach the hall's time server")
        return Check("clock", True, f"synchronised ({time.strftime('%Y-%m-%d %H:%M:%S %Z')})")

    # -- the broker ----------------------------------------------------------------------------
    def _broker(self, config: Config) -> Iterator[Check]:
        from firmware_host.mqtt.contract import SECURE_ROOT
        b = config.broker
        loopback = b.host in ("127.0.0.1", "::1", "localhost")
        if not b.tls and not loopback:
            yield Check("broker TLS", False, f"{b.host} without TLS: hole cards would cross the network in "
                                             f"clear; set broker.tls = true and broker.ca_file")
        else:
            yield Check("broker TLS", True, "TLS, the hall's CA" if b.tls else "loopback without TLS")
        table = _Probe(b, b.client_id or f"table-{config.table}", None, None, self.timeout)
        try:
            if not table.connected:
                yield Check("broker account", False, f"{b.username or 'anonymous'} at {b.host}:{b.port}: "
                                                     f"{table.error}: check broker.* and the password file")
                return
            yield Check("broker account", True, f"{b.username or 'anonymous'} connected to {b.host}:{b.port}")
            probe = f"{SECURE_ROOT}/table/{config.table}/doctor"
            public = self._public_reader(config, probe)
            ok, why = table.publish(probe, b'{"doctor":"probe"}')
            yield Check("broker publish", ok, f"its own tree ({probe}) accepted" if ok else
                        f"{probe} refused ({why}): the broker's ACL must let {b.username} write its topics")
            yield public.result() if isinstance(public, _PublicWatch) else public
        finally:
            table.close()

    def _public_reader(self, config: Config, probe: str) -> _PublicWatch | Check:
        name = "broker secure tree"
        if self.public_password_file is None:
            return Check(name, False, "not checked: give --public-password-file (the `public` account's password) "
                                      "to prove it cannot read hole cards")
        try:
            password = self.public_password_file.read_text().strip()
        except OSError as exc:
            return Check(name, False, f"cannot read {self.public_password_file}: {exc.strerror}")
        watch = _PublicWatch(config.broker, password, probe, self.timeout)
        if not watch.connected:
            watch.close()
            return Check(name, False, f"the public account cannot connect ({watch.error}): check its password")
        return watch

    # -- devices -------------------------------------------------------------------------------
    def _wiring(self) -> Generator[Check, None, Wiring | None]:
        from calibration.wiring import load_wiring
        from firmware_host.configfile import ConfigError
        assert self.table_profile is not None
        try:
            wiring = load_wiring(self.table_profile)
        except (ConfigError, OSError) as exc:
            yield Check("table profile", False, f"{exc}: fix that key")
            return None
        yield Check("table profile", True, f"{self.table_profile}: {len(wiring.readers.readers)} readers, "
                                           f"{len(wiring.cameras)} camera(s)")
        return wiring

    def _readers(self, wiring: Wiring) -> Iterator[Check]:
        from drivers.mfrc522 import KNOWN_VERSIONS
        try:
            chips = self.openers.readers(wiring)
        except Exception as exc:  # noqa: BLE001 - whatever the bus says, it is the line's reason
            yield Check("readers", False, f"cannot open the SPI readers ({exc}): is the overlay loaded "
                                          f"(dtoverlay=tablectl-spi0-cs, reboot)?")
            return
        try:
            for r in wiring.readers.readers:
                where = f"/dev/spidev{r.bus}.{r.cs}" + (f", CS GPIO{r.cs_gpio}" if r.cs_gpio is not None else "")
                try:
                    version = chips[r.id].version()
                except Exception as exc:  # noqa: BLE001
                    yield Check(f"reader {r.id}", False, f"{r.zone} ({where}): {exc}")
                    continue
                if version in KNOWN_VERSIONS:
                    yield Check(f"reader {r.id}", True, f"{r.zone}: VersionReg 0x{version:02X} "
                                                        f"({KNOWN_VERSIONS[version]})")
                else:
                    yield Check(f"reader {r.id}", False, f"{r.zone} ({where}): VersionReg reads 0x{version:02X}, "
                                                         f"no MFRC522 answers: check its wiring (hardware/wiring/)")
        finally:
            for chip in chips.values():
                chip.close()

    def _shoe(self, port: str) -> Check:
        from drivers.shoe import Shoe
        shoe = Shoe(port, _NoDecks(), backoff=(0.1, 0.5))
        try:
            deadline = time.monotonic() + self.timeout
            while time.monotonic() < deadline and shoe.session.hello is None:
                time.sleep(0.05)
            hello, frames = shoe.session.hello, shoe.counters["frames"]
        finally:
            shoe.close()
        if hello is not None:
            return Check("shoe", True, f"{port}: hello, protocol {hello['protocol']}, firmware {hello['firmware']}, "
                                       f"shoe id 0x{int(hello.get('shoe_id', 0)):08X}")
        if frames:
            return Check("shoe", False, f"{port}: {frames} frame(s) but no hello: unplug and replug the shoe")
        return Check("shoe", False, f"{port}: no frame in {self.timeout:g} s: is the shoe plugged in and powered? "
                                   f"(ls -l /dev/serial/by-id/; the table profile's [shoe] port)")

    def _console(self, wiring: Wiring) -> Check:
        from gpiozero import LED, Button, Buzzer
        opened: list[Any] = []
        try:
            buttons = {}
            for name, pin in wiring.console.buttons.items():
                buttons[name] = Button(pin, pin_factory=self.openers.pin_factory)
                opened.append(buttons[name])
            outputs = [wiring.console.alert_led, wiring.console.chips_led]
            opened += [LED(p, pin_factory=self.openers.pin_factory) for p in outputs if p is not None]
            opened.append(Buzzer(wiring.console.buzzer, pin_factory=self.openers.pin_factory))
            stuck = [name for name, button in buttons.items() if button.is_pressed]
        except Exception as exc:  # noqa: BLE001 - a pin in use, no GPIO chip: the line says which
            return Check("console", False, f"cannot claim the console pins ({exc}): is another program on them?")
        finally:
            for device in opened:
                device.close()
        if stuck:
            return Check("console", False, f"button(s) {', '.join(stuck)} read pressed with nobody on them: "
                                           f"stuck, or wired to the wrong pin (hardware/wiring/)")
        pins = len(wiring.console.buttons) + 2 + (wiring.console.chips_led is not None)
        return Check("console", True, f"{pins} pins claimed, every button released")

    def _camera(self, camera: Camera) -> Check:
        from calibration.geometry import pose_error
        from firmware_host.vision.feed import load_camera_calibration
        name = f"camera {camera.name}"
        table = self.calibration / f"camera-{camera.name}-table.json"
        try:
            calib, _ = load_camera_calibration(table, self.calibration / f"camera-{camera.name}-chips.json")
        except ValueError as exc:
            return Check(name, False, f"{exc}: calibrate it (tablectl calibrate table / chips)")
        try:
            device = self.openers.camera(camera, calib.image_size)
        except OSError as exc:
            return Check(name, False, f"{exc} ({camera.connector}): is it connected and enabled?")
        try:
            frame = next((item[1] for item in (device.read() for _ in range(10)) if item is not None), None)
        finally:
            device.close()
        if frame is None:
            return Check(name, False, f"/dev/video{camera.index} opened but gave no frame: check its cable")
        error, found = pose_error(frame, calib)
        if error is None:
            return Check(name, False, f"{found} calibration marker(s) seen, 2 needed: clear the markers, check "
                                      f"the focus and the light")
        if error > MOVED_PX:
            return Check(name, False, f"markers {error:.1f} px from where calibrated: the camera moved; "
                                      f"recalibrate (tablectl calibrate table)")
        return Check(name, True, f"/dev/video{camera.index}: {found} markers within {error:.1f} px of the "
                                 f"calibration")


MOVED_PX = 4.0
"""Markers further than this from their calibrated place: the camera moved (its zones are off)."""


class _NoDecks:
    """The doctor only waits for the shoe's hello: any card it reads is nobody's."""

    def lookup(self, uid: str) -> Any:
        from calibration.deck import Lookup
        return Lookup("foreign")


def _fs_type(path: Path) -> str:
    """The file system type of *path* (its nearest existing parent), from the mount table."""
    target = str(_existing(path).resolve())
    best, kind = "", "unknown"
    with open("/proc/self/mountinfo", encoding="utf-8") as mounts:
        for line in mounts:
            fields = line.split()
            point = fields[4].replace("\\040", " ")
            fstype = fields[fields.index("-") + 1]
            if (target == point or target.startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
                best, kind = point, fstype
    return kind


def _existing(path: Path) -> Path:
    while not path.exists():
        path = path.parent
    return path


def clock_state() -> int | None:
    """The kernel's clock state from ``adjtimex(2)`` (read-only): 5 (TIME_ERROR) when unsynchronised."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    timex = ctypes.create_string_buffer(512)          # struct timex, modes = 0: read only
    state = int(libc.adjtimex(timex))
    return None if state < 0 else state


class _Probe:
    """A short MQTT 5 connection with the table's account: connected?, can it publish?"""

    def __init__(self, broker: Any, client_id: str, username: str | None, password: str | None,
                 timeout: float) -> None:
        from firmware_host.mqtt.publisher import broker_client
        self.timeout = timeout
        self.error = "no answer"
        self._connack = threading.Event()
        self._acks: dict[int, Any] = {}
        self._acked = threading.Condition()
        self.client = broker_client(broker, client_id, username, password)
        self.client.on_connect = self._on_connect
        self.client.on_publish = self._on_publish
        self.connected = False
        try:
            self.client.connect(broker.host, broker.port, 10)
        except (OSError, ssl.SSLError, ValueError) as exc:
            self.error = str(exc)
            return
        self.client.loop_start()
        self._connack.wait(timeout)

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        self.connected = not reason.is_failure
        self.error = "" if self.connected else f"refused: {reason}"
        self._connack.set()

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason: Any, props: Any) -> None:
        with self._acked:
            self._acks[mid] = reason
            self._acked.notify_all()

    def publish(self, topic: str, payload: bytes) -> tuple[bool, str]:
        """QoS 1: True if the broker acknowledged with success."""
        info = self.client.publish(topic, payload, qos=1)
        with self._acked:
            self._acked.wait_for(lambda: info.mid in self._acks, self.timeout)
            reason = self._acks.get(info.mid)
        if reason is None:
            return False, f"no PUBACK in {self.timeout:g} s"
        return (not reason.is_failure), str(reason)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class _PublicWatch(_Probe):
    """The ``public`` account subscribed to the secure tree: is it refused, and does the probe reach it?"""

    def __init__(self, broker: Any, password: str, probe: str, timeout: float) -> None:
        self.probe = probe
        self.granted: list[Any] = []
        self.received: list[str] = []
        self._subacked = threading.Event()
        super().__init__(broker, f"doctor-public-{os.getpid()}", "public", password, timeout)
        self.client.on_subscribe = self._on_subscribe
        self.client.on_message = lambda c, u, m: self.received.append(m.topic)
        if self.connected:
            self.client.subscribe(probe.rsplit("/", 1)[0] + "/#", qos=1)
            self._subacked.wait(timeout)

    def _on_subscribe(self, client: Any, userdata: Any, mid: int, reasons: list[Any], props: Any) -> None:
        self.granted = list(reasons)
        self._subacked.set()

    def result(self) -> Check:
        time.sleep(min(self.timeout, 1.0))         # the table's probe had time to arrive
        self.close()
        name = "broker secure tree"
        if self.received:
            return Check(name, False, f"the public account received {self.received[0]}: hole cards are readable; "
                                      f"fix the broker's ACL (hardware/mosquitto/acl.example)")
        refused = bool(self.granted) and all(r.is_failure for r in self.granted)
        return Check(name, True, "the public account cannot read it (" +
                     ("subscription refused" if refused else "the probe did not reach it") + ")")
