"""The wiring table and picture are drawn from the file the devices load from (issue 17)."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from calibration.readers import parse_readers
from calibration.wiring import HEADER, load_wiring, parse_wiring
from drivers.console import load_console_pins
from firmware_host.cli.wiring import outputs
from firmware_host.configfile import ConfigError
from system_tools import system_tool

ROOT = Path(__file__).parents[1]
TABLE = ROOT / "hardware" / "tables" / "demo-10.toml"
WIRING = ROOT / "hardware" / "wiring"
TABLECTL = Path(sys.executable).with_name("tablectl")


def test_the_committed_drawings_are_what_the_profile_gives():
    """Regenerate and compare: an edit to the profile without `tablectl wiring` fails here."""
    done = subprocess.run([str(TABLECTL), "wiring", "hardware/tables/demo-10.toml", "--out", "hardware/wiring",
                           "--check"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in WIRING.iterdir()) == sorted(outputs(Path("hardware/tables/demo-10.toml")))


def test_check_names_a_stale_drawing(tmp_path):
    out = tmp_path / "wiring"
    shutil.copytree(WIRING, out)
    table = tmp_path / "demo-10.toml"
    table.write_text(TABLE.read_text().replace("buzzer = 21", "buzzer = 27"))
    done = subprocess.run([str(TABLECTL), "wiring", str(table), "--out", str(out), "--check"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "demo-10.md: differs from" in done.stderr and "demo-10.svg" in done.stderr


def table_rows() -> dict[tuple[str, str], str]:
    lines = (WIRING / "demo-10.md").read_text().splitlines()
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines if line.startswith("| ")]
    return {(d, s): w for d, s, w in cells[1:]}


def test_the_table_says_what_the_device_loaders_load():
    data = tomllib.loads(TABLE.read_text())
    readers, pins = parse_readers(data, TABLE.name), load_console_pins(data, TABLE.name)
    rows = table_rows()
    for r in readers.readers:
        where = rows[f"reader {r.id}", f"CS /dev/spidev{r.bus}.{r.cs} ({r.zone})"]
        assert where == f"GPIO{r.cs_gpio} (pin {HEADER.index(f'GPIO{r.cs_gpio}') + 1})"
    for button, pin in pins.buttons.items():
        assert rows["console", f"button {button}"].startswith(f"GPIO{pin} ")
    assert rows["console", "buzzer"].startswith(f"GPIO{pins.buzzer} ")
    assert rows["console", "alert LED"].startswith(f"GPIO{pins.alert_led} ")
    assert rows["shoe", "USB serial 1209:0001"].endswith(data["shoe"]["port"])
    assert len(readers.readers) == 15


def test_the_picture_labels_every_pin_in_use():
    wiring = load_wiring(TABLE)
    root = ET.fromstring((WIRING / "demo-10.svg").read_text())
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    for pin, (device, signal) in wiring.pins().items():
        assert any(t.startswith(f"GPIO{pin} — {device}: {signal}") for t in texts), pin
    assert sum(t.endswith("— free") for t in texts) == 26 - len(wiring.pins()) + 2   # GPIO0/1 (HAT EEPROM) too


def test_the_overlay_compiles_without_a_warning(tmp_path):
    dtc = system_tool("dtc", "device-tree-compiler")
    done = subprocess.run([dtc, "-@", "-I", "dts", "-O", "dtb", "-o", str(tmp_path / "o.dtbo"),
                           str(WIRING / "demo-10-spi0-cs.dts")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    source = (WIRING / "demo-10-spi0-cs.dts").read_text()
    assert "brcm,pins = <8 7 2 3 4 12 14 15 17 18 22 23 24 25 26>;" in source and "spidev@e {" in source


def test_the_udev_rule_matches_the_shoe():
    rule = (WIRING / "demo-10-shoe.rules").read_text()
    assert 'ATTRS{idVendor}=="1209", ATTRS{idProduct}=="0001"' in rule and 'GROUP="dialout"' in rule


def edited(old: str, new: str) -> dict:
    text = TABLE.read_text()
    assert old in text
    return tomllib.loads(text.replace(old, new, 1))


@pytest.mark.parametrize(("old", "new", "message"), [
    ("cs_gpio = 8\n", "cs_gpio = 5\n",
     "GPIO5 is wired to both reader r01 CS /dev/spidev0.0 (seat:1) and console button new-hand"),
    ("cs_gpio = 8\n", "cs_gpio = 9\n", "GPIO9 is wired to both SPI0 MISO and reader r01"),
    ("cs_gpio = 7\n", "cs_gpio = 8\n", "readers.reader[1].cs_gpio: 8 already used by readers.reader[0]"),
    ('usb_id = "1209:0001"', 'usb_id = "shoe"', "shoe.usb_id: expected vendor:product"),
    ('port = "/dev/serial/by-id/', 'port = "COM3/', "shoe.port: expected a device path"),
    ("index = 1\n", "index = 0\n", "cameras[1].index: 0 already used by cameras[0]"),
])
def test_a_wiring_mistake_is_refused_naming_the_file_and_key(old, new, message):
    with pytest.raises(ConfigError) as caught:
        parse_wiring(edited(old, new), "demo-10.toml")
    assert str(caught.value).startswith("demo-10.toml: ") and message in str(caught.value)


def test_a_profile_without_the_shoe_says_so():
    data = tomllib.loads(TABLE.read_text())
    del data["shoe"]
    with pytest.raises(ConfigError, match="demo-10.toml: shoe: missing"):
        parse_wiring(data, "demo-10.toml")
