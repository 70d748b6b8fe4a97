"""The table's wiring: every device and the Pi pin or port it is on, from the table profile.

The same file the controller loads its devices from (``hardware/tables/*.toml``: the
reader map of :mod:`calibration.readers`, the console pins of :mod:`drivers.console`,
the ``[shoe]`` and ``[[cameras]]`` tables here) is drawn as a table (:func:`markdown`)
and as a picture of the 40-pin header (:func:`svg`), so the drawing cannot disagree
with what runs. Loading checks what no single device loader can: a pin given to two
devices, or a chip select on a pin the SPI bus itself needs.

The readers share one SPI bus (SPI0: MOSI, MISO, SCLK) with a GPIO chip select each
(a ``cs-gpios`` device-tree overlay: ``/dev/spidev0.N`` is the N-th of them)::

    [[readers.reader]]
    id = "r01"
    zone = "seat:1"
    bus = 0
    cs = 0                  # /dev/spidev0.0
    cs_gpio = 8             # the BCM pin that selects it (the overlay's cs-gpios, in cs order)
    # reset_pin: none, NRSTPD tied to 3V3 (15 reset lines do not fit on the header beside 15 chip selects)

    [shoe]
    port = "/dev/serial/by-id/usb-..."   # the stable name udev gives it
    usb_id = "1209:0001"                 # vendor:product (lsusb), for the udev rule
    connector = "USB 2.0, lower"

    [[cameras]]
    name = "right"          # the calibration's camera name
    index = 0               # /dev/video<index>
    connector = "CAM/DISP 0"
"""
from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from calibration.readers import ReaderTable, parse_readers
from drivers.console import ConsolePins, load_console_pins
from firmware_host.configfile import ConfigError, Section, read_toml

__all__ = ["Camera", "Shoe", "Wiring", "load_wiring", "markdown", "overlay", "parse_wiring", "rows", "svg",
           "udev_rule"]

HEADER: tuple[str, ...] = (
    "3V3", "5V", "GPIO2", "5V", "GPIO3", "GND", "GPIO4", "GPIO14", "GND", "GPIO15",
    "GPIO17", "GPIO18", "GPIO27", "GND", "GPIO22", "GPIO23", "3V3", "GPIO24", "GPIO10", "GND",
    "GPIO9", "GPIO25", "GPIO11", "GPIO8", "GND", "GPIO7", "GPIO0", "GPIO1", "GPIO5", "GND",
    "GPIO6", "GPIO12", "GPIO13", "GND", "GPIO19", "GPIO16", "GPIO26", "GPIO20", "GND", "GPIO21")
"""The Raspberry Pi 4 / 5 40-pin header: physical pin n (from 1) is ``HEADER[n - 1]``."""

SPI_PINS = {0: {"MOSI": 10, "MISO": 9, "SCLK": 11}, 1: {"MOSI": 20, "MISO": 19, "SCLK": 21}}
"""BCM pins of the SPI buses the readers may use (SPI0, and SPI1 with ``dtoverlay=spi1-...``)."""

USB_ID = re.compile(r"[0-9a-f]{4}:[0-9a-f]{4}")


@dataclass(frozen=True)
class Shoe:
    """The card shoe's USB serial link."""

    port: str
    usb_id: str
    connector: str


@dataclass(frozen=True)
class Camera:
    """A chip camera: its calibration name, V4L2 index and where it plugs in."""

    name: str
    index: int
    connector: str


@dataclass(frozen=True)
class Wiring:
    """Every device of a table and where it is wired."""

    name: str
    readers: ReaderTable
    console: ConsolePins
    shoe: Shoe
    cameras: tuple[Camera, ...]

    def pins(self) -> dict[int, tuple[str, str]]:
        """BCM pin -> (device, signal), every pin the table uses."""
        return {pin: (device, signal) for device, signal, pin in self._gpio()}

    def _gpio(self) -> Iterator[tuple[str, str, int]]:
        for bus in sorted({r.bus for r in self.readers.readers}):
            for signal, pin in SPI_PINS[bus].items():
                yield f"SPI{bus}", signal, pin
        for r in self.readers.readers:
            if r.cs_gpio is not None:
                yield f"reader {r.id}", f"CS /dev/spidev{r.bus}.{r.cs} ({r.zone})", r.cs_gpio
            if isinstance(r.reset_pin, int):
                yield f"reader {r.id}", "NRSTPD (reset)", r.reset_pin
        for button, pin in self.console.buttons.items():
            yield "console", f"button {button}", pin
        yield "console", "alert LED", self.console.alert_led
        yield "console", "buzzer", self.console.buzzer
        if self.console.chips_led is not None:
            yield "console", "chips LED", self.console.chips_led


def load_wiring(path: str | PathLike[str]) -> Wiring:
    """The wiring of the table profile at *path*; a :class:`ConfigError` names the file and key."""
    return parse_wiring(read_toml(path), Path(path).name, Path(path).stem)


