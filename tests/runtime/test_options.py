"""jax.jit's options keep jax.jit's meaning under js.jit, and mistakes in them fail at decoration."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import jaxstatic as js
from jaxstatic import Static


@pytest.fixture(scope="module")
def mesh() -> Mesh:
    return Mesh(np.array(jax.devices()[:2]), ("d",))


def g(x: jax.Array, n: Static[int], y: jax.Array) -> jax.Array:
    return x * n + y


def test_in_shardings_tuple_lists_the_non_static_positional_parameters(mesh: Mesh) -> None:
    sharded, replicated = NamedSharding(mesh, P("d")), NamedSharding(mesh, P())
    x, y = jnp.arange(4.0), jnp.ones(4)
    plain = jax.jit(g, static_argnums=1, in_shardings=(sharded, replicated))
    ours = js.jit(g, in_shardings=(sharded, replicated))
    by_name = js.jit(g, in_shardings={"x": sharded, "y": replicated})
    expected = plain(x, 3, y)
    for fn in (ours, by_name):
        out = fn(x, 3, y)
        assert out.tolist() == expected.tolist()
        assert out.sharding == expected.sharding
        # the shardings reached the program's parameters: its HLO shards x and replicates y
        assert fn.lower(x, 3, y).as_text() == plain.lower(x, 3, y).as_text()


def test_in_shardings_tuple_of_the_wrong_length_fails_at_decoration(mesh: Mesh) -> None:
    rep = NamedSharding(mesh, P())
    with pytest.raises(js.OptionError, match=r"in_shardings of g has 3 entries, but g has 2 non-static positional "
                                             r"parameter\(s\) \['x', 'y'\]"):
        js.jit(g, in_shardings=(rep, rep, rep))


def test_in_shardings_dict_naming_no_parameter_fails(mesh: Mesh) -> None:
    with pytest.raises(js.OptionError, match=r"in_shardings of g names 'z', which is not a parameter of g\(x, n, y\)"):
        js.jit(g, in_shardings={"z": NamedSharding(mesh, P())})


def _donation_cases() -> Iterator[tuple[dict[str, Any], str]]:
    yield {"donate_argnums": 1.0}, r"donate_argnums of h contains 1\.0 \(a float\)\. Give parameter positions as ints\."
    yield {"donate_argnames": "yy"}, r"donate_argnames of h names 'yy', which is not a parameter of h\(x, y, \*rest\)"
    yield {"donate_argnames": ("rest",)}, r"donate_argnames of h names 'rest', which is not a parameter"
    yield {"donate_argnums": 1, "static_argnums": 1}, r"donate_argnums/donate_argnames of h names 'y', which is Static"


@pytest.mark.parametrize(("options", "message"), list(_donation_cases()))
def test_bad_donation_fails_at_decoration_naming_function_and_parameter(options: dict[str, Any], message: str) -> None:
    def h(x: jax.Array, y: jax.Array, *rest: jax.Array) -> jax.Array:
        return x + y

    with pytest.raises(js.OptionError, match=message) as info:
        js.jit(h, **options)
    assert isinstance(info.value, TypeError)


def test_donating_a_static_annotated_parameter_fails_at_decoration() -> None:
    with pytest.raises(js.OptionError, match=r"donate_argnums/donate_argnames of g names 'n', which is Static\. A Static "
                                             r"value is not an array; drop 'n' from donate_argnums/donate_argnames"):
        js.jit(g, donate_argnames="n")


@pytest.mark.filterwarnings("ignore:Some donated buffers were not usable")
def test_donation_matches_jax_jit() -> None:
    def f(x: jax.Array, n: Static[int], y: jax.Array) -> jax.Array:
        return x * n + y

    for options in ({"donate_argnums": 0}, {"donate_argnames": "x"}, {"donate_argnums": (0, 2)}):
        plain = jax.jit(f, static_argnums=1, **options)
        ours = js.jit(f, **options)
        a, b = jnp.ones(3), jnp.ones(3)
        plain(a, 2, b)
        c, d = jnp.ones(3), jnp.ones(3)
        assert ours(c, 2, d).tolist() == [3.0, 3.0, 3.0]
        assert (c.is_deleted(), d.is_deleted()) == (a.is_deleted(), b.is_deleted())
        assert c.is_deleted()


def test_static_options_naming_no_parameter_fail_at_decoration() -> None:
    with pytest.raises(js.OptionError, match=r"static_argnames of g names 'm', which is not a parameter of g\(x, n, y\)"):
        js.jit(g, static_argnames=("m",))
    with pytest.raises(js.OptionError, match=r"static_argnums of g contains 3, but g\(x, n, y\) has 3 positional"):
        js.jit(g, static_argnums=3)
    with pytest.raises(js.OptionError, match=r"static_argnums of g contains '1' \(a str\)"):
        js.jit(g, static_argnums=("1",))


@pytest.mark.parametrize("bad", ["2", -1, 1.5, True])
def test_max_traces_must_be_none_or_a_non_negative_int(bad: Any) -> None:
    with pytest.raises(js.OptionError, match=r"max_traces of g is .*Give None \(no limit\) or an int >= 0"):
        js.jit(g, max_traces=bad)


def test_max_traces_zero_reads_as_a_sentence() -> None:
    f = js.jit(g, max_traces=0)
    with pytest.raises(js.RetraceError, match=r"^g needs trace #1, but max_traces=0 allows no trace at all\. "):
        f(jnp.ones(1), 2, jnp.ones(1))
    assert f.trace_count == 0


def test_non_callables_fail_at_decoration() -> None:
    with pytest.raises(js.OptionError, match=r"jaxstatic.jit expects a function, but got 3 \(a int\)"):
        js.jit(3)  # type: ignore[call-overload]
    assert isinstance(js.OptionError("x"), TypeError)


def test_generators_and_coroutines_fail_at_decoration() -> None:
    def gen(x: jax.Array) -> Iterator[jax.Array]:
        yield x

    async def coro(x: jax.Array) -> jax.Array:
        await asyncio.sleep(0)
        return x

    with pytest.raises(js.OptionError, match=r"jaxstatic.jit of gen is a generator function, which JAX cannot trace"):
        js.jit(gen)
    with pytest.raises(js.OptionError, match=r"of coro is a coroutine function, which JAX cannot trace"):
        js.jit(coro)


def test_callable_instances_have_their_call_annotations_read() -> None:
    class Scale:
        def __call__(self, x: jax.Array, n: Static[int]) -> jax.Array:
            return x * n

    f = js.jit(Scale())
    assert f(jnp.ones(2), 3).tolist() == [3.0, 3.0]
    assert f(jnp.ones(2), 3).tolist() == [3.0, 3.0]
    assert f(jnp.ones(2), 4).tolist() == [4.0, 4.0]
    assert f.trace_count == 2
    assert js.static_argnames(Scale()) == ("n",)


def test_unknown_options_name_the_closest() -> None:
    with pytest.raises(js.OptionError, match=r"jaxstatic.jit\(g\): unknown option\(s\) \['static_argnumz'\] "
                                             r"\(did you mean 'static_argnums'"):
        js.jit(g, static_argnumz=1)


def test_cache_size_must_be_positive() -> None:
    with pytest.raises(js.OptionError, match=r"cache_size of g is 0 \(a int\)\. Give an int >= 1"):
        js.jit(g, cache_size=0)


def test_donate_argnums_into_args_donates_the_extras_as_jax_jit_does() -> None:
    def va(n: Static[int], *xs: jax.Array) -> jax.Array:
        return sum(xs) * n  # type: ignore[return-value]

    ours, theirs = js.jit(va, donate_argnums=np.int64(1)), jax.jit(va, static_argnums=0, donate_argnums=1)
    for f in (ours, theirs):
        xs = [jnp.ones(2), jnp.ones(2) * 2]
        np.testing.assert_array_equal(f(2, *xs), [6.0, 6.0])
        assert [x.is_deleted() for x in xs] == [True, False]
    xs = (jnp.ones(2),) * 3
    ours_info = js.jit(va, donate_argnums=(1, 2)).lower(2, *xs).args_info
    theirs_info = jax.jit(va, static_argnums=0, donate_argnums=(1, 2)).lower(2, *xs).args_info
    assert [a.donated for a in jax.tree_util.tree_leaves(ours_info)] == [True, True, False]
    assert [a.donated for a in jax.tree_util.tree_leaves(theirs_info)] == [True, True, False]
    with pytest.raises(js.OptionError, match=r"donate_argnums/donate_argnames of vs names 'xs', which is Static"):
        js.jit(vs, donate_argnums=2)


def vs(x: jax.Array, *xs: Static[int]) -> jax.Array:
    return x
