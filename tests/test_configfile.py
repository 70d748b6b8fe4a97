"""The one config loader: typed getters with bounds, unknown keys refused, errors naming file, key and reason."""
import pytest

from firmware_host.configfile import ConfigError, Section, read_toml


def section(**data):
    return Section(data, "t.toml", "s")


def refused(call, key: str, reason: str) -> None:
    with pytest.raises(ConfigError) as info:
        call()
    assert (info.value.file, info.value.key) == ("t.toml", key)
    assert reason in info.value.reason
    assert str(info.value) == f"t.toml: {key}: {info.value.reason}"


def test_getters_return_typed_values_and_defaults():
    s = section(n=3, x=2, f=0.5, b=True, name="a", pins=[1, 2])
    assert s.get_int("n", minval=1, maxval=3) == 3
    assert s.get_float("x") == 2.0 and isinstance(s.get_float("x"), float)
    assert s.get_float("f", above=0, below=1) == 0.5
    assert s.get_bool("b") is True and s.get_str("name", nonempty=True) == "a"
    assert s.get_list("pins", item=lambda v: type(v) is int, length=2) == [1, 2]
    assert s.get_int("absent", 7) == 7 and s.get_str("none", None) is None
    s.finish()


@pytest.mark.parametrize("call, reason", [
    (lambda s: s.get_int("n", minval=5), "3 is under the minimum 5"),
    (lambda s: s.get_int("n", maxval=2), "3 is over the maximum 2"),
    (lambda s: s.get_int("n", minval=4, maxval=9), "3 out of range 4..9"),
    (lambda s: s.get_float("n", above=3), "3 must be above 3"),
    (lambda s: s.get_float("n", below=3), "3 must be below 3"),
    (lambda s: s.get_bool("n"), "expected a boolean, not an integer (3)"),
    (lambda s: s.get_str("n"), "expected a string, not an integer (3)"),
    (lambda s: s.get_choice("n", ("a", "b")), "3 is not one of 'a', 'b'"),
    (lambda s: s.get_list("n"), "expected an array"),
    (lambda s: s.section("n"), "expected a table"),
])
def test_bounds_and_types_name_the_key(call, reason):
    refused(lambda: call(section(n=3)), "s.n", reason)


def test_a_boolean_is_no_integer_and_an_integer_no_boolean():
    refused(lambda: section(n=True).get_int("n"), "s.n", "expected an integer, not a boolean (True)")
    refused(lambda: section(n=1).get_bool("n"), "s.n", "expected a boolean, not an integer (1)")


def test_a_required_key_missing():
    refused(lambda: section().get_int("n"), "s.n", "missing required key")


def test_unknown_keys_are_refused_listing_the_known_ones():
    s = section(spi_hz=1, spi_mhz=4)
    s.get_int("spi_hz")
    s.get_int("timeout_us", 5)
    refused(s.finish, "s.spi_mhz", "unknown key (known: spi_hz, timeout_us)")


def test_sub_tables_and_arrays_of_tables_are_finished_with_their_parent():
    top = Section({"r": {"reader": [{"id": "a"}, {"id": "b", "zne": 1}]}}, "t.toml")
    readers = top.section("r").sections("reader")
    assert [r.get_str("id") for r in readers] == ["a", "b"]
    refused(top.finish, "r.reader[1].zne", "unknown key (known: id)")


def test_an_array_of_tables_holding_a_value():
    refused(lambda: Section({"r": [1]}, "t.toml").sections("r"), "r[0]", "expected a table, not an integer (1)")


def test_files_that_cannot_be_read(tmp_path):
    bad = tmp_path / "t.toml"
    bad.write_text("[readers\n")
    with pytest.raises(ConfigError, match="^t.toml: not valid TOML"):
        read_toml(bad)
    with pytest.raises(ConfigError, match="^/etc/x.toml: cannot read"):
        read_toml(tmp_path / "none.toml", "/etc/x.toml")
    bad.write_text("a = 1\n")
    assert Section.load(bad).get_int("a") == 1
