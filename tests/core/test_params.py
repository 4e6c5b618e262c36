"""Parameter declarations and validation: one test per way a value can be wrong."""

import pytest

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, ParameterError, Relation, parse_pairs, parse_value, validate

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


RULED = (
    Param("seed", 0, "int", low=0),
    Param("L_step", 4, "int", low=2, high=8, multiple_of=2),
    Param("d", 100, "int", low=20, high=240, multiple_of=10),
    Param("leaves", 16, "int", low=4, high=64, power_of_two=True),
    Param("ds", [4, 8], "int_list", low=2, high=64, power_of_two=True),
    Param("r", 2, "int", low=1, high=16),
    Param("d_lr", 8, "int", low=2, high=64),
)
TWO_R = Relation(("r", "d_lr"), "2 r <= d_lr", lambda v: 2 * v["r"] <= v["d_lr"],
                 violating={"r": 5}, satisfying={"r": 4})


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [("L_step", 5, "5 is not even"), ("d", 25, "25 is not a multiple of 10"), ("leaves", 24, "24 is not a power of 2"),
     ("ds", [4, 6], "6 is not a power of 2")],
)
def test_multiples_and_powers_of_two_are_checked(name, value, fragment):
    with pytest.raises(ParameterError) as err:
        validate({name: value}, RULED)
    msg = str(err.value)
    assert f"parameter {name!r}" in msg and repr(value) in msg and fragment in msg


def test_allowed_values_of_a_rule_pass_and_the_rule_is_stated():
    values = validate({"L_step": 6, "d": 30, "leaves": 64, "ds": [2, 32]}, RULED)
    assert (values["L_step"], values["d"], values["leaves"], values["ds"]) == (6, 30, 64, [2, 32])
    assert RULED[1].allowed() == "an integer in [2, 8], even"
    assert RULED[2].allowed() == "an integer in [20, 240], a multiple of 10"
    assert RULED[3].allowed() == "an integer in [4, 64], a power of 2"


def test_rules_apply_to_integers_only():
    with pytest.raises(ValueError, match="integers only"):
        Param("x", 1.0, "float", multiple_of=2)
    with pytest.raises(ValueError, match="multiple_of"):
        Param("x", 4, "int", multiple_of=1)
    with pytest.raises(ParameterError, match="not even"):
        Param("x", 3, "int", multiple_of=2)  # the default must obey its own rule


def test_a_relation_names_every_parameter_value_and_the_rule():
    assert validate(TWO_R.satisfying, RULED, relations=(TWO_R,))["r"] == 4
    with pytest.raises(ParameterError) as err:
        validate(TWO_R.violating, RULED, relations=(TWO_R,))
    msg = str(err.value)
    assert "'r' = 5" in msg and "'d_lr' = 8" in msg and "the rule: 2 r <= d_lr" in msg


def test_a_chapter_checks_its_relations_at_the_defaults_and_alternatives():
    ch = Chapter("x-y", "X", 1, RULED, alternatives={"A": {"r": 3}}, relations=(TWO_R,))
    assert ch.validate({"r": 4})["r"] == 4
    with pytest.raises(ParameterError, match="2 r <= d_lr"):
        ch.validate({"r": 5})
    with pytest.raises(ValueError, match="alternative 'A'"):
        Chapter("x-y", "X", 1, RULED, alternatives={"A": {"r": 6}}, relations=(TWO_R,))
    with pytest.raises(ValueError, match="alternative 'defaults'"):
        Chapter("x-y", "X", 1, RULED, relations=(Relation(("r",), "r > 5", lambda v: v["r"] > 5, {}, {}),))
    with pytest.raises(ValueError, match="undeclared"):
        Chapter("x-y", "X", 1, RULED, relations=(Relation(("q",), "q", lambda v: True, {}, {}),))
