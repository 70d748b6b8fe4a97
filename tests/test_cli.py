"""tablectl, run as a user runs it."""
import json
import re
import subprocess
import sys


def tablectl(*args):
    return subprocess.run([sys.executable, "-m", "firmware_host.cli", *args], capture_output=True, text=True,
                          check=False)


def test_help_lists_the_subcommands():
    done = tablectl("--help")
    assert done.returncode == 0
    for command in ("demo", "phh", "profile", "bench"):
        assert command in done.stdout


def test_demo_publishes_through_a_real_broker_and_hides_hole_cards():
    """The README's first command: Mosquitto on loopback, a recorded session, events as a subscriber sees them."""
    done = tablectl("demo", "--speed", "max")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("Mosquitto on 127.0.0.1:")
    assert "NEW HAND  button 4  SB 1  BB 2" in out
    assert not re.search(r"seat \d+ dealt", out) and "burn before" not in out   # hole, burn cards: secure topic
    assert "premature-card [000 §39 (TDA RP-5)]" in out and "resolved by dealer" in out
    assert "four-card-flop [000 §39]" in out
    assert "seat 2 shows Ks Kd" in out                              # shown at showdown: now public
    assert out.strip().splitlines()[-1] == "results: seat 1: 8600  seat 2: 12000  seat 3: 10700  seat 4: 8700"
    secure = tablectl("demo", "--speed", "max", "--secrets").stdout
    assert "seat 1 dealt As" in secure and "burn before the flop 5c" in secure


def test_profile_command_prints_a_builtin_profile():
    done = tablectl("profile", "004")
    assert done.returncode == 0
    profile = json.loads(done.stdout)
    assert profile["odd_chip"] == "next-pot" and profile["seats"] == 8


def test_profile_command_names_the_bad_key(tmp_path):
    from importlib import resources
    text = resources.files("firmware_host.rules").joinpath("profiles/000.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('min_raise = "tda"', 'min_raise = "triple"'))
    done = tablectl("profile", str(bad))
    assert done.returncode == 2
    assert "bad.toml: betting.min_raise: 'triple' is not one of" in done.stderr


def test_bench_engine_prints_figures_then_one_json_line():
    done = tablectl("bench", "engine", "--limit", "40")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    figures = json.loads(lines[-1])
    assert figures["hands"] == 40 and figures["agree"] == 40
    assert figures["engine_hands_per_s"] > 0 and figures["pokerkit_hands_per_s"] > 0
    assert any(line.startswith("engine:") for line in lines[:-1])
