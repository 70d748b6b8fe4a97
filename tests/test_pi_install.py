"""The Pi's install script, staged into a directory with --root, and the systemd unit it installs (issue 17)."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from system_tools import system_tool

ROOT = Path(__file__).parents[1]
INSTALL = ROOT / "hardware" / "pi" / "install.sh"
UNIT = ROOT / "hardware" / "pi" / "tablectl.service"


def install(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(INSTALL), "--root", str(root), "--python", sys.executable, *args],
                          capture_output=True, text=True, timeout=600)


def account(root: Path, name: str, file: str = "passwd") -> list[str]:
    for line in (root / "etc" / file).read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split(":")
    raise KeyError(name)


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    root = tmp_path_factory.mktemp("sdcard")
    done = install(root)
    assert done.returncode == 0, done.stderr
    return root


def test_the_service_user_is_in_its_device_groups(staged):
    user = account(staged, "tablectl")
    assert user[6] == "/usr/sbin/nologin" and user[5] == "/var/lib/tablectl"
    for group in ("spi", "gpio", "dialout", "video"):
        assert "tablectl" in account(staged, group, "group")[3].split(","), group


def test_the_secrets_are_0600_and_the_service_users(staged):
    uid, gid = int(account(staged, "tablectl")[2]), int(account(staged, "tablectl")[3])
    etc = staged / "etc" / "tablectl"
    assert stat.S_IMODE(etc.stat().st_mode) == 0o700
    for name in ("table.toml", "table-profile.toml", "command-key", "mqtt-password", "devices.env"):
        info = (etc / name).stat()
        assert stat.S_IMODE(info.st_mode) == 0o600 and (info.st_uid, info.st_gid) == (uid, gid), name
    assert len((etc / "command-key").read_text().strip()) >= 32
    assert (etc / "command-key").read_text() != (etc / "mqtt-password").read_text()


def test_the_config_keeps_journal_and_outbox_in_the_data_directory(staged):
    from firmware_host.configfile import Section, read_toml
    data = Section(read_toml(staged / "etc" / "tablectl" / "table.toml"), "table.toml")
    assert data.section("journal").get_str("path") == "/var/lib/tablectl/journal.sqlite"
    assert data.section("outbox").get_str("path") == "/var/lib/tablectl/outbox.sqlite"
    info = (staged / "var" / "lib" / "tablectl").stat()
    assert stat.S_IMODE(info.st_mode) == 0o750 and info.st_uid == int(account(staged, "tablectl")[2])


def test_the_release_runs_and_the_udev_rule_is_the_profiles(staged):
    tablectl = staged / "opt" / "tablectl" / "current" / "bin" / "tablectl"
    done = subprocess.run([str(tablectl), "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("tablectl ")
    rule = (staged / "etc" / "udev" / "rules.d" / "99-tablectl-shoe.rules").read_text()
    assert rule == (ROOT / "hardware" / "wiring" / "demo-10-shoe.rules").read_text()


def with_system_units(root: Path) -> None:
    """systemd's own units (sysinit.target...) beside ours, as on the Pi: verify resolves dependencies."""
    system_tool("systemd-analyze", "systemd")
    for lib in (Path("/usr/lib/systemd/system"), Path("/lib/systemd/system")):
        if lib.is_dir():
            shutil.copytree(lib, root / "usr" / "lib" / "systemd" / "system", symlinks=True, dirs_exist_ok=True)
            return
    pytest.fail("systemd's unit files are not installed (apt-get install systemd)")


