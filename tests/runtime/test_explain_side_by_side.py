"""Each retrace explained beside JAX's own explanation (``jax_explain_cache_misses``, read from JAX's logger): jaxstatic
names what changed at least as precisely, with two different sides, no address or internal name, and the fix that
fits (``define it once`` only where the two values are equal builds of the same thing).

Every case runs the same values through ``jax.jit`` too, which traces again as well: the retraces are real."""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import logging
import os
import re
import types
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import config as jax_config

import jaxstatic as js
from jaxstatic import Static
from jaxstatic._compat import JAX_VERSION

_ARROW = re.compile(r": (.*) -> (.*)$")
# JAX's own explanations, in the words these tests expect of them: checked on the JAX they were read from and newer
# (older ones word them otherwise, and name no setting), jaxstatic's own everywhere
READS_JAX = JAX_VERSION >= (0, 10)


def _reads(theirs: str) -> bool:
    """Whether JAX's words are held to the facts: on the JAX they were read from and newer, where JAX explains the
    miss at all (JAX 0.12 says "cache miss explanation unavailable" of a changed static object)."""
    return READS_JAX and "explanation unavailable" not in theirs


class _JaxLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.misses: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "TRACING CACHE MISS" in text:
            self.misses.append(text.split("closest previous key:")[-1])


@contextlib.contextmanager
def _jax_explaining() -> Iterator[_JaxLog]:
    """JAX's explanations of its tracing cache misses, as its logger gives them."""
    handler, logger = _JaxLog(), logging.getLogger("jax")
    before = jax.config.jax_explain_cache_misses  # type: ignore[attr-defined]
    logger.addHandler(handler)
    jax.config.update("jax_explain_cache_misses", True)  # type: ignore[no-untyped-call]
    try:
        yield handler
    finally:
        jax.config.update("jax_explain_cache_misses", before)  # type: ignore[no-untyped-call]
        logger.removeHandler(handler)


def _side_by_side(name: str, values: list[Any], static: bool = True,
                  around: Callable[[int], Any] | None = None) -> tuple[tuple[str, ...], str]:
    """jaxstatic's changes and JAX's explanation of the retrace that passing ``values`` in turn to ``f(x, <name>)``
    causes, ``around(k)`` a context entered around call ``k``."""
    namespace: dict[str, Any] = {}
    exec(f"def f(x, {name}):\n    return x + 1", namespace)
    namespace["f"].__annotations__ = {name: Static[Any] if static else Any}  # type: ignore[misc]
    f = js.jit(namespace["f"])
    reference = jax.jit(lambda x, value: x + 1, static_argnums=(1,) if static else ())
    x = np.ones(2, np.float32)
    with _jax_explaining() as log:
        for k, value in enumerate(values):
            with around(k) if around else contextlib.nullcontext():
                f(x, value)
                reference(x, value)
    assert f.trace_count == reference._cache_size() == len(values)  # type: ignore[attr-defined]
    assert log.misses or not READS_JAX, "JAX explained no miss"
    return f.retraces[-1].changes, log.misses[-1] if log.misses else ""


def _check(ours: tuple[str, ...], theirs: str, *facts: str) -> None:
    """Every fact is in both explanations; each of jaxstatic's lines has two different sides, and none shows an
    address or an internal class."""
    for fact in facts:
        assert not _reads(theirs) or fact in theirs, (fact, theirs)
        assert any(fact in line for line in ours), (fact, ours)
    for line in ours:
        assert "0x" not in line and "_Leaf" not in line, line
        sides = _ARROW.search(line)
        if sides is not None:
            assert sides[1] != sides[2], line


def _identity_fix(label: str, name: str) -> str:
    return (f"{label}: a new {name} object on each call, and {name} compares by identity (it defines no __eq__); "
            f"make it once, or give {name} __eq__ and __hash__")


def _where(fn: Any) -> str:
    code = fn.__code__
    return f"{fn.__qualname__} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"


# -- partials, closures, lambdas ---------------------------------------------------------------------------------


def gelu(x: Any, approximate: bool = True) -> Any:
    return x


def make(scale: float) -> Callable[[Any], Any]:
    return lambda x: x * scale


def test_a_partial_whose_keyword_changed_names_both_values() -> None:
    ours, theirs = _side_by_side("act", [functools.partial(gelu, approximate=True),
                                         functools.partial(gelu, approximate=False)])
    assert ours == ("act.keywords['approximate']: True -> False",)
    _check(ours, theirs, "True", "False")
    assert not _reads(theirs) or ("approximate=True" in theirs and "approximate=False" in theirs)


