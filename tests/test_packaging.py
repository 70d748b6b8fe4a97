"""The wheel carries what the product reads at run time: built from the working tree, installed with its
dependencies in a fresh virtual environment, run from a directory outside the checkout."""
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                    ".hypothesis", ".mypy_cache", ".ruff_cache")


class Installed:
    """The wheel and a fresh virtual environment it is installed in (with its dependencies)."""

    def __init__(self, wheel: Path, venv: Path, elsewhere: Path) -> None:
        self.wheel, self.venv, self.elsewhere = wheel, venv, elsewhere

    def run(self, program: str, *args: str) -> subprocess.CompletedProcess:
        """*program* of the environment, run from a directory outside the checkout."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        return subprocess.run([str(self.venv / "bin" / program), *args], capture_output=True, text=True,
                              cwd=self.elsewhere, env=env, timeout=300, check=False)


def _step(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"


@pytest.fixture(scope="session")
def installed(tmp_path_factory) -> Installed:
    """Built once a session: a copy of the working tree (symbolic links kept as links) -> wheel -> fresh venv."""
    root = tmp_path_factory.mktemp("packaging")
    source, dist, venv, elsewhere = root / "source", root / "dist", root / "venv", root / "elsewhere"
    shutil.copytree(REPO, source, symlinks=True, ignore=NOT_SOURCE)
    _step(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source))
    _step(sys.executable, "-m", "venv", str(venv))
    wheel = next(dist.glob("pokertable-*.whl"))
    _step(str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel))
    elsewhere.mkdir()
    return Installed(wheel, venv, elsewhere)


def test_the_wheel_carries_copies_of_the_runtime_files(installed):
    with zipfile.ZipFile(installed.wheel) as wheel:
        for shipped, checkout in (("demo-session/recording.json", "tests/recordings/demo-session/recording.json"),
                                  ("demo-session/streams.jsonl.gz", "tests/recordings/demo-session/streams.jsonl.gz"),
                                  ("tables/demo-10.toml", "hardware/tables/demo-10.toml"),
                                  ("camera/table8.toml", "hardware/camera/table8.toml"),
                                  ("mosquitto/table.example.toml", "hardware/mosquitto/table.example.toml"),
                                  ("mosquitto/acl.example", "hardware/mosquitto/acl.example"),
                                  ("schemas/secure-event.schema.json", "docs/mqtt/schemas/secure-event.schema.json")):
            assert wheel.read(f"firmware_host/data/{shipped}") == (REPO / checkout).read_bytes(), shipped
        assert wheel.read("hall/hall.example.toml") == (REPO / "hall/hall.example.toml").read_bytes()
        for page in ("index.html", "login.html", "app.js", "i18n.js", "style.css"):     # the dashboard's page
            assert wheel.read(f"hall/dashboard/static/{page}") == (REPO / "hall/dashboard/static" / page).read_bytes()
        assert not [n for n in wheel.namelist() if n.startswith("tests/") or "expected-events" in n]


def test_the_installed_package_is_not_the_checkout(installed):
    done = installed.run("python", "-c", "import firmware_host; print(firmware_host.__file__)")
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(installed.venv)


def test_demo_runs_from_the_wheel(installed):
    """The README's first command, from an installed wheel: the recorded session is package data."""
    done = installed.run("tablectl", "demo", "--speed", "max", "--hall-dir", str(installed.elsewhere / "hall"))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("Mosquitto on 127.0.0.1:")
    assert "NEW HAND  button 4  SB 1  BB 2" in out
    assert "premature-card [000 §39 (TDA RP-5)]" in out and "resolved by dealer" in out
    assert "seat 2 shows Ks Kd" in out
    assert "\nresults: seat 1: 8600  seat 2: 12000  seat 3: 10700  seat 4: 8700\n" in out
    assert "hall: 3 hand histories (PHH) in " in out and (installed.elsewhere / "hall" / "hands.phhs").exists()


def test_simulate_and_calibrate_read_the_shipped_table_and_camera_files(installed):
    out = installed.elsewhere / "rec"
    done = installed.run("tablectl", "simulate", str(REPO / "tests/scenarios/normal-fold-preflop.txt"), str(out))
    assert done.returncode == 0, done.stderr
    assert (out / "recording.json").exists()
    done = installed.run("tablectl", "calibrate", "table", "--image", str(REPO / "tests/data/vision/table_right.jpg"))
    assert done.returncode == 0, done.stderr
    assert "camera right: markers seen:" in done.stdout
    assert (installed.elsewhere / "camera-right-table.json").exists()


def test_developer_tools_without_a_checkout_say_so_in_one_line(installed):
    for command in (("bench", "replay"), ("bench", "vision"), ("bench", "engine"), ("phh", "verify")):
        done = installed.run("tablectl", *command)
        assert done.returncode != 0, command
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, (command, done.stderr)
    corpus = installed.elsewhere / "corpus"
    shutil.copytree(REPO / "tests/recordings/heads-up", corpus / "heads-up")
    done = installed.run("tablectl", "bench", "replay", "--corpus", str(corpus))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("recordings:            1 ")