def test_systemd_analyze_verifies_the_installed_unit(staged):
    with_system_units(staged)
    analyze = system_tool("systemd-analyze", "systemd")
    done = subprocess.run([analyze, "verify", f"--root={staged}", "/etc/systemd/system/tablectl.service"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr   # an unknown key is only a warning
    security = subprocess.run([analyze, "security", "--offline=yes", f"--root={staged}", "--threshold=40",
                               "/etc/systemd/system/tablectl.service"], capture_output=True, text=True, timeout=120)
    assert security.returncode == 0, security.stdout[-500:]
    assert "Overall exposure level for tablectl.service" in security.stdout


def test_the_unit_is_notify_watchdog_and_reaches_only_its_devices():
    lines = [line for line in UNIT.read_text().splitlines() if line and not line.startswith("#")]
    keys = {line.split("=", 1)[0]: line.split("=", 1)[1] for line in lines if "=" in line}
    assert keys["Type"] == "notify" and keys["Restart"] == "on-failure" and int(keys["WatchdogSec"]) > 0
    assert keys["NoNewPrivileges"] == "yes" and keys["ProtectSystem"] == "strict"
    assert keys["DevicePolicy"] == "closed" and keys["StandardOutput"] == "journal"
    allowed = [line.split("=", 1)[1].split()[0] for line in lines if line.startswith("DeviceAllow=")]
    assert sorted(allowed) == sorted(["char-spi", "char-gpiochip", "/dev/gpiomem", "char-ttyACM", "char-ttyUSB",
                                      "char-video4linux"])


def test_update_keeps_the_tables_files_and_rollback_brings_the_previous_release(staged):
    opt = staged / "opt" / "tablectl"
    first = os.readlink(opt / "current")
    config = staged / "etc" / "tablectl" / "table.toml"
    config.write_text(config.read_text().replace('id = "t1"', 'id = "t7"'))
    key = (staged / "etc" / "tablectl" / "command-key").read_text()
    done = install(staged)
    assert done.returncode == 0, done.stderr
    second = os.readlink(opt / "current")
    assert second != first and os.readlink(opt / "previous") == first
    assert 'id = "t7"' in config.read_text() and (staged / "etc" / "tablectl" / "command-key").read_text() == key
    back = install(staged, "--rollback")
    assert back.returncode == 0, back.stderr
    assert os.readlink(opt / "current") == first and os.readlink(opt / "previous") == second
    assert (opt / first / "bin" / "tablectl").exists()


def test_a_data_directory_that_would_not_survive_a_power_cut_is_refused(tmp_path):
    shm = Path("/dev/shm")
    assert subprocess.run(["stat", "-f", "-c", "%T", str(shm)], capture_output=True, text=True).stdout.strip() \
        == "tmpfs"
    root = Path(f"/dev/shm/tablectl-test-{os.getpid()}")
    try:
        done = install(root)
        assert done.returncode == 1
        assert "/var/lib/tablectl is on tmpfs: the journal and outbox would not survive a power cut" in done.stderr
        assert not (root / "opt").exists() and not (root / "etc").exists()     # nothing was changed
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_bad_table_profile_is_refused_before_anything_changes(tmp_path):
    done = install(tmp_path / "root", "--table-profile", str(tmp_path / "missing.toml"))
    assert done.returncode == 1 and "table profile" in done.stderr and "does not exist" in done.stderr
    assert not (tmp_path / "root" / "etc").exists()


def test_the_units_device_options_are_what_tablectl_run_takes(staged):
    """ExecStart is `tablectl run --config ... $TABLECTL_DEVICES`: both lines of devices.env parse."""
    from firmware_host.cli.main import build_parser
    env = (staged / "etc" / "tablectl" / "devices.env").read_text().splitlines()
    lines = [line.lstrip("#").split("=", 1)[1] for line in env if line.lstrip("#").startswith("TABLECTL_DEVICES=")]
    assert len(lines) == 2 and "--camera right=0 --camera left=1" in lines[1]
    exec_start = next(line for line in UNIT.read_text().splitlines() if line.startswith("ExecStart="))
    fixed = exec_start.split("tablectl ", 1)[1].replace("$TABLECTL_DEVICES", "").split()
    for devices in lines:
        args = build_parser().parse_args([*fixed, *devices.split()])
        assert args.devices == "/etc/tablectl/table-profile.toml" and args.decks == "/var/lib/tablectl/decks"
