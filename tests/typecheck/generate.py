"""Write ``test_static_rule.yml`` from the shared table of cases (``tests/static_cases.py``).

Run ``.venv/bin/python tests/typecheck/generate.py`` after changing the table; ``tests/plugin/test_tables.py`` fails while the
committed YAML is out of date. Each case becomes one mypy run that checks both rules:

* ``static``: the value bound to a ``Static[object]`` parameter (a plain call, a call through ``jaxstatic.jit``, and
  the literal itself);
* ``hashable``: the declared type named in plain ``jax.jit(..., static_argnames=...)``, and the value (as a variable
  and as a literal) passed to a parameter declared ``Any`` that plain ``jax.jit`` makes static.

The plugin judges declared types, so its messages name the first offending part of the type. They are listed here
per case id; a non-static case without an entry is an error, so new table rows get a reviewed expectation.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import yaml

_TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_TESTS))

from static_cases import CALL_CASES, CALL_PRELUDE, CASES, PRELUDE  # noqa: E402

OUTPUT = Path(__file__).resolve().parent / "test_static_rule.yml"
CALL_OUTPUT = Path(__file__).resolve().parent / "test_call_shapes.yml"

_ARRAY = '"Array" is an array'
_NDARRAY = '"ndarray" is an array'
_MUTABLE = '"MutableCfg" is a dataclass with eq=True, frozen=False'
_DICT = '"dict" sets __hash__ to None'
_LIST = '"list" sets __hash__ to None'
_BOX_LIST = f'field "item" of "Box": {_LIST}'
_BOX_BOX_ARRAY = f'field "item" of "Box": field "item" of "Box": {_ARRAY}'


def _hash_none(name: str) -> str:
    return f'"{name}" sets __hash__ to None'


def _eq_only(name: str) -> str:
    return f'"{name}" defines __eq__ without __hash__, so __hash__ is None'


PYTHON: tuple[int, int] = (3, 11)
"""The Python the cases are checked for (mypy's ``python_version``), whatever runs them: the generated file is the
same everywhere, and the rows whose ``hashable`` column depends on the Python take its value there."""

HASHABLE_ON_PYTHON: dict[str, bool] = {"slice": False}
"""The ``hashable`` column on ``PYTHON`` where the table's depends on the running Python."""

_ATTRS_FROZEN_LIST = f'field "layers" of "AttrsFrozenList": {_LIST}'
_ATTRS_MUTABLE = '"AttrsMutable" is an attrs class with eq=True, frozen=False'


STATIC_REASONS: dict[str, str | None] = {
    "numpy_array": _NDARRAY,
    "jax_array": _ARRAY,
    "dict_with_array": _ARRAY,
    "list_of_arrays": _ARRAY,
    "tuple_with_array": _ARRAY,
    "mutable_dataclass": _MUTABLE,
    "hash_none_class": '"NoHash" sets __hash__ to None',
    "frozen_dataclass_with_list": f'field "layers" of "FrozenWithList": {_LIST}',
    "dict_with_mutable_dataclass": _MUTABLE,
    # The declared type holds Any, which the plugin accepts (the literal is judged on its own, see below).
    "nested_array": None,
    "dict_subclass_with_array": None,
    "typed_dict_with_array": None,
    "namedtuple_call_with_array": None,
    "ordered_dict_with_array": _ARRAY,
    "deque": _hash_none("deque"),
    "user_dict": _hash_none("UserDict"),
    "user_list": _hash_none("UserList"),
    "simple_namespace": _hash_none("SimpleNamespace"),
    "mapping_proxy": _hash_none("MappingProxyType"),
    "generic_holder_of_list": _BOX_LIST,
    "nested_generic_holder_with_array": _BOX_BOX_ARRAY,
    "attrs_frozen_with_list": _ATTRS_FROZEN_LIST,
    "attrs_define": _ATTRS_MUTABLE,
    "eq_without_hash": _eq_only("Vec"),
    "eq_without_hash_inherited": _eq_only("Vec"),
    "str_subclass_eq_without_hash": _eq_only("Caseless"),
}
"""Why the plugin rejects each non-static case passed as a variable of its declared type (``None``: it stays silent,
and why is said above)."""

LITERAL_REASONS: dict[str, str] = {
    "nested_array": _NDARRAY,
    "dict_subclass_with_array": _ARRAY,
    "typed_dict_with_array": _ARRAY,
    "namedtuple_call_with_array": _ARRAY,
}
"""Where the value written as a literal is rejected for another reason than its declared type: a literal's items
(and the values a container's constructor stores) are judged on their own, so ``Any`` in the declared type hides
nothing there."""

DECLARED_REASONS: dict[str, str] = {
    "typed_dict_empty_array_list": _ARRAY,
}
"""Static values whose declared type the plugin rejects as a variable: the type says the list may hold arrays; the
literal shows it holds none."""

PLAIN_LITERAL_REASONS: dict[str, str] = {
    "namedtuple_call_with_list": _LIST,
    "namedtuple_call_with_array": _ARRAY,
    "collections_namedtuple_with_list": _LIST,
}
"""Where plain ``jax.jit`` rejects the value written as a literal though its declared type cannot tell: a named
tuple's constructor stores the values given, and its hash is theirs."""

HASHABLE_REASONS: dict[str, str | None] = {
    "dict_tuple_keys": _DICT,
    "typed_dict": '"Movie" is a dict',
    "dict_of_ints": _DICT,
    "dict_of_functions": _DICT,
    "list_of_ints": _LIST,
    "set_of_str": '"set" sets __hash__ to None',
    "nested_dict_list": _DICT,
    "tuple_with_list": _LIST,
    "list_of_frozen_dataclasses": _LIST,
    "namedtuple_with_list": _LIST,
    "numpy_array": _NDARRAY,
    "jax_array": _ARRAY,
    "dict_with_array": _DICT,
    "list_of_arrays": _LIST,
    "tuple_with_array": _ARRAY,
    "mutable_dataclass": _MUTABLE,
    "hash_none_class": '"NoHash" sets __hash__ to None',
    "frozen_dataclass_with_list": f'field "layers" of "FrozenWithList": {_LIST}',
    "dict_with_mutable_dataclass": _DICT,
    "nested_array": _DICT,
    # Hashable from Python 3.12 only: judged by mypy's python_version (PYTHON here).
    "slice": '"slice" is not hashable before Python 3.12',
    "typed_dict_call": '"MaskCfg" is a dict',
    "typed_dict_with_array": '"AnyCfg" is a dict',
    "ordered_dict": _hash_none("OrderedDict"),
    "ordered_dict_with_array": _hash_none("OrderedDict"),
    "default_dict": _hash_none("defaultdict"),
    "counter": _hash_none("Counter"),
    "dict_subclass": _hash_none("Registry"),
    "dict_subclass_with_array": _hash_none("Registry"),
    "list_subclass": _hash_none("Widths"),
    "deque": _hash_none("deque"),
    "user_dict": _hash_none("UserDict"),
    "user_list": _hash_none("UserList"),
    "simple_namespace": _hash_none("SimpleNamespace"),
    "mapping_proxy": _hash_none("MappingProxyType"),
    "generic_holder_of_list": _BOX_LIST,
    "nested_generic_holder_with_array": _BOX_BOX_ARRAY,
    # A named tuple whose field is declared Any: hash() of the value fails, the declared type cannot tell (the
    # literal can: PLAIN_LITERAL_REASONS).
    "namedtuple_call_with_list": None,
    "namedtuple_call_with_array": None,
    "collections_namedtuple_with_list": None,
    "typed_dict_empty_array_list": '"ArrayMasks" is a dict',
    "attrs_frozen_with_list": _ATTRS_FROZEN_LIST,
    "attrs_define": _ATTRS_MUTABLE,
    "eq_without_hash": _eq_only("Vec"),
    "eq_without_hash_inherited": _eq_only("Vec"),
    "str_subclass_eq_without_hash": _eq_only("Caseless"),
}
"""Why the plugin rejects each non-hashable declared type for plain ``jax.jit`` (``None``: it stays silent), and
each such value passed where plain ``jax.jit`` makes an ``Any`` parameter static (as a variable of the declared
type and as a literal: ``hash()`` finds the same first offending part in both)."""

_CALL = (
    'Argument "option" to "{callee}" cannot be static: {reason}; '
    "pass a hashable value or a builtin container of them  [jaxstatic-unhashable]"
)
_JAX = (
    'Static argument "option" of "takes_hashable" is not hashable: {reason}; '
    "use a hashable type (tuple, frozenset, frozen dataclass) or jaxstatic.Static  [jaxstatic-unhashable]"
)

_PLAIN = (
    'Argument "option" to "plain" is static under jax.jit and must be hashable: {reason}; pass a hashable value '
    "(tuple, frozenset, frozen dataclass), or mark the parameter jaxstatic.Static and compile with jaxstatic.jit  "
    "[jaxstatic-unhashable]"
)

_MAIN = """\
{prelude}
from jaxstatic import Static, jit


def takes_static(x: jax.Array, option: Static[object]) -> jax.Array:
    return x


def takes_hashable(x: jax.Array, option: {{{{ type }}}}) -> jax.Array:
    return x


def takes_anything(x: jax.Array, option: Any) -> jax.Array:
    return x


plain = jax.jit(takes_anything, static_argnames="option")


value: {{{{ type }}}} = {{{{ value }}}}
takes_static(jnp.zeros(3), value){{% if static_error %}}  # E: {{{{ static_error }}}}{{% endif %}}
takes_static(jnp.zeros(3), {{{{ value }}}}){{% if literal_error %}}  # E: {{{{ literal_error }}}}{{% endif %}}
jit(takes_static)(jnp.zeros(3), value){{% if jit_error %}}  # E: {{{{ jit_error }}}}{{% endif %}}
jax.jit(takes_hashable, static_argnames="option"){{% if hashable_error %}}  # E: {{{{ hashable_error }}}}{{% endif %}}
plain(jnp.zeros(3), value){{% if plain_error %}}  # E: {{{{ plain_error }}}}{{% endif %}}
plain(jnp.zeros(3), {{{{ value }}}}){{% if plain_literal_error %}}  # E: {{{{ plain_literal_error }}}}{{% endif %}}
"""


def _expected(table: dict[str, str | None], case_id: str, ok: bool, rule: str) -> str | None:
    if ok:
        if table.get(case_id) is not None:
            raise ValueError(
                f"{case_id!r} is {rule} in the table but has an expected error in generate.py"
            )
        return None
    if case_id not in table:
        raise ValueError(
            f"{case_id!r} is not {rule}: add the plugin's expected reason (or None) to generate.py"
        )
    return table[case_id]


def _row(case_id: str, value: str, type_: str, static: bool, hashable: bool) -> dict[str, str]:
    static_reason = _expected(STATIC_REASONS, case_id, static, "static")
    hash_reason = _expected(HASHABLE_REASONS, case_id, hashable, "hashable")

    declared = DECLARED_REASONS.get(case_id, static_reason)

    def call(callee: str, reason: str | None = declared) -> str:
        return _CALL.format(callee=callee, reason=reason) if reason else ""

    plain_literal = PLAIN_LITERAL_REASONS.get(case_id, hash_reason)

    return {
        "id": case_id,
        "value": value,
        "type": type_,
        "static_error": call("takes_static"),
        "literal_error": call("takes_static", LITERAL_REASONS.get(case_id, static_reason)),
        "jit_error": call("takes_static"),
        "hashable_error": _JAX.format(reason=hash_reason) if hash_reason else "",
        "plain_error": _PLAIN.format(reason=hash_reason) if hash_reason else "",
        "plain_literal_error": _PLAIN.format(reason=plain_literal) if plain_literal else "",
    }


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as ``|`` blocks, so the generated cases read like the hand-written ones."""


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str)


def render() -> str:
    rows = [_row(c.id, c.value, c.type, c.static, HASHABLE_ON_PYTHON.get(c.id, c.hashable)) for c in CASES]
    case = {
        "case": "static_rule",
        "parametrized": rows,
        "main": _MAIN.format(prelude=PRELUDE.rstrip("\n")),
        "mypy_config": f"python_version = {PYTHON[0]}.{PYTHON[1]}",
    }
    header = textwrap.dedent(
        """\
        # GENERATED by tests/typecheck/generate.py from tests/static_cases.py -- do not edit by hand.
        # One mypy run per case: a Static[object] parameter (plain call, literal, through jaxstatic.jit)
        # and plain jax.jit(static_argnames=...): the declared type where it is applied, the value where it is called.
        """
    )
    body = yaml.dump([case], Dumper=_Dumper, sort_keys=False, width=10_000, allow_unicode=True)
    return header + body


_STEP = 'Argument "{param}" to "{callee}" cannot be static: "Array" is an array; pass a hashable value or a builtin container of them'
CALL_REASONS: dict[str, str] = {
    "kwargs_typed_dict_of_arrays": _STEP.format(param="cfg", callee="step"),
    "kwargs_literal_with_array": _STEP.format(param="cfg", callee="step"),
    "args_tuple_with_array": _STEP.format(param="cfg", callee="step"),
    "options_collect_an_array": _STEP.format(param="**options", callee="options_step"),
    "options_literal_splat_with_array": _STEP.format(param="**options", callee="options_step"),
    "options_splat_dict_of_arrays": _STEP.format(param="**options", callee="options_step"),
    "alias_of_static_with_array": _STEP.format(param="cfg", callee="alias_step"),
    "generic_alias_of_static_with_array": _STEP.format(param="sizes", callee="sizes_step"),
    "static_of_alias_with_array": _STEP.format(param="widths", callee="widths_step"),
    "partial_variable_list": (
        'Argument "mode" to "apply" is static under jax.jit and must be hashable: "list" sets __hash__ to None; '
        "pass a hashable value (tuple, frozenset, frozen dataclass), or mark the parameter jaxstatic.Static and "
        "compile with jaxstatic.jit"
    ),
}
"""What the plugin says at each call the runtime refuses (a call case without an entry is an error)."""

_CALL_MAIN = """\
{prelude}
{{{{ setup }}}}
{{{{ call }}}}{{% if error %}}  # E: {{{{ error }}}}  [jaxstatic-unhashable]{{% endif %}}
"""


def render_calls() -> str:
    rows = []
    for c in CALL_CASES:
        error = _expected(CALL_REASONS, c.id, c.static, "static") or ""
        rows.append({"id": c.id, "setup": c.setup or "pass", "call": c.call, "error": error})
    case = {"case": "call_shapes", "parametrized": rows, "main": _CALL_MAIN.format(prelude=CALL_PRELUDE.rstrip("\n"))}
    header = textwrap.dedent(
        """\
        # GENERATED by tests/typecheck/generate.py from tests/static_cases.py (CALL_CASES) -- do not edit by hand.
        # One mypy run per call: the plugin reports exactly the calls the runtime refuses.
        """
    )
    return header + yaml.dump([case], Dumper=_Dumper, sort_keys=False, width=10_000, allow_unicode=True)


def main() -> None:
    OUTPUT.write_text(render())
    CALL_OUTPUT.write_text(render_calls())
    print(f"wrote {OUTPUT} and {CALL_OUTPUT}")


if __name__ == "__main__":
    main()
