"""tablectl, run as a user runs it."""
import json
import re
import subprocess
import sys
from pathlib import Path

from system_tools import ctrl_c_default


def tablectl(*args):
    return subprocess.run([sys.executable, "-m", "firmware_host.cli", *args], capture_output=True, text=True,
                          check=False)


def test_help_lists_the_subcommands():
    done = tablectl("--help")
    assert done.returncode == 0
    for command in ("demo", "phh", "profile", "bench"):
        assert command in done.stdout


def test_demo_publishes_through_a_real_broker_and_hides_hole_cards(tmp_path):
    """The README's first command: Mosquitto on loopback, a recorded session, events as a subscriber sees them;
    the hall's archive listening, its hand histories written and one printed (issue 15)."""
    done = tablectl("demo", "--speed", "max", "--hall-dir", str(tmp_path / "hall"))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("Mosquitto on 127.0.0.1:")
    assert "NEW HAND  button 4  SB 1  BB 2" in out
    assert not re.search(r"seat \d+ dealt", out) and "burn before" not in out   # hole, burn cards: secure topic
    assert "premature-card [000 §39 (TDA RP-5)]" in out and "resolved by dealer" in out
    assert "four-card-flop [000 §39]" in out
    assert "seat 2 shows Ks Kd" in out                              # shown at showdown: now public
    assert "\nresults: seat 1: 8600  seat 2: 12000  seat 3: 10700  seat 4: 8700\n" in out
    phhs = tmp_path / "hall" / "hands.phhs"
    assert f"hall: 3 hand histories (PHH) in {phhs}; the last one:\n" in out
    assert out.rstrip().endswith("_chip_unit = 25") and "four-card-flop" in out.split("the last one:")[1]
    assert tablectl("hall", "verify", "--store", str(tmp_path / "hall" / "archive.sqlite")).returncode == 0
    verified = tablectl("phh", "verify", str(phhs))
    assert "agree: 3/3" in verified.stdout, verified.stdout
    secure = tablectl("demo", "--speed", "max", "--secrets", "--hall-dir", str(tmp_path / "hall")).stdout
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


def test_what_cannot_be_used_is_one_line_and_exit_2(tmp_path):
    """A profile that is neither built in nor a file, a file that is no PHH, a .gz cut short by a power cut, a
    bit flipped in one: one line naming it, exit 2, no traceback."""
    import gzip
    from pathlib import Path

    hands = Path(__file__).parent / "data" / "pluribus.phhs.gz"
    (tmp_path / "not.phh").write_text("x\n")
    (tmp_path / "cut.phhs.gz").write_bytes(hands.read_bytes()[:3000])
    flipped = bytearray(gzip.compress(b'variant = "NT"\n'))
    flipped[-6] ^= 0x01                                                  # the CRC no longer matches
    (tmp_path / "flipped.phh.gz").write_bytes(bytes(flipped))
    recording = Path(__file__).parent / "recordings" / "heads-up"
    for args, says in [
        (("profile", "007"), "007: neither a built-in profile (000, 001, 002, 003, 004) nor a profile file"),
        (("replay", str(recording), "--profile", "012"), "012: neither a built-in profile"),
        (("phh", "verify", str(tmp_path / "not.phh")), "not.phh: not a PHH file"),
        (("phh", "verify", str(tmp_path / "cut.phhs.gz")), "cut.phhs.gz: damaged compressed file"),
        (("phh", "verify", str(tmp_path / "flipped.phh.gz")), "flipped.phh.gz: cannot read"),
        (("phh", "verify", str(tmp_path / "missing.phhs")), "missing.phhs"),
        (("replay", str(tmp_path / "no-such-recording")), "no-such-recording/recording.json"),
        (("run", "--config", str(tmp_path / "no.toml"), "--source", "demo"), "no.toml"),
        (("replay", str(recording), "--events-out", str(tmp_path / "no" / "dir" / "out.jsonl")), "No such file"),
    ]:
        done = tablectl(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
        assert says in done.stderr, done.stderr


def test_bad_options_are_named_with_their_choices():
    """Issue 14 items 12 and 17: `--log-level LOUD`, `--speed fast`, `--speed 0`: argparse's one line (exit 2)
    naming the option; `max` is the one spelling of "as fast as possible"; every command takes
    `--log-level` and lists its values; `--version`."""
    recording = str(Path(__file__).parent / "recordings" / "heads-up")
    for args, says in [
        (("replay", recording, "--log-level", "LOUD"), "argument --log-level: invalid choice: 'LOUD'"),
        (("replay", recording, "--speed", "fast"), "argument --speed: must be 'max' (as fast as possible)"),
        (("run", "--config", "x.toml", "--source", "demo", "--speed", "0"), "argument --speed: must be 'max'"),
        (("demo", "--speed", "-1"), "argument --speed: must be 'max'"),
    ]:
        done = tablectl(*args)
        assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
    from firmware_host.cli.main import _leaves, build_parser
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    for command in _leaves(commands):
        assert "DEBUG, INFO, WARNING, ERROR" in command.format_help(), command.prog
    done = tablectl("--version")
    assert done.returncode == 0 and done.stdout.startswith("tablectl 0.")


def test_sigterm_and_ctrl_c_leave_no_broker_and_no_temp_directory(tmp_path):
    """Issue 14 item 14: SIGTERM to `tablectl demo` once left its Mosquitto running with its temp
    directory; Ctrl-C printed a traceback. Both now stop the broker, remove the directory, print one line."""
    import os
    import signal
    import socket
    import time

    for sig, code in ((signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, 130)):
        env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONUNBUFFERED="1")
        proc = subprocess.Popen([sys.executable, "-m", "firmware_host.cli", "demo", "--speed", "1", "--hall-dir",
                                 str(tmp_path / "hall")], env=env, preexec_fn=ctrl_c_default,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = proc.stdout.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+)", first).group(1))
        assert list(tmp_path.glob("tablectl-demo-*"))          # the broker's directory exists...
        time.sleep(1)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == code, err
        assert "Traceback" not in err and err.strip().count("\n") == 0, err
        assert not list(tmp_path.glob("tablectl-demo-*"))      # ...and is gone, with the broker
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0


