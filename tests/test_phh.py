"""The real-hand corpus: Pluribus hands as table observations, through the engine."""
import subprocess
import sys
from pathlib import Path

import pytest

from firmware_host.hil.phh import load, observations, verify
from firmware_host.rules.profile import builtin_profile

CORPUS = Path(__file__).parent / "data" / "pluribus.phhs.gz"   # the 10,000 hands of ../shared/phh, gzipped
ODD_CHIP_HANDS = {280, 3333, 4081, 5747, 7268, 8512, 8808, 8818}   # finishing stacks like 10112.5


@pytest.fixture(scope="module")
def hands():
    return load(CORPUS)


def test_corpus_is_the_10000_pluribus_hands(hands):
    assert len(hands) == 10000


def test_2000_pluribus_hands_agree_with_the_record(hands):
    """Final stacks equal finishing_stacks; odd-chip splits within one chip, odd chip left of the button (000 §20)."""
    profile = builtin_profile("000")
    picked = list(range(1, 1001)) + sorted(ODD_CHIP_HANDS) + list(range(9001, 10001))
    verdicts = list(verify(((n, hands[n - 1]) for n in picked), profile))
    disagree = [(v.number, v.detail) for v in verdicts if not v.agree]
    assert not disagree, disagree[:5]
    assert {v.number for v in verdicts if v.odd_chip} == ODD_CHIP_HANDS


def test_observations_look_like_a_table(hands):
    obs, expected = observations(hands[0])
    kinds = [type(o).__name__ for o in obs]
    assert kinds[:6] == ["SeatPresence"] * 6 and kinds[6:9] == ["SetLevel", "MoveButton", "ConsolePress"]
    draws = [o for o in obs if type(o).__name__ == "CardEntered" and o.zone == "shoe"]
    burns = [o for o in obs if type(o).__name__ == "CardEntered" and o.zone == "burn"]
    assert len(burns) == 3 and len(draws) == 12 + 3 + 5
    assert expected[0].action == "fold" and expected[1].total == 210


def test_tablectl_phh_verify_reports_agreement(tmp_path):
    import gzip
    text = gzip.open(CORPUS, "rt").read()
    sample = text[: text.index("[51]")]
    path = tmp_path / "sample.phhs"
    path.write_text(sample)
    done = subprocess.run([sys.executable, "-m", "firmware_host.cli", "phh", "verify", str(path)],
                          capture_output=True, text=True, check=False)
    assert done.stdout.strip().splitlines()[-1] == "agree: 50/50", done.stdout + done.stderr
    assert done.returncode == 0


def test_tablectl_phh_verify_prints_a_disagreeing_hand(tmp_path):
    path = tmp_path / "wrong.phh"
    path.write_text(
        "variant = 'NT'\nante_trimming_status = true\nantes = [0, 0, 0]\nblinds_or_straddles = [50, 100, 0]\n"
        "min_bet = 100\nstarting_stacks = [1000, 1000, 1000]\n"
        "actions = ['d dh p1 AsAd', 'd dh p2 KsKd', 'd dh p3 2c7d', 'p3 f', 'p1 cbr 300', 'p2 f']\n"
        "finishing_stacks = [1100, 900, 1000]\n")   # p1 raises, p2 folds: p1 wins the big blind
    done = subprocess.run([sys.executable, "-m", "firmware_host.cli", "phh", "verify", str(path)],
                          capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "agree: 1/1", done.stdout
    path.write_text(path.read_text().replace("[1100, 900, 1000]", "[1200, 800, 1000]"))
    done = subprocess.run([sys.executable, "-m", "firmware_host.cli", "phh", "verify", str(path)],
                          capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "agree: 0/1" and "DISAGREES" in lines[0] and "record [1200, 800, 1000]" in lines[0]
    assert done.returncode == 1
