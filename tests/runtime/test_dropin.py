"""``jaxstatic.jit`` as a drop-in for ``jax.jit``: what code written for ``jax.jit`` relies on (the classes of its
errors, the options it takes, ``_cache_size()``, ``lower().args_info``, when it warns), run against both; and the
differences the jit guide documents, as documented."""

from __future__ import annotations

import functools
import gc
import os
import sys
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from jax.sharding import NamedSharding, PartitionSpec as P

import jaxstatic as js
from jaxstatic import Static, _compat, _extension

JITS = [pytest.param(jax.jit, id="jax.jit"), pytest.param(js.jit, id="js.jit")]


def three(a: Any, b: Any, c: Any) -> Any:
    return a


def varargs(a: Any, *rest: Any) -> Any:
    return a


def varkw(a: Any, b: Any, **kw: Any) -> Any:
    return a


# -- the classes of errors: jaxstatic's is an instance of each class jax.jit raises ---------------------------


_BAD_OPTIONS: list[tuple[Callable[..., Any], dict[str, Any]]] = [
    (three, {"static_argnums": 3}),
    (three, {"static_argnums": -4}),
    (three, {"donate_argnums": 3}),
    (three, {"static_argnames": "d"}),
    (three, {"donate_argnames": "d"}),
    (three, {"static_argnames": "a", "donate_argnames": "a"}),
    (three, {"static_argnums": 0, "donate_argnums": 0}),
    (varargs, {"static_argnames": "rest"}),
]