def test_no_broker_and_no_port_are_said_at_once(tmp_path):
    """Issue 14 item 15: `replay --broker` to a broker that is not there once retried on; `calibrate deck`
    on a port that is not there waited 60 s and listed 52 missing cards. Both: one line, exit 2, at once."""
    import time

    from firmware_host.sim.broker import free_port

    recording = str(Path(__file__).parent / "recordings" / "heads-up")
    started = time.monotonic()
    done = tablectl("replay", recording, "--broker", f"mqtt://127.0.0.1:{free_port()}", "--broker-wait", "2")
    assert done.returncode == 2 and "no broker reachable" in done.stderr and "nothing replayed" in done.stderr
    assert time.monotonic() - started < 20
    started = time.monotonic()
    done = tablectl("calibrate", "deck", "--port", "/dev/ttyNOPE", "--deck", "d1", "--back", "blue",
                    "--dir", str(tmp_path))
    assert done.returncode == 2 and "cannot open the shoe's serial port" in done.stderr, done.stderr
    assert "missing" not in done.stdout and time.monotonic() - started < 20


def test_phh_verify_shows_its_progress_on_a_terminal_only():
    """Issue 14 item 17: `phh verify` was 47 s silent on a terminal. A bar on a terminal; none in a pipe."""
    import fcntl
    import os
    import pty
    import struct
    import termios

    hands = str(Path(__file__).parent / "data" / "pluribus.phhs.gz")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))     # a terminal's size
    proc = subprocess.Popen([sys.executable, "-m", "firmware_host.cli", "phh", "verify", "--limit", "50", hands],
                            stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    out, _ = proc.communicate(timeout=120)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert proc.returncode == 0 and out.strip().endswith("agree: 50/50")
    assert b"50/50" in seen and b"hands" in seen           # the bar, on the terminal
    piped = tablectl("phh", "verify", "--limit", "50", hands)
    assert piped.returncode == 0 and "hands" not in piped.stderr  # nothing when stderr is not a terminal


def test_a_script_naming_a_seat_or_profile_that_is_not_there_is_refused(tmp_path):
    """Issue 14 item 13: `fold 0` was accepted; `profile 009` passed simulate and crashed replay."""
    head = "profile 000\nseat 1 a 1000\nseat 2 b 1000\nbutton 1\n"
    for body, says in [("hand 1:50 2:100\nfold 0\n", "line 6: 'fold 0': seat '0' is not a seat of this table"),
                       ("hand 1:50 11:100\n", "seat '11' is not a seat of this table (1..10)"),
                       ("profile 009\n", "line 5: 'profile 009': profile: 009: neither a built-in profile")]:
        script = tmp_path / "s.txt"
        script.write_text(head + body)
        done = tablectl("simulate", str(script), str(tmp_path / "out"))
        assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert not (tmp_path / "out").exists()
