"""The static-hashable rule on values, driven by the table shared with the plugin's tests."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, strategies as st

import jaxstatic as js
from jaxstatic._freeze import check_static, freeze, thaw

from ..static_cases import CASES, Case, namespace

NS = namespace()


def _value(case: Case) -> Any:
    return eval(case.value, NS)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_table(case: Case) -> None:
    value = _value(case)
    if case.static:
        key = check_static("f", "cfg", value)
        again = _value(case)
        assert (key == check_static("f", "cfg", again)) == (value == again)  # equal values, equal keys
        assert thaw(key) == value
    else:
        expected = rf"f\(\): parameter 'cfg' is Static, but cfg{_escape(case.path)} is a "
        with pytest.raises(js.NonStaticValueError, match=expected):
            check_static("f", "cfg", value)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_table_hashable_column_is_plain_hash(case: Case) -> None:
    try:
        hash(_value(case))
        hashable = True
    except TypeError:
        hashable = False
    assert hashable == case.hashable


def _escape(path: str) -> str:
    import re

    return re.escape(path)


def test_error_names_type_reason_and_fix() -> None:
    with pytest.raises(js.NonStaticValueError) as info:
        check_static("step", "cfg", {"weights": NS["jnp"].zeros(3)})
    assert str(info.value) == (
        "step(): parameter 'cfg' is Static, but cfg['weights'] is a jax.Array (float32[3]), which cannot be static: "
        "an array's contents can change while it stays the same object, so a compiled program would go stale. "
        "Pass it through a parameter that is not Static, or, if it truly is a constant, convert it to a tuple "
        "(tuple(x.tolist()))."
    )


def test_mutable_dataclass_error_explains_eq_without_frozen() -> None:
    with pytest.raises(js.NonStaticValueError, match=r"dataclass with eq=True and frozen=False.*frozen=True"):
        check_static("step", "cfg", NS["MutableCfg"](0.1))


# -- properties ---------------------------------------------------------------------------------------------

atoms = st.one_of(st.integers(), st.floats(allow_nan=False), st.booleans(), st.text(max_size=3), st.none())
static_values = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=3), inner, max_size=4),
        st.frozensets(atoms, max_size=4),
    ),
    max_leaves=12,
)


@given(static_values)
def test_equal_values_have_equal_keys(value: Any) -> None:
    import copy

    assert freeze(value) == freeze(copy.deepcopy(value))
    assert hash(freeze(value)) == hash(freeze(copy.deepcopy(value)))


@given(st.dictionaries(st.text(max_size=3), atoms, min_size=1, max_size=6))
def test_dict_key_ignores_insertion_order(d: dict[str, Any]) -> None:
    assert freeze(d) == freeze(dict(reversed(list(d.items()))))


@given(static_values, static_values)
def test_keys_equal_only_if_values_equal_with_same_types(a: Any, b: Any) -> None:
    if freeze(a) == freeze(b):
        assert a == b and _types(a) == _types(b)


def _types(v: Any) -> Any:
    if isinstance(v, dict):
        return (dict, sorted((repr(k), _types(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return (type(v), [_types(x) for x in v])
    if isinstance(v, frozenset):
        return (frozenset, sorted(repr(_types(x)) for x in v))
    return type(v)


@given(st.sampled_from([1, 1.0, True]), st.sampled_from([1, 1.0, True]))
def test_equal_numbers_of_other_types_never_share(a: Any, b: Any) -> None:
    assert (freeze(a) == freeze(b)) == (type(a) is type(b))
    assert (freeze({"k": [a]}) == freeze({"k": [b]})) == (type(a) is type(b))
    assert (freeze((a, 2)) == freeze((b, 2))) == (type(a) is type(b))


@given(static_values, st.sampled_from(["array", "list_in_set"]))
def test_unhashable_leaf_is_reported(value: Any, kind: str) -> None:
    bad = NS["np"].zeros(2) if kind == "array" else NS["MutableCfg"](1.0)
    with pytest.raises(js.NonStaticValueError, match=r"cfg\['bad'\]\[1\] is a "):
        check_static("f", "cfg", {"ok": value, "bad": [value, bad]})