def parse_wiring(data: dict[str, Any], file: str = "<table>", default_name: str = "") -> Wiring:
    """The wiring of a parsed table profile: each device's own loader, then the pins checked across them."""
    readers = parse_readers(data, file, default_name)
    console = load_console_pins(data, file)
    top = Section(data, file)
    shoe = _shoe(top.section("shoe"))
    cameras = tuple(_camera(c) for c in top.sections("cameras", required=False))
    _check_once(top, "cameras", [c.name for c in cameras], "name")
    _check_once(top, "cameras", [c.index for c in cameras], "index")
    wiring = Wiring(readers.name, readers, console, shoe, cameras)
    _check_pins(top, wiring)
    return wiring


def _shoe(section: Section) -> Shoe:
    usb_id = section.get_str("usb_id").lower()
    if not USB_ID.fullmatch(usb_id):
        raise section.error("usb_id", f"expected vendor:product in hex as lsusb shows it, not {usb_id!r}")
    port = section.get_str("port", nonempty=True)
    if not port.startswith("/dev/"):
        raise section.error("port", f"expected a device path (/dev/serial/by-id/...), not {port!r}")
    shoe = Shoe(port, usb_id, section.get_str("connector", nonempty=True))
    section.finish()
    return shoe


def _camera(section: Section) -> Camera:
    camera = Camera(section.get_str("name", nonempty=True), section.get_int("index", minval=0, maxval=63),
                    section.get_str("connector", nonempty=True))
    section.finish()
    return camera


def _check_once(top: Section, key: str, values: list[Any], what: str) -> None:
    seen: dict[Any, int] = {}
    for i, value in enumerate(values):
        if value in seen:
            raise top.error(f"{key}[{i}].{what}", f"{value!r} already used by {key}[{seen[value]}]")
        seen[value] = i


def _check_pins(top: Section, wiring: Wiring) -> None:
    """Each BCM pin drives one signal."""
    seen: dict[int, str] = {}
    for device, signal, pin in wiring._gpio():
        if pin in seen:
            raise ConfigError(top.file, "readers" if device.startswith(("reader", "SPI")) else "console",
                              f"GPIO{pin} is wired to both {seen[pin]} and {device} {signal}")
        seen[pin] = f"{device} {signal}"


# -- the table and the picture ----------------------------------------------------------------

def rows(wiring: Wiring) -> list[tuple[str, str, str]]:
    """``(device, signal, where)`` for every connection, header pins by physical number."""
    physical = {name: n for n, name in enumerate(HEADER, 1)}
    out = [(device, signal, f"GPIO{pin} (pin {physical[f'GPIO{pin}']})") for device, signal, pin in wiring._gpio()]
    tied = [r.id for r in wiring.readers.readers if r.reset_pin is None]
    if tied:
        out.append((f"reader{'s' if len(tied) > 1 else ''} {', '.join(tied)}", "NRSTPD (reset)",
                    "3V3 through 10 kΩ (soft reset at start)"))
    out.append(("shoe", f"USB serial {wiring.shoe.usb_id}", f"{wiring.shoe.connector}: {wiring.shoe.port}"))
    for c in wiring.cameras:
        out.append((f"camera {c.name}", "video", f"{c.connector}: /dev/video{c.index}"))
    return out


def markdown(wiring: Wiring, source: str) -> str:
    """The wiring as a Markdown table (generated: say from what)."""
    lines = [f"# Wiring of table profile `{wiring.name}`", "",
             f"Generated by `tablectl wiring` from `{source}`: edit that file, then regenerate "
             f"(`tablectl wiring {source} --out hardware/wiring`). "
             f"The picture: [{wiring.name}.svg]({wiring.name}.svg).",
             "", "| device | signal | where |", "|---|---|---|"]
    lines += [f"| {d} | {s} | {w} |" for d, s, w in rows(wiring)]
    buses = sorted({r.bus for r in wiring.readers.readers})
    lines += ["", "Every reader: 3V3 and GND from the header, SPI at "
              f"{wiring.readers.spi_hz / 1e6:g} MHz on SPI{', SPI'.join(map(str, buses))}; "
              "the chip selects are GPIOs (`cs-gpios` overlay, in `cs` order).", ""]
    return "\n".join(lines)


COLOURS = {"SPI": "#f4a261", "reader": "#e9c46a", "console": "#8ecae6", "power": "#e76f51", "GND": "#adb5bd"}