def test_a_partial_built_again_equal_says_define_it_once() -> None:
    ours, theirs = _side_by_side("act", [functools.partial(gelu, approximate=True),
                                         functools.partial(gelu, approximate=True)])
    assert ours == ("act: a new functools.partial object on each call; define it once",)
    _check(ours, theirs, "partial")


def test_a_lambda_closing_over_another_value_names_the_value() -> None:
    ours, theirs = _side_by_side("act", [make(2.0), make(3.0)])
    assert ours == (f"act: {_where(make(2.0))} captures scale: 2.0 -> 3.0",)
    _check(ours, theirs, "make.<locals>.<lambda>")


def test_a_lambda_built_again_with_equal_values_says_define_it_once() -> None:
    ours, theirs = _side_by_side("act", [make(2.0), make(2.0)])
    fn = make(2.0)
    code = fn.__code__
    assert ours == (f"act: a new function object on each call ({fn.__qualname__}, "
                    f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}); define it once",)
    _check(ours, theirs, "make.<locals>.<lambda>")


def test_a_default_argument_of_a_lambda_is_named() -> None:
    def make_default(scale: float) -> Callable[..., Any]:
        return lambda x, s=scale: x * s

    ours, theirs = _side_by_side("act", [make_default(2.0), make_default(3.0)])
    assert ours == (f"act: {_where(make_default(2.0))} default s: 2.0 -> 3.0",)
    _check(ours, theirs, "<lambda>")


class EqxAct(eqx.Module):
    act: Callable[[Any], Any]


def test_an_equinox_module_holding_a_lambda() -> None:
    ours, theirs = _side_by_side("m", [EqxAct(make(2.0)), EqxAct(make(2.0))])
    assert len(ours) == 1 and ours[0].startswith("m.act: a new function object on each call (make.<locals>.<lambda>")
    assert ours[0].endswith("; define it once")
    _check(ours, theirs, "make.<locals>.<lambda>")
    ours, theirs = _side_by_side("m", [EqxAct(make(2.0)), EqxAct(make(3.0))])
    assert ours == (f"m.act: {_where(make(2.0))} captures scale: 2.0 -> 3.0",)
    _check(ours, theirs, "make.<locals>.<lambda>")


# -- objects without declared fields -----------------------------------------------------------------------------


class Act:
    def __init__(self, slope: float) -> None:
        self.slope = slope

    def __call__(self, x: Any) -> Any:
        return x * self.slope


def test_a_callable_object_built_again_is_named_by_class_with_the_fix() -> None:
    ours, theirs = _side_by_side("act", [Act(0.1), Act(0.1)])
    assert ours == (_identity_fix("act", "Act"),)
    _check(ours, theirs, "Act")
    ours, theirs = _side_by_side("act", [Act(0.1), Act(0.2)])
    assert ours == (_identity_fix("act", "Act"), "act.slope: 0.1 -> 0.2")
    _check(ours, theirs, "Act")


class EqCfg:
    def __init__(self, depth: int, width: int) -> None:
        self.depth, self.width = depth, width

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash(tuple(vars(self).items()))


class Hidden(EqCfg):
    def __repr__(self) -> str:
        return f"Hidden(depth={self.depth})"


class Slotted:
    __slots__ = ("depth", "width")

    def __init__(self, depth: int, width: int) -> None:
        self.depth, self.width = depth, width

    def __eq__(self, other: object) -> bool:
        return type(other) is Slotted and (self.depth, self.width) == (other.depth, other.width)

    def __hash__(self) -> int:
        return hash((self.depth, self.width))


def test_a_class_with_eq_and_hash_and_the_default_repr_names_the_attribute() -> None:
    ours, theirs = _side_by_side("cfg", [EqCfg(2, 4), EqCfg(3, 4)])
    assert ours == ("cfg.depth: 2 -> 3",)
    assert not _reads(theirs) or "EqCfg object at 0x" in theirs  # JAX's sides: two addresses
    _check(ours, theirs)


def test_a_repr_that_hides_the_field_that_changed() -> None:
    ours, theirs = _side_by_side("cfg", [Hidden(2, 4), Hidden(2, 5)])
    assert ours == ("cfg.width: 4 -> 5",)
    assert not _reads(theirs) or theirs.count("Hidden(depth=2)") == 2  # JAX's two sides read the same
    _check(ours, theirs)


def test_slots_are_compared_by_name() -> None:
    ours, theirs = _side_by_side("cfg", [Slotted(2, 4), Slotted(2, 5)])
    assert ours == ("cfg.width: 4 -> 5",)
    _check(ours, theirs)