@pytest.mark.parametrize("jit", JITS)
@pytest.mark.parametrize(("fn", "options"), _BAD_OPTIONS)
def test_a_bad_option_is_a_value_error_at_decoration(jit: Any, fn: Callable[..., Any], options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        jit(fn, **options)


@pytest.mark.parametrize(("fn", "options", "message"), [
    (three, {"static_argnums": 3}, r"static_argnums of three contains 3, but three\(a, b, c\) has 3 positional"),
    (three, {"donate_argnames": "d"}, r"donate_argnames of three names 'd', which is not a parameter of three"),
    (three, {"static_argnames": "a", "donate_argnames": "a"}, r"donate_argnums/donate_argnames of three names 'a', "
                                                              r"which is Static"),
    (varkw, {"static_argnames": "n", "donate_argnames": "n"}, r"donate_argnames of varkw names 'n', which is Static"),
])
def test_a_bad_option_is_still_an_option_error_and_a_type_error(fn: Callable[..., Any], options: dict[str, Any],
                                                                message: str) -> None:
    with pytest.raises(js.OptionError, match=message) as info:
        js.jit(fn, **options)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


_SHARDING_OPTIONS: list[dict[str, Any]] = [
    {"in_shardings": P.UNCONSTRAINED},
    {"out_shardings": P.UNCONSTRAINED},
    {"in_shardings": (None, P.UNCONSTRAINED, None)},
    {"in_shardings": P(P.UNCONSTRAINED, None)},
    {"out_shardings": (P(), P("x", P.UNCONSTRAINED))},
    {"in_shardings": P(), "backend": "cpu"},
    {"out_shardings": P(), "device": jax.devices()[0]},
]


@pytest.mark.filterwarnings("ignore:.*(backend|device).*:DeprecationWarning")
@pytest.mark.parametrize("options", _SHARDING_OPTIONS)
def test_sharding_options_jax_jit_refuses_are_refused_when_applied(options: dict[str, Any]) -> None:
    with pytest.raises((TypeError, ValueError)) as jax_info:
        jax.jit(three, **options)
    with pytest.raises(type(jax_info.value)):
        js.jit(three, **options)


@pytest.mark.filterwarnings("ignore:.*(backend|device).*:DeprecationWarning")
@pytest.mark.parametrize(("options", "message"), [
    ({"in_shardings": (None, P.UNCONSTRAINED, None)},
     "jaxstatic: in_shardings of three holds P.UNCONSTRAINED at [1]: Unconstrained dims are not allowed when "
     "passed to jit, as they fix no layout. Give a Sharding, a "
     "PartitionSpec without P.UNCONSTRAINED or None there; leave a dimension unconstrained with "
     "jax.lax.with_sharding_constraint inside the function."),
    ({"out_shardings": NamedSharding(jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",)), P(P.UNCONSTRAINED))},
     "jaxstatic: out_shardings of three holds P.UNCONSTRAINED: Unconstrained dims are not allowed when passed "
     "to jit, as they fix no layout. Give a Sharding, a "
     "PartitionSpec without P.UNCONSTRAINED or None there; leave a dimension unconstrained with "
     "jax.lax.with_sharding_constraint inside the function."),
    ({"out_shardings": P(), "device": jax.devices()[0]},
     "jaxstatic: out_shardings of three is given together with device=, which jax.jit refuses. Drop device= "
     "(deprecated) and place the program by its shardings, or drop out_shardings."),
])
def test_a_refused_sharding_option_names_the_option_the_place_and_the_fix(options: dict[str, Any],
                                                                         message: str) -> None:
    with pytest.raises(js.OptionError) as info:
        js.jit(three, **options)
    assert str(info.value) == message


def test_a_named_sharding_with_an_unconstrained_dim_is_refused_as_jax_jit_refuses_it() -> None:
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))
    unconstrained = NamedSharding(mesh, P(P.UNCONSTRAINED, "x"))
    try:
        jax.jit(three, in_shardings=unconstrained)
    except ValueError as error:
        assert "Unconstrained dims are not allowed" in str(error)
    else:  # JAX 0.4 accepts it when applied
        assert jax.__version_info__ < (0, 5)
    # the same class, and JAX's sentence, which JAX's own tests match
    with pytest.raises(ValueError, match=r"in_shardings of three holds P\.UNCONSTRAINED: Unconstrained dims are not "
                                         r"allowed when passed to jit") as info:
        js.jit(three, in_shardings=unconstrained)
    assert isinstance(info.value, js.OptionError)


@pytest.mark.parametrize("jit", JITS)
def test_a_non_hashable_static_is_a_value_error(jit: Any) -> None:
    f = jit(lambda a, b, c: a, static_argnums=1)
    f(1.0, 1, 2.0)
    with pytest.raises(ValueError):
        f(1.0, np.asarray(1), 2.0)


class _EqRaises:
    def __hash__(self) -> int:
        return 1

    def __eq__(self, other: object) -> bool:
        raise NotImplementedError("cannot compare")


@pytest.mark.parametrize("jit", JITS)
def test_a_static_whose_eq_raises_is_a_value_error(jit: Any) -> None:
    f = jit(lambda a, b, c: a, static_argnums=1)  # a function of its own: jax.jit's cache is by function
    f(1.0, _EqRaises(), 2.0)  # compared with nothing yet
    with pytest.raises(ValueError):
        f(1.0, _EqRaises(), 2.0)  # its hash meets the first one's: compared


def test_a_static_whose_eq_raises_is_named(hit_path: str) -> None:
    def f(x: jax.Array, n: Static[int], cfg: Static[Any]) -> jax.Array:
        return x

    f_jit = js.jit(f)
    f_jit(1.0, 1, _EqRaises())
    with pytest.raises(js.NonStaticValueError, match=r"f\(\): parameter 'cfg' is Static, but comparing its value "
                                                     r"\(a .*_EqRaises\) with an earlier static value raised "
                                                     r"NotImplementedError: cannot compare\. A static value must be "
                                                     r"comparable with ==") as info:
        f_jit(1.0, 1, _EqRaises())
    assert isinstance(info.value.__cause__, NotImplementedError)
    assert f_jit.cache_info().currsize == 1


@pytest.mark.parametrize("error", [_EqRaises, lambda: np.asarray(1)])
def test_a_static_that_cannot_be_compared_or_hashed_is_a_value_error_on_both_hit_paths(
        error: Callable[[], Any], hit_path: str) -> None:
    f = js.jit(lambda a, b, c, **kw: a, static_argnums=1)  # **kw: the general path, not the exact-key lane
    f(1.0, 1, 2.0)
    assert (type(type(f).__call__).__name__ == "KeyCall") == (hit_path == "C hit")
    if error is _EqRaises:
        f(1.0, error(), 2.0)  # the first is compared with nothing
    with pytest.raises(js.NonStaticValueError) as info:
        f(1.0, error(), 2.0)
    assert isinstance(info.value, ValueError)
    assert int(f(3.0, 1, 2.0)) == 3  # the hits go on
    assert f.cache_info().hits == 1


class _HashRaises:
    def __hash__(self) -> int:
        raise ValueError("no hash")


@pytest.mark.parametrize("jit", JITS)
def test_a_static_whose_hash_raises_raises_that_error_as_it_is(jit: Any) -> None:
    f = jit(lambda a, b, c: a, static_argnums=1)
    f(1.0, 1, 2.0)
    with pytest.raises(ValueError, match=r"^no hash$"):
        f(1.0, _HashRaises(), 2.0)


@pytest.mark.parametrize("jit", JITS)
def test_donate_argnames_on_a_callable_without_a_signature_is_a_value_error(jit: Any) -> None:
    with pytest.raises(ValueError):
        jit(dict, donate_argnames="a")


@pytest.mark.parametrize("jit", JITS)
def test_jit_over_a_staticmethod_is_refused_at_decoration(jit: Any) -> None:
    with pytest.raises(TypeError):
        class A:
            @jit
            @staticmethod
            def f(x: jax.Array) -> jax.Array:
                return x


def test_jit_over_a_staticmethod_says_where_staticmethod_goes() -> None:
    with pytest.raises(js.OptionError, match=r"jaxstatic\.jit of three was given a staticmethod, which it cannot bind "
                                             r"as one\. Put @staticmethod above the transform"):
        js.jit(staticmethod(three))

    class A:  # the fix the message gives
        @staticmethod
        @js.jit
        def f(x: jax.Array) -> jax.Array:
            return x + 2

    assert int(A.f(1)) == int(A().f(1)) == 3


# -- options jax.jit takes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("jit", JITS)
@pytest.mark.parametrize("options", [
    {"static_argnums": (0, 999)}, {"donate_argnums": (0, 999)}, {"donate_argnums": -999},
])
def test_argnums_past_the_named_parameters_of_a_varargs_function_are_taken(jit: Any, options: dict[str, Any]) -> None:
    def fresh(a: Any, *rest: Any) -> Any:  # a function of its own: JAX keeps what it read of one it jitted before
        return a

    assert int(jit(fresh, **options)(1)) == 1


def test_a_negative_static_argnum_before_the_first_argument_is_left_out() -> None:
    # A documented difference ("A negative position counts from the named parameters"): jax.jit counts -999 from
    # the end of each call's arguments, and before JAX 0.12 raises at the call; jaxstatic counts it from the named
    # parameters once, and leaves out an index that reaches none, as it (and jax.jit) leaves out 999.
    def fresh(a: Any, *rest: Any) -> Any:
        return a

    assert int(js.jit(fresh, static_argnums=(0, -999))(1)) == 1
    assert int(js.jit(fresh, static_argnums=(0, -999))(1, 2, 3)) == 1


@pytest.mark.parametrize("jit", JITS)
@pytest.mark.parametrize("option", ["static_argnames", "donate_argnames"])
def test_argnames_of_kwargs_entries_are_taken(jit: Any, option: str) -> None:
    assert int(jit(varkw, **{option: ("a", "not_a_parameter")})(1, 2)) == 1


@pytest.mark.parametrize("jit", JITS)
def test_a_static_argnums_into_args_makes_that_extra_static(jit: Any) -> None:
    traced: list[Any] = []

    def f(x: jax.Array, *rest: Any) -> jax.Array:
        traced.append(rest)
        return x * rest[1] + rest[0] if len(rest) > 1 else x

    g = jit(f, static_argnums=2)  # rest[1]
    assert float(g(1.0, 2.0, 3)) == 5.0
    assert isinstance(traced[-1][1], int)  # static: the caller's int, not a tracer
    assert float(g(1.0, 5.0, 3)) == 8.0  # the same static value: no trace
    assert float(g(1.0, 5.0, 4)) == 9.0  # another: a trace
    assert g(jnp.ones(2), 5.0, 4, 7.0).tolist() == [9.0, 9.0]  # another extra after it, traced
    assert float(g(1.0)) == 1.0  # no extra there: nothing static
    assert len(traced) == 4


@pytest.mark.parametrize("jit", JITS)
def test_a_static_argname_of_a_kwargs_entry_makes_that_entry_static(jit: Any) -> None:
    traced: list[dict[str, Any]] = []

    def f(x: jax.Array, **kw: Any) -> jax.Array:
        traced.append(kw)
        return x * kw.get("n", 1) + kw.get("b", 0) - kw.get("m", 0)

    g = jit(f, static_argnames=("n", "m"))
    assert float(g(1.0, n=2, b=3.0)) == 5.0
    assert isinstance(traced[-1]["n"], int)
    assert float(g(1.0, b=4.0, n=2)) == 6.0  # the keywords in another order: the same program
    assert float(g(1.0, n=3)) == 3.0
    assert float(g(2.0, m=3)) == -1.0  # another entry with the same value: its own program
    assert float(g(2.0, n=3)) == 6.0
    assert len(traced) == 3


_calls = st.lists(st.tuples(st.integers(0, 2), st.sampled_from([1, 2]), st.sampled_from(["n", "m", None])),
                  min_size=1, max_size=8)


@settings(max_examples=10, deadline=None)
@given(_calls)
def test_static_extras_give_the_function_s_results_and_trace_as_jax_jit_does(
        calls: list[tuple[int, int, str | None]]) -> None:
    """Any sequence of calls with extras after the named parameter and keyword entries, some of them static by
    jax.jit's options: the function's own results, and never more traces than jax.jit."""
    def f(x: Any, *rest: Any, **kw: Any) -> Any:
        return x + sum(rest) * 10 + sum(kw.values()) * 100

    ours, theirs = js.jit(f, static_argnums=2, static_argnames="n"), jax.jit(f, static_argnums=2, static_argnames="n")
    counted = js.jit(lambda *a, **k: f(*a, **k), static_argnums=2, static_argnames="n")
    before = counted.trace_count  # a closure over an equal f made by an earlier example shares its programs
    for extras, value, keyword in calls:
        args, kwargs = (1.0, *[value] * extras), ({keyword: value} if keyword else {})
        assert float(ours(*args, **kwargs)) == float(theirs(*args, **kwargs)) == f(*args, **kwargs)
        counted(*args, **kwargs)
    assert counted.trace_count - before <= theirs._cache_size()


def test_static_extras_are_hits_on_both_hit_paths(hit_path: str) -> None:
    def f(x: jax.Array, *rest: Any, **kw: Any) -> jax.Array:
        return x * rest[0] * kw["n"]

    g = js.jit(f, static_argnums=1, static_argnames="n")
    for _ in range(3):
        assert float(g(2.0, 3, n=4)) == 24.0
        assert float(g(2.0, 5, n=4)) == 40.0
    assert g.trace_count == 2 and g.cache_info().hits == 4


def test_a_jit_over_a_transform_with_static_extras_keeps_them_static() -> None:
    def f(x: jax.Array, *rest: Any, **kw: Any) -> jax.Array:
        assert isinstance(rest[0], int) and isinstance(kw["n"], int)
        return x * rest[0] * kw["n"]

    g = js.jit(js.checkpoint(f, static_argnums=1, static_argnames="n"))
    assert g(jnp.ones(2), 3, n=2).tolist() == [6.0, 6.0]


@pytest.mark.parametrize("jit", JITS)
def test_a_donate_argname_of_a_kwargs_entry_donates_it(jit: Any) -> None:
    z = jnp.ones(3)
    out = jit(lambda x, **kw: x + kw["z"], donate_argnames="z")(jnp.ones(3), z=z)
    assert out.tolist() == [2.0] * 3 and z.is_deleted()


def test_a_donate_argname_of_a_kwargs_entry_reaches_the_program() -> None:
    f = js.jit(lambda x, **kw: x + kw["z"], donate_argnames="z")
    ours = f.lower(jnp.ones(3), z=jnp.ones(3)).args_info
    theirs = jax.jit(lambda x, **kw: x + kw["z"], donate_argnames="z").lower(jnp.ones(3), z=jnp.ones(3)).args_info
    assert [a.donated for a in ours[0]] == [a.donated for a in theirs[0]] == [False]
    assert ours[1]["z"].donated and theirs[1]["z"].donated


# -- builtins and classes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("jit", JITS)
def test_a_class_without_a_signature_is_called_as_it_is(jit: Any) -> None:
    out = jit(dict)(a=jnp.ones(2), b=1.0)
    assert out["a"].tolist() == [1.0, 1.0] and float(out["b"]) == 1.0


@pytest.mark.parametrize("jit", JITS)
def test_int_of_a_traced_value_fails_as_jax_jit_fails(jit: Any) -> None:
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jit(int)(3)


@pytest.mark.parametrize("jit", JITS)
def test_static_argnums_of_a_callable_without_a_signature(jit: Any) -> None:
    traced = []

    def spy(*args: Any) -> Any:
        traced.append(args)
        return args[0] * args[1]

    class NoSignature:  # a callable instance whose signature inspect cannot read
        __signature__ = "not a signature"

        def __call__(self, *args: Any) -> Any:
            return spy(*args)

    f = jit(NoSignature(), static_argnums=1)
    assert float(f(2.0, 3)) == float(f(4.0, 3)) / 2 == 6.0
    assert isinstance(traced[0][1], int) and len(traced) == 1


# -- _cache_size() and lower().args_info ---------------------------------------------------------------------------


@pytest.mark.parametrize("jit", JITS)
def test_cache_size_counts_entries_per_static_value_and_shape(jit: Any) -> None:
    f = jit(lambda x, n: x * n, static_argnums=1)
    assert f._cache_size() == 0
    f(jnp.ones(2), 2)
    f(jnp.ones(2), 2)
    assert f._cache_size() == 1
    f(jnp.ones(3), 2)
    f(jnp.ones(3), 3)
    assert f._cache_size() == 3
    f.clear_cache()
    assert f._cache_size() == 0


def test_cache_size_of_a_jitted_method_is_its_function_s() -> None:
    class A:
        @functools.partial(js.jit, static_argnums=0)
        def f(self, x: jax.Array, n: Static[int]) -> jax.Array:
            return x * n

    a = A()
    a.f(1.0, 2)
    a.f(1.0, 3)
    assert a.f._cache_size() == A.f._cache_size() == 2


@pytest.mark.parametrize("jit", JITS)
@pytest.mark.parametrize(("options", "call"), [
    ({"donate_argnames": ("z", "y")}, "all by keyword"),
    ({"donate_argnums": (0, 1)}, "all by keyword"),
    ({"donate_argnames": ("z", "y")}, "first by position"),
])
def test_args_info_keeps_keyword_arguments_in_kwargs_info(jit: Any, options: dict[str, Any], call: str) -> None:
    f = jit(lambda z, y, x: (z, y, x), **options)
    z, y, x = {"c": 3.0}, {"b": 2.0}, {"a": 1.0}
    if call == "all by keyword":
        args_info, kwargs_info = f.lower(z=z, y=y, x=x).args_info
        assert args_info == () and kwargs_info["z"]["c"].donated
    else:
        args_info, kwargs_info = f.lower(z, y=y, x=x).args_info
        assert args_info[0]["c"].donated and "z" not in kwargs_info
    assert kwargs_info["y"]["b"].donated and not kwargs_info["x"]["a"].donated


@pytest.mark.parametrize("jit", JITS)
def test_trace_args_info_keeps_keyword_arguments_in_kwargs_info(jit: Any) -> None:
    traced = jit(lambda z, y: z + y).trace(1.0, y=jnp.ones(2))
    args_info, kwargs_info = traced.args_info
    assert len(args_info) == 1 and kwargs_info["y"].shape == (2,)
    assert "add" in str(traced.jaxpr)


@pytest.mark.parametrize("jit", JITS)
def test_args_info_leaves_static_arguments_out(jit: Any) -> None:
    def f(a: Any, n: Any, b: Any, *rest: Any, c: Any = 1, **kw: Any) -> Any:
        return a

    g = jit(f, static_argnums=1, donate_argnums=0)
    args_info, kwargs_info = g.lower(1.0, 2, 3.0, 4.0, 5.0, c=6.0, d=7.0).args_info
    assert [a.donated for a in args_info] == [True, False, False, False]
    assert sorted(kwargs_info) == ["c", "d"]
    args_info, kwargs_info = g.lower(1.0, 2, b=3.0, c=6.0, d=7.0).args_info
    assert len(args_info) == 1 and sorted(kwargs_info) == ["b", "c", "d"]


# -- warnings when jit is applied ----------------------------------------------------------------------------------


@pytest.mark.parametrize("jit", JITS)
def test_the_device_option_warns_when_jit_is_applied_and_never_again(jit: Any) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = jit(lambda x, n: x * n, static_argnums=1, device=jax.devices()[0])
        assert [w.category for w in caught] == [DeprecationWarning]
        assert "backend and device argument" in str(caught[0].message)
        if jit is js.jit:  # the line that applied jit (JAX before 0.5 points its own at pjit.py)
            assert caught[0].filename == __file__
        f(1.0, 2)
        f(1.0, 3)  # a program per static value: none warns
    assert len(caught) == 1


def test_the_device_option_under_warnings_as_errors_fails_at_decoration_and_calls_work() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(DeprecationWarning, match="backend and device argument"):
            js.jit(lambda x: x, device=jax.devices()[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        f = js.jit(lambda x, n: x * n, static_argnums=1, device=jax.devices()[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert float(f(1.0, 2)) + float(f(1.0, 3)) == 5.0


# -- documented differences (docs/guides/jit.md, "Differences from jax.jit") ---------------------------------------


def test_a_positional_only_parameter_can_be_named_static() -> None:
    def f(x: jax.Array, n: int, /) -> jax.Array:
        return x * n

    with pytest.raises(ValueError):
        jax.jit(f, static_argnames="n")
    assert float(js.jit(f, static_argnames="n")(1.0, 3)) == 3.0


def test_a_positional_only_parameter_can_be_named_donated() -> None:
    def f(x: jax.Array, y: jax.Array, /) -> jax.Array:
        return x + y

    with pytest.raises(ValueError, match="positional-only"):
        jax.jit(f, donate_argnames="y")
    y = jnp.ones(2)
    assert js.jit(f, donate_argnames="y")(jnp.ones(2), y).tolist() == [2.0, 2.0]
    assert y.is_deleted()


def test_a_dynamic_argument_moved_to_a_keyword_shares_the_program() -> None:
    traces = []

    def f(x: jax.Array, y: jax.Array) -> jax.Array:
        traces.append(None)
        return x + y

    for jit, want in ((jax.jit, 3), (js.jit, 1)):
        traces.clear()
        g = jit(f)
        g(1.0, 2.0), g(1.0, y=2.0), g(x=1.0, y=2.0)
        assert len(traces) == want


def test_in_shardings_apply_to_arguments_given_by_keyword() -> None:
    mesh = jax.make_mesh((1,), ("d",))
    one = NamedSharding(mesh, P())

    def f(x: jax.Array, y: jax.Array) -> jax.Array:
        return x + y

    with pytest.raises(ValueError, match="pjit does not support kwargs when in_shardings is specified"):
        jax.jit(f, in_shardings=(one, one))(1.0, y=jnp.float32(2.0))
    out = js.jit(f, in_shardings=(one, one))(1.0, y=jnp.float32(2.0))
    assert float(out) == 3.0 and out.sharding == one


class _NoWeakReference:
    __slots__ = ()

    def __call__(self, x: jax.Array) -> jax.Array:
        return x * 2


def test_a_callable_without_weak_references_is_jitted() -> None:
    with pytest.raises(TypeError, match="cannot create weak reference"):
        jax.jit(_NoWeakReference())(1.0)
    assert float(js.jit(_NoWeakReference())(1.0)) == 2.0


def test_repr_names_the_transform_and_the_function() -> None:
    assert repr(js.jit(three)) == "<jaxstatic.jit of three>"


@pytest.mark.parametrize(("fn", "name"), [(three, "three"), (functools.partial(three, b=1), "three"),
                                           (lambda: None, "<lambda>")], ids=["function", "partial", "lambda"])
def test_the_name_jax_jit_pickles_is_js_jit_s_name(fn: Callable[..., Any], name: str) -> None:
    """JAX's tests read ``jax.jit(f).__getstate__()["function_name"]``, PjitFunction's pickled state; js.jit's name
    is a function's ``__name__``, the same string (the jit guide's "JAX's private machinery")."""
    theirs = jax.jit(fn).__getstate__()["function_name"]  # type: ignore[attr-defined]
    assert theirs in (name, "<unnamed function>")  # JAX before 0.5 left a partial unnamed
    assert js.jit(fn).__name__ == name
    assert repr(js.jit(fn)) == f"<jaxstatic.jit of {name}>"  # and errors and reports name it so


class _Unprintable:
    def __call__(self) -> None:
        pass

    def __repr__(self) -> str:
        raise ValueError("invalid repr")


def test_repr_holds_when_the_callable_s_repr_fails_and_wrapped_is_read_only() -> None:
    jitted = js.jit(_Unprintable())
    assert repr(jitted) == "<jaxstatic.jit of _Unprintable>"
    with pytest.raises(AttributeError):
        del jitted.__wrapped__  # type: ignore[misc]


def _generator(x: Any) -> Any:
    yield x


class _NoSignature:
    @property
    def __signature__(self) -> Any:
        raise TypeError("no signature")

    def __call__(self, *args: Any) -> None:
        return None


def _deleted() -> jax.Array:
    x = jnp.arange(3.0)
    x.delete()
    return x


_REFUSED: dict[str, Callable[[Any], Any]] = {
    "not callable": lambda jit: jit(3),
    "generator function": lambda jit: jit(_generator),
    "classmethod": lambda jit: jit(classmethod(three), static_argnums=(0,)),
    "staticmethod": lambda jit: jit(staticmethod(three)),
    "non-hashable static": lambda jit: jit(three, static_argnums=1)(1.0, np.arange(3), 2.0),
    "str argument": lambda jit: jit(three)("foo", 1.0, 2.0),
    "dtype argument": lambda jit: jit(three)(jnp.int32, 1.0, 2.0),
    "masked array": lambda jit: jit(three)(np.ma.array([1, 2], mask=[True, False]), 1.0, 2.0),
    "donate_argnames without a signature": lambda jit: jit(_NoSignature(), donate_argnames="a")(1.0, 2.0),
    "static and donated": lambda jit: jit(three, static_argnames="a", donate_argnames="a"),
    "deleted array": lambda jit: jit(three)(_deleted(), 1.0, 2.0),
}


@pytest.mark.parametrize("refused", _REFUSED.values(), ids=list(_REFUSED))
def test_what_jax_jit_refuses_js_jit_refuses_with_an_error_of_the_same_class(refused: Callable[[Any], Any]) -> None:
    with pytest.raises((TypeError, ValueError, RuntimeError)) as jax_info:
        refused(jax.jit)
    with pytest.raises(type(jax_info.value)):  # the wording is jaxstatic's own
        refused(js.jit)


def test_a_parameter_named_static_is_static_by_position_and_by_keyword() -> None:
    seen: list[Any] = []

    def f(x: jax.Array, y: Any) -> jax.Array:
        seen.append(y)
        return x

    g = js.jit(f, static_argnums=1, static_argnames=())
    g(1.0, 2)
    g(1.0, y=2)  # the same program: y is 2 either way
    g(1.0, y="by keyword")
    assert seen == [2, "by keyword"]
    with pytest.raises(TypeError, match="abstract array"):  # jax.jit: by keyword, y is traced
        jax.jit(f, static_argnums=1, static_argnames=())(1.0, y="by keyword")


def test_a_negative_static_argnums_counts_from_the_named_parameters() -> None:
    traced = []

    def f(x: jax.Array, n: int, *rest: Any) -> jax.Array:
        traced.append(n)
        return x * n

    assert float(js.jit(f, static_argnums=-1)(1.0, 3, 4.0)) == 3.0  # n, not the last argument of the call
    assert traced == [3]


def test_eval_shape_of_the_plain_function_is_not_shared_but_the_jitted_one_s_is() -> None:
    traced = []

    def f(x: jax.Array) -> jax.Array:
        traced.append(x)
        return x * 2

    jax.eval_shape(f, jnp.ones(3))
    js.jit(f)(jnp.ones(3))
    assert len(traced) == 2  # JAX's trace of f is not jaxstatic's (jax.jit: 1)
    jax.eval_shape(js.jit(f), jnp.ones(4))
    js.jit(f).eval_shape(jnp.ones(5))
    js.jit(f)(jnp.ones(4))
    js.jit(f)(jnp.ones(5))
    assert len(traced) == 4  # each shape traced once


@pytest.fixture
def no_gc() -> Any:
    """Python's garbage collector off: what is freed is freed by reference counting alone, as ``jax.jit`` frees it."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


class _Model:
    def __init__(self, w: jax.Array) -> None:
        self.w = w

    def step(self, y: jax.Array) -> jax.Array:
        return y + self.w


def _closure(w: jax.Array) -> Callable[[], Any]:
    f = js.jit(lambda y: w + y)
    return lambda: f(jnp.ones(10))


def _static(w: jax.Array) -> Callable[[], Any]:
    def f(y: jax.Array, n: Static[int], cfg: Static[dict[str, int]]) -> jax.Array:
        return w * n + y * cfg["a"]

    jf = js.jit(f)
    return lambda: (jf(jnp.ones(10), 2, {"a": 1}), jf(jnp.ones(10), n=3, cfg={"a": 2}))


def _decorated(w: jax.Array) -> Callable[[], Any]:
    @js.jit
    def f(y: jax.Array, n: Static[float] = 2.0) -> jax.Array:
        return w * n + y

    return lambda: (f(jnp.ones(10)), f(jnp.ones(10), 3.5))


def _rebuilt(w: jax.Array) -> Callable[[], Any]:
    def f(y: jax.Array) -> jax.Array:
        return w + y

    return lambda: js.jit(f)(jnp.ones(10))  # made again on every call: one program shared


def _stacked(w: jax.Array) -> Callable[[], Any]:
    def f(y: jax.Array) -> jax.Array:
        return (w * y).sum()

    return lambda: js.jit(js.grad(f))(jnp.ones(10))


def _method(w: jax.Array) -> Callable[[], Any]:
    f = js.jit(_Model(w).step)
    return lambda: f(jnp.ones(10))


def _partial(w: jax.Array) -> Callable[[], Any]:
    f = js.jit(functools.partial(lambda w, y: w + y, w))
    return lambda: f(jnp.ones(10))


def _donating(w: jax.Array) -> Callable[[], Any]:
    @js.jit
    def f(y: js.Donate[jax.Array], n: Static[int]) -> jax.Array:
        return w * n + y

    return lambda: (f(jnp.ones(10), 2), f(jnp.ones(10), 2), f(jnp.ones(10), 3))


@pytest.mark.parametrize("make", [_closure, _static, _decorated, _rebuilt, _stacked, _method, _partial, _donating])
def test_an_array_captured_by_a_jitted_function_is_freed_at_del_as_with_jax_jit(
        make: Callable[[jax.Array], Callable[[], Any]], hit_path: str, no_gc: None) -> None:
    x = jnp.arange(10.0)
    ref = weakref.ref(x)
    call = make(x)
    call()
    call()  # a hit
    del call, x
    assert ref() is None


def test_a_jitted_closure_is_shared_while_it_lives_and_holds_its_function(no_gc: None) -> None:
    def closure(w: jax.Array) -> Callable[[jax.Array], jax.Array]:
        return lambda y: w + y

    x = jnp.ones(10)
    ref = weakref.ref(x)
    fn = closure(x)
    f = js.jit(fn)
    f(1.0)
    assert js.jit(fn) is f  # shared with every rebuild while the function lives
    del fn  # the jitted function holds it
    assert f(2.0).tolist() == [3.0] * 10
    fn = f.__wrapped__
    del f
    g = js.jit(fn)  # a new handle on the same programs
    g(1.0)
    assert g.trace_count == 1
    del fn, g, x
    assert ref() is None


def test_a_jitted_partial_made_again_is_the_one_made_before() -> None:
    g = functools.partial(three, b=1, c=2)
    assert js.jit(g) is js.jit(g)
    assert js.jit(functools.partial(three, b=1, c=2))._core is js.jit(g)._core  # equal parts: its programs


# -- frames: a trace runs two frames deeper than jax.jit's, as the jit guide says ----------------------------


def _frames_above_the_body(transform: Callable[..., Any], statics: list[Any], by_keyword: bool) -> list[list[str]]:
    """For each call in turn, the files of the frames between ``caller`` and the traced function, innermost first."""
    seen: list[str] = []

    def body(x: Any, cfg: Static[Any] = None) -> Any:
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_name != "caller":
            seen.append(frame.f_code.co_filename)
            frame = frame.f_back
        return x

    jitted = transform(body, static_argnames="cfg") if transform is jax.jit else transform(body)

    def caller(static: Any) -> Any:
        return jitted(jnp.ones(2), cfg=static) if by_keyword else jitted(jnp.ones(2), static)

    out = []
    for static in statics:
        seen.clear()
        caller(static)
        out.append(list(seen))
    return out


# A key of the exact-key lane after its first: its hit in C calls JAX itself, and only the body runs (a JAX without
# the lane takes the general path's two frames)
_LANE_HIT = 1 if _compat.LANE else 2
# Per call: the static value, and the frames of jaxstatic's above the body with the hits in C.
_CALLS = {
    "no static": [(None, 2)],
    "int (the lane)": [(3, 2), (4, _LANE_HIT)],
    "dict (the body)": [({"depth": 2}, 2), ({"depth": 3}, 2), ({"depth": 4}, 2)],
    "int then dict (leaving the lane)": [(3, 2), ({"depth": 2}, 2), ({"depth": 3}, 2), (7, 2)],
}


@pytest.mark.parametrize("by_keyword", [False, True], ids=["by position", "by keyword"])
@pytest.mark.parametrize("calls", list(_CALLS.values()), ids=list(_CALLS))
def test_a_trace_runs_two_frames_deeper_than_jax_jit_s(calls: list[tuple[Any, int]], by_keyword: bool) -> None:
    """The first call and every later miss: the call (or, for a miss a hit in C hands on, its shape's generated
    code) and the body. Without the hits in C, a keyword call may run a frame more (the jit guide says when)."""
    jax_dir = os.path.dirname(jax.__file__)
    statics = [static for static, _ in calls]
    for (static, expected), ours in zip(calls, _frames_above_the_body(js.jit, statics, by_keyword)):
        own = [path for path in ours if not path.startswith(jax_dir)]
        if _extension.compiled is not None:
            assert len(own) == expected, ours
        else:
            assert len(own) <= 3, ours
        theirs = _frames_above_the_body(jax.jit, [static if static is None or isinstance(static, int) else None],
                                        by_keyword)[0]
        assert len(ours) - len(own) <= len(theirs), (ours, theirs)  # JAX's own, as deep as jax.jit runs them
