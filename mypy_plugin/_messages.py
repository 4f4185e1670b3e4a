"""Every message the plugin prints, in one place: short, names in double quotes, ending with the fix."""

from __future__ import annotations

from typing import Final

UNRESOLVED: Final = (
    'jaxstatic_mypy: module "jaxstatic" is not visible to mypy here, so no Static parameter is checked; install '
    "jaxstatic into the environment mypy runs in, editable installs with "
    '"pip install -e <jaxstatic> --config-settings editable_mode=strict"'
)


class DynamicPytree(str):
    """A reason saying the value is a ``jaxstatic.dataclass`` holding arrays: a dynamic pytree. Its fix is to
    pass it as a regular argument, not to make it hashable."""


def dynamic_pytree(owner: str, field: str) -> DynamicPytree:
    return DynamicPytree(f'"{owner}" is a jaxstatic.dataclass with array fields ("{field}")')


_AS_REGULAR: Final = "pass it as a regular argument; its Static fields still select the program"


def cannot_be_static(param: str, callee: str, reason: str) -> str:
    fix = _AS_REGULAR if isinstance(reason, DynamicPytree) else "pass a hashable value or a builtin container of them"
    return f'Argument "{param}" to "{callee}" cannot be static: {reason}; {fix}'


def static_field(field: str, owner: str, reason: str) -> str:
    return (
        f'Static field "{field}" of "{owner}" cannot hold this value: {reason}; '
        "pass a hashable value or a builtin container of them, or drop Static[...] from the field"
    )


def never_static(shown: str) -> str:
    return (
        f'"Static[{shown}]" can never be static: arrays are not hashable; '
        "drop Static[...] and pass it as a regular (traced) argument"
    )


def not_hashable(param: str, function: str, reason: str) -> str:
    if isinstance(reason, DynamicPytree):
        fix = _AS_REGULAR
    else:
        fix = "use a hashable type (tuple, frozenset, frozen dataclass) or jaxstatic.Static"
    return f'Static argument "{param}" of "{function}" is not hashable: {reason}; {fix}'


def not_hashable_value(param: str, callee: str, reason: str, transform: str = "jax.jit") -> str:
    return (
        f'Argument "{param}" to "{callee}" is static under {transform} and must be hashable: {reason}; '
        "pass a hashable value (tuple, frozenset, frozen dataclass), or mark the parameter jaxstatic.Static and "
        "compile with jaxstatic.jit"
    )


def unknown_name(option: str, name: str, function: str, params: list[str]) -> str:
    return (
        f'{option} names "{name}", which is not a parameter of "{function}"; '
        f"name one of {_listed(params)}"
    )


def unknown_position(option: str, index: int, function: str, params: list[str]) -> str:
    return (
        f'{option} holds {index}, but "{function}" has {len(params)} positional parameters '
        f"({_listed(params)}); use an index in range"
    )


def hidden_marks(
    transform: str, marks: str, function: str, decorator: str, problem: str, library: bool
) -> str:
    if library:
        fix = f'move "{transform}" below it, or wrap "{decorator}" in a decorator typed with ParamSpec'
    else:
        fix = f'annotate "{decorator}" with ParamSpec (functools.wraps keeps no types), or move "{transform}" below it'
    return (
        f'"{transform}" cannot see the {marks} parameters of "{function}": decorator "{decorator}" {problem}; '
        f"{fix}"
    )


def read_after_donation(name: str, callee: str, line: int, later_iteration: bool) -> str:
    where = "in the previous iteration of this loop, and not rebound since" if later_iteration else "before"
    return (
        f'"{name}" was donated to "{callee}" (line {line}) {where}: its buffers are deleted; '
        f'use the value "{callee}" returned ({name} = {callee}(...))'
    )


def _listed(names: list[str]) -> str:
    return ", ".join(f'"{n}"' for n in names) if names else "none"