def svg(wiring: Wiring) -> str:
    """The 40-pin header with each pin's use, and the USB and camera links, as an SVG picture."""
    pins = wiring.pins()
    row_h, width = 22, 980
    height = 20 * row_h + 120 + 20 * (1 + len(wiring.cameras))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<text x="10" y="18" font-size="14">Table profile {html.escape(wiring.name)}: '
           'Raspberry Pi 40-pin header (pin 1 top left)</text>',
           f'<rect x="440" y="30" width="100" height="{20 * row_h + 10}" fill="#264653" rx="4"/>']
    for n, name in enumerate(HEADER, 1):
        left = n % 2 == 1
        y = 40 + (n - 1) // 2 * row_h
        cx = 470 if left else 510
        label, colour = _pin_label(name, pins)
        out.append(f'<circle cx="{cx}" cy="{y + 6}" r="7" fill="{colour}"/>'
                   f'<text x="{cx}" y="{y + 9}" text-anchor="middle" font-size="8">{n}</text>')
        anchor, x = ("end", 430) if left else ("start", 550)
        out.append(f'<text x="{x}" y="{y + 10}" text-anchor="{anchor}">{html.escape(name)}'
                   f'{" — " + html.escape(label) if label else ""}</text>')
    y = 40 + 20 * row_h + 30
    usb = [f"USB: shoe {wiring.shoe.usb_id} on {wiring.shoe.connector} ({wiring.shoe.port})"]
    usb += [f"camera {c.name}: {c.connector} (/dev/video{c.index})" for c in wiring.cameras]
    for text in usb:
        out.append(f'<text x="10" y="{y}">{html.escape(text)}</text>')
        y += 20
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _pin_label(name: str, pins: dict[int, tuple[str, str]]) -> tuple[str, str]:
    if name.startswith("GPIO") and int(name[4:]) in pins:
        device, signal = pins[int(name[4:])]
        return f"{device}: {signal}", COLOURS[device.split()[0] if not device.startswith("SPI") else "SPI"]
    if name in ("3V3", "5V"):
        return "", COLOURS["power"]
    if name == "GND":
        return "", COLOURS["GND"]
    return "free", "#ffffff"


def udev_rule(wiring: Wiring) -> str:
    """The udev rule that lets the service user open the shoe (group dialout) and names it stably."""
    vendor, product = wiring.shoe.usb_id.split(":")
    return ("# The RFID card shoe (hardware/shoe-protocol.md): group dialout, and /dev/tablectl-shoe.\n"
            f"# Generated by `tablectl wiring` from the table profile {wiring.name}.\n"
            f'SUBSYSTEM=="tty", ATTRS{{idVendor}}=="{vendor}", ATTRS{{idProduct}}=="{product}", '
            'GROUP="dialout", MODE="0660", SYMLINK+="tablectl-shoe", TAG+="systemd"\n')


def overlay(wiring: Wiring, bus: int = 0) -> str:
    """The device-tree overlay source giving SPI *bus* one GPIO chip select per reader, in ``cs`` order
    (``/dev/spidev<bus>.<cs>``); compiled with ``dtc -@ -I dts -O dtb`` (docs/deploy.md)."""
    readers = sorted((r for r in wiring.readers.readers if r.bus == bus), key=lambda r: r.cs)
    if not readers or any(r.cs_gpio is None for r in readers) or [r.cs for r in readers] != list(range(len(readers))):
        raise ValueError(f"{wiring.name}: the readers of SPI{bus} need cs 0..N-1, each with its cs_gpio")
    pins = " ".join(str(r.cs_gpio) for r in readers)
    cs = ", ".join(f"<&gpio {r.cs_gpio} 1>" for r in readers)
    nodes = "".join(f"""
\t\t\tspidev@{r.cs:x} {{\t/* {r.id}: {r.zone} */
\t\t\t\tcompatible = "spidev";
\t\t\t\treg = <{r.cs}>;
\t\t\t\tspi-max-frequency = <{wiring.readers.spi_hz}>;
\t\t\t}};
""" for r in readers)
    return f"""/*
 * tablectl-spi{bus}-cs: SPI{bus} with {len(readers)} GPIO chip selects, one per zone reader of table
 * profile {wiring.name}. Generated by `tablectl wiring` from the table profile: do not edit.
 *   dtc -@ -I dts -O dtb -o /boot/firmware/overlays/tablectl-spi{bus}-cs.dtbo tablectl-spi{bus}-cs.dts
 *   /boot/firmware/config.txt: dtoverlay=tablectl-spi{bus}-cs (instead of dtparam=spi=on)
 */
/dts-v1/;
/plugin/;

/ {{
\tcompatible = "brcm,bcm2835";

\tfragment@0 {{
\t\ttarget = <&spi{bus}_cs_pins>;
\t\t__overlay__ {{
\t\t\tbrcm,pins = <{pins}>;
\t\t\tbrcm,function = <1>;\t/* output */
\t\t}};
\t}};

\tfragment@1 {{
\t\ttarget = <&spi{bus}>;
\t\t__overlay__ {{
\t\t\t#address-cells = <1>;
\t\t\t#size-cells = <0>;
\t\t\tcs-gpios = {cs};
\t\t\tstatus = "okay";
{nodes}\t\t}};
\t}};
}};
"""