class Namespace(types.SimpleNamespace):
    """A ``SimpleNamespace`` made hashable, so that it may be static."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(vars(self).items())))


def test_a_simple_namespace_names_the_attribute() -> None:
    ours, theirs = _side_by_side("cfg", [Namespace(depth=2, lr=0.1), Namespace(depth=2, lr=0.2)])
    assert ours == ("cfg.lr: 0.1 -> 0.2",)
    _check(ours, theirs, "0.1", "0.2")


@attrs.define(eq=False, frozen=True)
class NoEq:
    depth: int


def test_an_attrs_class_without_eq_is_said_to_compare_by_identity() -> None:
    ours, theirs = _side_by_side("cfg", [NoEq(2), NoEq(2)])
    assert ours == (_identity_fix("cfg", "NoEq"),)
    _check(ours, theirs, "NoEq")
    ours, theirs = _side_by_side("cfg", [NoEq(2), NoEq(3)])
    assert ours == (_identity_fix("cfg", "NoEq"), "cfg.depth: 2 -> 3")
    _check(ours, theirs, "NoEq")


@dataclasses.dataclass(frozen=True)
class WithLog:
    depth: int
    log: Any = dataclasses.field(compare=False, default=None)


def test_a_dataclass_field_with_compare_false_is_left_out() -> None:
    ours, theirs = _side_by_side("cfg", [WithLog(2, lambda: 1), WithLog(3, lambda: 2)])
    assert ours == ("cfg.depth: 2 -> 3",)
    _check(ours, theirs, "2", "3")
    assert not _reads(theirs) or ("depth=2" in theirs and "depth=3" in theirs)


class Wrapper:
    def __init__(self, depth: int) -> None:
        self.depth = depth

    @js.jit
    def apply(self: Static[Wrapper], x: Any) -> Any:
        return x * self.depth


def test_a_static_self_built_again_keeps_its_class_name() -> None:
    reference = jax.jit(lambda self, x: x * self.depth, static_argnums=(0,))
    x = np.ones(2, np.float32)
    with _jax_explaining() as log:
        for w in (Wrapper(2), Wrapper(2)):
            w.apply(x)
            reference(w, x)
    ours = Wrapper.apply.retraces[-1].changes
    assert ours == (_identity_fix("self", "Wrapper"),)
    _check(ours, log.misses[-1] if log.misses else "", "Wrapper")


def test_a_frozen_pydantic_model_names_the_field() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Cfg(pydantic.BaseModel):  # type: ignore[misc,name-defined]
        model_config = pydantic.ConfigDict(frozen=True)
        depth: int
        lr: float

    ours, theirs = _side_by_side("cfg", [Cfg(depth=2, lr=0.1), Cfg(depth=2, lr=0.2)])
    assert ours == ("cfg.lr: 0.1 -> 0.2",)
    _check(ours, theirs, "0.1", "0.2")
    assert not _reads(theirs) or ("lr=0.1" in theirs and "lr=0.2" in theirs)


def test_a_frozen_config_dict_names_the_key() -> None:
    ml_collections = pytest.importorskip("ml_collections")
    old, new = (ml_collections.FrozenConfigDict({"depth": 2, "opt": {"lr": lr}}) for lr in (0.1, 0.2))
    ours, theirs = _side_by_side("cfg", [old, new])
    assert ours == ("cfg['opt']['lr']: 0.1 -> 0.2",)
    _check(ours, theirs, "0.1", "0.2")


# -- traced arguments --------------------------------------------------------------------------------------------


def test_an_optional_argument_given_after_none_says_what_was_passed() -> None:
    ours, theirs = _side_by_side("mask", [None, np.ones(3, np.float32)], static=False)
    assert ours == ("mask: None -> an array float32[3]",)
    _check(ours, theirs, "None")
    assert not _reads(theirs) or "NoneType" in theirs
    ours, theirs = _side_by_side("mask", [np.ones(3, np.float32), None], static=False)
    assert ours == ("mask: an array float32[3] -> None",)


def test_an_nnx_model_switched_to_eval_names_deterministic() -> None:
    nnx = pytest.importorskip("flax.nnx")

    class Net(nnx.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            self.lin = nnx.Linear(2, 2, rngs=nnx.Rngs(0))
            self.drop = nnx.Dropout(0.5, rngs=nnx.Rngs(1))

    model = Net()
    evaluated = nnx.clone(model)
    evaluated.eval()
    ours, theirs = _side_by_side("model", [model, evaluated], static=False)
    assert ours == ("model.drop.deterministic: False -> True",)
    _check(ours, theirs, ".drop", "deterministic")


def test_a_plain_attribute_of_an_nnx_module_is_named() -> None:
    nnx = pytest.importorskip("flax.nnx")

    class Scaled(nnx.Module):  # type: ignore[misc,name-defined]
        def __init__(self, scale: float) -> None:
            self.lin = nnx.Linear(2, 2, rngs=nnx.Rngs(0))
            self.scale = scale

    ours, theirs = _side_by_side("model", [Scaled(2.0), Scaled(3.0)], static=False)
    assert ours == ("model.scale: 2.0 -> 3.0",)
    _check(ours, theirs, "scale", "2.0", "3.0")


# -- JAX's settings and contexts ---------------------------------------------------------------------------------


@contextlib.contextmanager
def _x64(on: bool) -> Iterator[None]:
    before = jax.config.jax_enable_x64  # type: ignore[attr-defined]
    jax.config.update("jax_enable_x64", on)  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", before)  # type: ignore[no-untyped-call]


@pytest.mark.usefixtures("hit_path")
def test_a_setting_toggled_between_calls_is_named() -> None:
    ours, theirs = _side_by_side("n", [1, 1], around=lambda k: _x64(k == 1))
    assert ours == ("the JAX setting jax_enable_x64: False -> True",)
    _check(ours, theirs, "jax_enable_x64")


@pytest.mark.usefixtures("hit_path")
def test_a_context_around_the_call_is_named() -> None:
    before = jax.config.jax_default_matmul_precision  # type: ignore[attr-defined]  # "highest" on an accelerator
    precision = "float32" if before != "float32" else "bfloat16"
    ours, theirs = _side_by_side(
        "n", [1, 1], around=lambda k: jax.default_matmul_precision(precision) if k else contextlib.nullcontext())
    assert ours == (f"the JAX setting jax_default_matmul_precision: {before!r} -> {precision!r}",)
    _check(ours, theirs, "jax_default_matmul_precision", precision)


def test_a_rank_promotion_context_is_named_as_jax_s_own_tests_change_it() -> None:
    ours, theirs = _side_by_side(
        "n", [1, 1], around=lambda k: jax.numpy_rank_promotion("warn") if k else contextlib.nullcontext())
    assert ours == ("the JAX setting jax_numpy_rank_promotion: 'allow' -> 'warn'",)
    _check(ours, theirs, "jax_numpy_rank_promotion", "warn")


def test_a_setting_is_named_where_jax_does_not_name_its_context(monkeypatch: pytest.MonkeyPatch) -> None:
    def unnamed() -> tuple[str, ...]:
        raise NotImplementedError("trace_context_names is not supported in this JAX version.")

    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    monkeypatch.setattr(jax_config, "trace_context_names", unnamed, raising=False)  # (JAX's explain would fail too)
    f(jnp.ones(2, jnp.float32), 1)
    with _x64(True):
        f(jnp.ones(2, jnp.float32), 1)
    assert f.retraces[-1].changes == ("the JAX setting jax_enable_x64: False -> True",)


# -- the report --------------------------------------------------------------------------------------------------


def test_the_report_shows_no_miss_without_a_trace() -> None:
    @js.jit
    def reported_train(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    js.vmap(reported_train)(jnp.ones((2, 2), jnp.float32), 1)
    rows = [line.split()[:4] for line in js.trace_report().splitlines() if "reported_train" in line]
    assert rows == [["jit(reported_train)", "1", "0", "1"], ["vmap(jit(reported_train))", "1", "0", "1"]]


def test_a_side_cut_short_keeps_the_class_of_an_object_shown_by_address() -> None:
    from jaxstatic._object_diff import sides

    old, new = (f"Holder(name={'x' * 60!r}, part=<train.Wrapper object at 0x7f25247f{tail}>)"
                for tail in ("1c50", "9d10"))
    assert sides(old, new) == ("...<train.Wrapper object at 0x7f25247f1c50>)",
                               "...<train.Wrapper object at 0x7f25247f9d10>)")


class Mode(enum.Enum):
    TRAIN = 1
    EVAL = 2


def test_an_enum_member_is_said_as_it_is() -> None:
    ours, theirs = _side_by_side("mode", [Mode.TRAIN, Mode.EVAL])
    assert ours == ("mode: <Mode.TRAIN: 1> -> <Mode.EVAL: 2>",)
    _check(ours, theirs, "Mode.TRAIN", "Mode.EVAL")


def test_a_jitted_function_built_again_says_make_it_once() -> None:
    ours, theirs = _side_by_side("fn", [jax.jit(gelu), jax.jit(gelu)])
    assert ours == ("fn: a new PjitFunction object on each call, and PjitFunction compares by identity; make it once",)
    _check(ours, theirs, "PjitFunction")


def test_two_functions_of_the_same_name_and_other_code_are_told_apart_by_place() -> None:
    first = lambda x: x  # noqa: E731
    second = lambda x: x  # noqa: E731
    ours, theirs = _side_by_side("act", [first, second])
    assert ours == (f"act: {_where(first)} -> {_where(second)}",)
    _check(ours, theirs, "<lambda>")
