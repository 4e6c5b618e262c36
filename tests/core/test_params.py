"""Parameter declarations and validation: one test per way a value can be wrong."""

import pytest

from theorylib.core.params import Param, ParameterError, parse_pairs, parse_value, validate

PARAMS = (
    Param("seed", 0, "int", low=0),
    Param("sigma", 1e-4, "float", low=0.0, high=1e-2),
    Param("mode", "a", "str", choices=("a", "b")),
    Param("full", False, "bool"),
    Param("sizes", [4, 8], "int_list", low=2, high=64, max_len=5, increasing=True),
    Param("taus", [1e-6, 1e-5], "float_list", low=0.0),
)


def test_defaults_validate_and_ints_promote_to_float():
    values = validate({"sigma": 0}, PARAMS)
    assert values["sigma"] == 0.0 and isinstance(values["sigma"], float)
    assert values["sizes"] == [4, 8] and values["mode"] == "a"


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("seed", -1, "below 0"),
        ("seed", 1.5, "not an integer"),
        ("seed", True, "not an integer"),
        ("sigma", 0.5, "above 0.01"),
        ("sigma", float("nan"), "not a finite number"),
        ("sigma", "x", "not a finite number"),
        ("mode", "c", "one of 'a', 'b'"),
        ("full", 1, "not a bool"),
        ("sizes", [4, 100], "above 64"),
        ("sizes", [8, 4], "not strictly increasing"),
        ("sizes", [], "length 0"),
        ("sizes", [2, 3, 4, 5, 6, 7], "length 6"),
        ("sizes", 4, "not a list"),
        ("taus", [1e-6, -1.0], "below 0"),
    ],
)
def test_bad_values_name_parameter_value_and_range(name, value, fragment):
    with pytest.raises(ParameterError) as err:
        validate({name: value}, PARAMS)
    msg = str(err.value)
    assert f"parameter {name!r}" in msg and repr(value) in msg
    assert "allowed:" in msg and fragment in msg


def test_allowed_text_states_the_range():
    assert PARAMS[1].allowed() == "a finite number in [0, 0.01]"
    assert "each an integer in [2, 64]" in PARAMS[4].allowed()


def test_strict_rejects_unknown_names_but_globals_mode_ignores_them():
    with pytest.raises(ParameterError, match="unknown parameter 'nope'"):
        validate({"nope": 1}, PARAMS, strict=True)
    assert validate({"nope": 1, "__name__": "x"}, PARAMS)["seed"] == 0


def test_invalid_default_is_a_declaration_error():
    with pytest.raises(ParameterError):
        Param("d", 1, "int", low=2)
    with pytest.raises(ValueError, match="identifier"):
        Param("bad name", 1, "int")


def test_parse_cli_values():
    assert parse_value("3") == 3 and parse_value("0.5") == 0.5
    assert parse_value("[1, 2]") == [1, 2] and parse_value("True") is True
    assert parse_value("logunif") == "logunif"
    assert parse_pairs([("d", "4"), ("mode", "b")]) == {"d": 4, "mode": "b"}
