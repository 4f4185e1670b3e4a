"""Decorators that hide Static parameters: ``HiddenStaticWarning`` where the transform reads them, a note on JAX's
tracer errors, and the mypy plugin's ``[jaxstatic-signature]`` cases answered at run time."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import yaml

import jaxstatic as js
from jaxstatic import Static, _shared

x = jnp.arange(3.0)


# -- decorators as users write them ---------------------------------------------------------------------------


def log_calls(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


def timed(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        return result

    return wrapper


def logged(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


class Logged:
    """A class-based decorator: the wrapped function is an attribute."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.fn(*args, **kwargs)


def counted(fn: Callable[..., Any]) -> Any:
    """A class-based decorator whose ``__call__`` reaches the function through its closure."""

    class Counter:
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

    return Counter()


def forward(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


@contextlib.contextmanager
def hidden_warnings() -> Iterator[list[str]]:
    """The ``HiddenStaticWarning`` messages issued inside the block, whatever the warning filters say."""
    category, found = js.HiddenStaticWarning, []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield found
    found.extend(str(w.message) for w in caught if issubclass(w.category, category))


def message(decorators: str, wrapper: str, inner: str = "g", params: str = "'n'", fix: str = "",
            transform: str = "jaxstatic.jit") -> str:
    one = "," not in params
    hides = f"decorator {decorators} hides" if "," not in decorators else f"decorators {decorators} hide"
    last = decorators.rsplit(", ", 1)[-1]
    each = "the wrapper" if "," not in decorators else "each wrapper"
    return (f"{transform} cannot see the Static parameter{'' if one else 's'} {params} of {inner}: {hides} "
            f"{'it' if one else 'them'} behind {wrapper}, which has no __wrapped__, so {params} "
            f"{'is traced as an array' if one else 'are traced as arrays'}. Decorate {each} with "
            f"@functools.wraps(fn){fix}, or apply {transform} below @{last}.")


LOG_CALLS = "log_calls.<locals>.wrapper(*args, **kwargs)"
CLASS_FIX = " (functools.update_wrapper(self, fn) in a class)"


def _scaled(x: jax.Array, n: Static[int]) -> jax.Array:
    return x * n


# -- the warning ----------------------------------------------------------------------------------------------


def test_wrapper_without_wraps_warns_and_its_static_is_traced() -> None:
    with hidden_warnings() as found:
        @js.jit
        @log_calls
        def g(x: jax.Array, n: Static[int]) -> jax.Array:
            return x * n

        @js.jit
        @logged
        def h(x: jax.Array, n: Static[int]) -> jax.Array:
            return x * n

        for f in (g, h):
            assert [f(x, 2).tolist(), f(x, 3).tolist()] == [(x * 2).tolist(), (x * 3).tolist()]
    assert found == [message("log_calls", LOG_CALLS)]  # h, with functools.wraps, is silent
    assert g.trace_count == 1  # what the warning is about: n was traced, so 2 and 3 shared one program
    assert h.trace_count == 2


def test_warning_points_at_the_users_line() -> None:
    """Where the parameters are read: the first call of a bare jit, the decoration when options name parameters."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        here = inspect.currentframe().f_lineno  # type: ignore[union-attr]
        g = js.jit(log_calls(_scaled))
        g(x, 2)
        g(x, 3)

        @js.jit(donate_argnums=())
        @log_calls
        def h(x: jax.Array, n: Static[int]) -> jax.Array:
            return x * n

        h(x, 2)
    decorated = here + 5 if sys.version_info >= (3, 11) else here + 7  # 3.10 places a decorator call at the def
    assert [(w.category, w.filename, w.lineno) for w in caught] == [
        (js.HiddenStaticWarning, __file__, here + 2), (js.HiddenStaticWarning, __file__, decorated)]


def test_exactly_once_per_decorated_function() -> None:
    with hidden_warnings() as found:
        g = js.jit(log_calls(_scaled))
        for n in (2, 3):
            g(x, n)
            g(x, n=n)
            g(x=x, n=n)
        g.lower(x, 4)
        js.jit(log_calls(_scaled))(x, 2)  # made again over the same function: the one made before
        js.jit(log_calls(_summed))(x, 2)  # another decorated function
    assert found == [message("log_calls", LOG_CALLS, "_scaled"), message("log_calls", LOG_CALLS, "_summed")]


def _summed(x: jax.Array, n: Static[int]) -> jax.Array:
    return (x * n).sum()


@pytest.mark.parametrize(("transform", "name"), [
    (js.vmap, "jaxstatic.vmap"), (js.grad, "jaxstatic.grad"), (js.value_and_grad, "jaxstatic.value_and_grad"),
    (js.checkpoint, "jaxstatic.checkpoint"), (js.pmap, "jaxstatic.pmap"), (js.jit, "jaxstatic.jit"),
])
def test_warning_names_the_transform_that_reads_the_wrapper(transform: Callable[..., Any], name: str) -> None:
    xs = jnp.ones((2, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        here = inspect.currentframe().f_lineno  # type: ignore[union-attr]
        with contextlib.suppress(Exception):  # n is traced (mapped, differentiated): what the warning is about
            transform(log_calls(_summed))(xs, 2)
    assert [(str(w.message), w.filename, w.lineno) for w in caught] == [
        (message("log_calls", LOG_CALLS, "_summed", transform=name), __file__, here + 2)]


@pytest.mark.parametrize(("stack", "name"), [
    (lambda f: js.jit(js.vmap(f)), "jaxstatic.vmap"),
    (lambda f: js.jit(js.checkpoint(f)), "jaxstatic.checkpoint"),
    (lambda f: js.vmap(js.jit(f)), "jaxstatic.jit"),
    (lambda f: js.jit(js.jit(f)), "jaxstatic.jit"),
    (lambda f: js.jit(logged(js.vmap(f))), "jaxstatic.vmap"),  # a wrapper with functools.wraps between them
])
def test_warning_through_a_stack_is_issued_once_at_the_users_line(stack: Callable[[Any], Any], name: str) -> None:
    """Whichever transform reads a layout first, the warning names the one right above the decorator (the one to
    apply below it), and points at the user's call, never inside JAX."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        here = inspect.currentframe().f_lineno  # type: ignore[union-attr]
        g = stack(log_calls(_scaled))
        with contextlib.suppress(Exception):  # n is traced: mapped over, or rejected by the vmap
            g(jnp.ones((2, 3)), 2)
        with contextlib.suppress(Exception):
            g(jnp.ones((2, 3)), 3)
    assert [(str(w.message), w.filename, w.lineno) for w in caught] == [
        (message("log_calls", LOG_CALLS, "_scaled", transform=name), __file__, here + 3)]


def test_warning_as_error_for_ci() -> None:
    assert issubclass(js.HiddenStaticWarning, UserWarning)
    assert js.HiddenStaticWarning.__module__ == "jaxstatic"
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=js.HiddenStaticWarning)
        with pytest.raises(js.HiddenStaticWarning, match=r"Static parameter 'n' of _scaled: decorator log_calls"):
            js.jit(log_calls(_scaled))(x, 2)
        assert js.jit(logged(_scaled))(x, 2).tolist() == (x * 2).tolist()


def test_class_based_decorator_with_call() -> None:
    class Wrapped(Logged):
        def __init__(self, fn: Callable[..., Any]) -> None:
            super().__init__(fn)
            functools.update_wrapper(self, fn)

    with hidden_warnings() as found:
        @js.jit
        @Logged
        def g(x: jax.Array, n: Static[int]) -> jax.Array:
            return x * n

        assert g(x, 2).tolist() == (x * 2).tolist()
        h = js.jit(Wrapped(_scaled))  # functools.update_wrapper: silent, and n is static
        h(x, 2), h(x, 3)
    assert found == [message("Logged", "Logged.__call__(*args, **kwargs)", fix=CLASS_FIX)]
    assert h.trace_count == 2


def test_class_based_decorator_reaching_the_function_through_its_closure() -> None:
    with hidden_warnings() as found:
        @js.jit
        @counted
        def g(x: jax.Array, n: Static[int]) -> jax.Array:
            return x * n

        g(x, 2)
    assert found == [message("counted", "counted.<locals>.Counter.__call__(*args, **kwargs)", fix=CLASS_FIX)]


def test_partial_wrapper() -> None:
    def g(x: jax.Array, y: jax.Array, n: Static[int]) -> jax.Array:
        return x * n + y

    with hidden_warnings() as found:
        f = js.jit(functools.partial(forward, _scaled))
        assert f(x, 3).tolist() == (x * 3).tolist()
        p = js.jit(functools.partial(g, x))  # a partial of the function itself shows its signature: silent
        p(x, 2), p(x, 3)
    assert found == [message("forward", "forward(*args, **kwargs)", "_scaled")]
    assert p.trace_count == 2


def test_staticmethod() -> None:
    with hidden_warnings() as found:
        class Ops:
            @staticmethod
            @js.jit
            @log_calls
            def scale(x: jax.Array, n: Static[int]) -> jax.Array:
                return x * n

            @js.jit
            @log_calls
            @staticmethod
            def shift(x: jax.Array, n: Static[int]) -> jax.Array:
                return x + n

        assert Ops.scale(x, 2).tolist() == (x * 2).tolist()
        assert Ops.shift(x, 2).tolist() == (x + 2).tolist()
    assert found == [message("log_calls", LOG_CALLS, "Ops.scale"), message("log_calls", LOG_CALLS, "Ops.shift")]


def test_classmethod_reached_through_func() -> None:
    class Ops:
        @classmethod
        def scale(cls, x: jax.Array, n: Static[int], m: Static[int] = 1) -> jax.Array:
            return x * n * m

    with hidden_warnings() as found:
        g = js.jit(log_calls(Ops.scale))
        assert g(x, 2).tolist() == (x * 2).tolist()
    assert found == [message("log_calls", LOG_CALLS, "Ops.scale", "'n', 'm'")]


def test_two_stacked_misbehaved_decorators() -> None:
    with hidden_warnings() as found:
        @js.jit
        @timed
        @log_calls
        def g(x: jax.Array, n: Static[int]) -> jax.Array:
            return x * n

        @js.jit
        @logged
        @log_calls
        def h(x: jax.Array, n: Static[int]) -> jax.Array:  # functools.wraps above does not make it visible
            return x * n

        g(x, 2), h(x, 2)
    assert found == [message("timed, log_calls", "timed.<locals>.wrapper(*args, **kwargs)"),
                     message("log_calls", LOG_CALLS, "h")]


def test_hidden_function_whose_annotations_do_not_resolve_yet() -> None:
    """A decorator runs where the function is defined, maybe before a class its annotations name: the text tells."""
    with hidden_warnings() as found:
        @js.jit
        @log_calls
        def g(x: jax.Array, cfg: Static[DefinedLater], n: Static[int], *rest: js.Static[int]) -> jax.Array:  # type: ignore[name-defined]  # noqa: F821
            return x

        g(x, 1, 2)
    assert found == [message("log_calls", LOG_CALLS, params="'cfg', 'n', '*rest'")]


def test_jit_below_the_decorator_is_silent() -> None:
    with hidden_warnings() as found:
        @js.jit
        def compiled(x: jax.Array, n: Static[int]) -> jax.Array:
            return x * n

        g = log_calls(compiled)

        @js.jit
        @log_calls
        def h(x: jax.Array, n: Static[int]) -> jax.Array:
            return x * n

        assert [g(x, 2).tolist(), g(x, 3).tolist()] == [(x * 2).tolist(), (x * 3).tolist()]
        h(x, 2)
    assert found == [message("log_calls", LOG_CALLS, "h")]
    assert compiled.trace_count == 2


def test_no_static_anywhere_is_silent() -> None:
    with hidden_warnings() as found:
        @js.jit
        @log_calls
        def g(x: jax.Array, n: int) -> jax.Array:
            return x * n

        @js.jit
        @log_calls
        def h(x: jax.Array, n: Static[int]) -> jax.Array:
            return x * n

        assert js.jit(lambda *xs: sum(xs))(x, x).tolist() == (x + x).tolist()
        assert g(x, 2).tolist() == h(x, 2).tolist() == (x * 2).tolist()
    assert found == [message("log_calls", LOG_CALLS, "h")]


def test_closure_calling_an_unrelated_jitted_function_is_silent() -> None:
    helper = js.jit(_scaled)

    def f(a: jax.Array, b: jax.Array) -> jax.Array:
        return helper(a, 3) + b

    def g(*xs: jax.Array) -> jax.Array:  # takes *xs, but never spreads it into helper
        jnp.stack(xs)
        return helper(xs[0], 3) * xs[1]

    def h(*xs: jax.Array, **kw: Any) -> jax.Array:  # spreads *xs, into something else
        total = jnp.add(*xs)
        return helper(total, 2)

    def spreads(*xs: jax.Array) -> jax.Array:  # spreads *xs into helper: helper's n is traced
        return helper(*xs)

    with hidden_warnings() as found:
        for fn in (f, g, h):
            assert js.jit(fn)(x, x).tolist() == fn(x, x).tolist()
        with pytest.raises(js.NonStaticValueError):  # helper cannot take the tracer spreads gives it for n
            js.jit(spreads)(x, 3)
    assert len(found) == 1
    assert found[0].startswith("jaxstatic.jit cannot see the Static parameter 'n' of _scaled")
    assert "behind test_closure_calling_an_unrelated_jitted_function_is_silent.<locals>.spreads(*xs)" in found[0]


def test_static_written_out_by_the_wrapper_is_not_hidden() -> None:
    def g(x: jax.Array, n: Static[int], m: Static[int] = 1) -> jax.Array:
        return x * n * m

    def first(n: Static[int], x: jax.Array) -> jax.Array:
        return x * n

    def keyword(*xs: jax.Array) -> jax.Array:
        return g(*xs, n=3, m=2)

    def leading(*xs: jax.Array) -> jax.Array:
        return first(3, *xs)

    def partly(*xs: Any) -> jax.Array:
        return g(*xs, m=2)

    with hidden_warnings() as found:
        assert js.jit(keyword)(x).tolist() == (x * 6).tolist()
        assert js.jit(leading)(x).tolist() == (x * 3).tolist()
        assert js.jit(partly)(x, 3).tolist() == (x * 6).tolist()
    assert len(found) == 1  # partly passes m itself, but n comes from its *xs
    assert found[0].startswith("jaxstatic.jit cannot see the Static parameter 'n' of g: ")
    assert " behind test_static_written_out_by_the_wrapper_is_not_hidden.<locals>.partly(*xs), " in found[0]


# -- JAX's tracer errors --------------------------------------------------------------------------------------


NOTE = ("'n' is declared Static in g, but decorator log_calls hides it, so jaxstatic.jit traced it as an array. "
        "Decorate the wrapper with @functools.wraps(fn), or apply jaxstatic.jit below @log_calls.")


@pytest.mark.parametrize(("use", "error"), [
    (lambda x, n: x * len(range(n)), jax.errors.TracerIntegerConversionError),
    (lambda x, n: x if n > 2 else -x, jax.errors.TracerBoolConversionError),
    (lambda x, n: x * int(n), jax.errors.ConcretizationTypeError),
    (lambda x, n: x * np.asarray(n).sum(), jax.errors.TracerArrayConversionError),
])
def test_tracer_error_says_the_parameter_is_hidden(use: Callable[[Any, Any], Any], error: type[Exception]) -> None:
    def g(x: jax.Array, n: Static[int], m: Static[int] = 1) -> jax.Array:
        return use(x, n) * m  # type: ignore[no-any-return]

    hidden = js.jit(log_calls(g))
    with pytest.warns(js.HiddenStaticWarning), pytest.raises(error) as info:
        hidden(x, 3)
    assert type(info.value) is error  # JAX's own exception, with one more note
    if sys.version_info >= (3, 11):
        assert info.value.__notes__[0] == NOTE  # 'm' kept its default: it was not traced
    else:  # no notes before 3.11: the note ends the message
        assert str(info.value).endswith("\n" + NOTE)
    assert js.jit(logged(g))(x, 3).tolist() == use(x, 3).tolist()  # the fix the note gives works


def test_tracer_error_from_another_value_gets_no_note() -> None:
    @js.jit
    @log_calls
    def g(x: jax.Array, n: Static[int] = 2) -> jax.Array:
        return x * n if x.sum() > 0 else x

    with pytest.warns(js.HiddenStaticWarning), pytest.raises(jax.errors.TracerBoolConversionError) as info:
        g(x)  # n is hidden, but kept its default: the error is about x
    assert not any("declared Static" in note for note in getattr(info.value, "__notes__", []))
    assert "declared Static" not in str(info.value)  # nor in the message, where 3.10 would put it


# -- a non-array given to a hidden Static parameter ----------------------------------------------------------


def _configured(x: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
    return cfg["activation"](x)  # type: ignore[no-any-return]


def hidden_non_array(transform: str, decorators: str = "decorator log_calls hides", last: str = "log_calls",
                     each: str = "the wrapper") -> str:
    return (f"_configured(): parameter 'cfg' is declared Static, but {decorators} it, so {transform} traces it as "
            "an array, and cfg['activation'] is a function, which cannot be traced. Decorate "
            f"{each} with @functools.wraps(fn), or apply {transform} below @{last}.")


@pytest.mark.parametrize(("stack", "name"), [
    (lambda f: js.jit(log_calls(f)), "jaxstatic.jit"),
    (lambda f: js.vmap(log_calls(f)), "jaxstatic.vmap"),
    (lambda f: js.checkpoint(log_calls(f)), "jaxstatic.checkpoint"),
    (lambda f: js.pmap(log_calls(f)), "jaxstatic.pmap"),
    (lambda f: js.jit(js.vmap(log_calls(f))), "jaxstatic.vmap"),
])
def test_non_array_in_a_hidden_static_names_the_decorator(stack: Callable[[Any], Any], name: str) -> None:
    """The commonest case (a config holding an activation): the error itself names the decorator, the inner
    function's parameter and the fix, even with the warning filtered out."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", js.HiddenStaticWarning)
        with pytest.raises(js.NonArrayArgumentError) as info:
            stack(_configured)(jnp.ones((1, 3)), {"activation": _relu})
    assert str(info.value) == hidden_non_array(name)


def test_non_array_in_a_hidden_static_through_two_decorators_and_keywords() -> None:
    g = js.jit(timed(log_calls(_configured)))
    with pytest.warns(js.HiddenStaticWarning), pytest.raises(js.NonArrayArgumentError) as info:
        g(x, cfg={"activation": _relu})
    assert str(info.value) == hidden_non_array("jaxstatic.jit", "decorators timed, log_calls hide", "log_calls",
                                               "each wrapper")
    assert js.jit(logged(_configured))(x, {"activation": _relu}).tolist() == _relu(x).tolist()  # the fix works


def test_non_array_elsewhere_keeps_the_plain_error() -> None:
    """A non-array that is not under a hidden Static parameter is no decorator's fault."""
    def g(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    with pytest.warns(js.HiddenStaticWarning), pytest.raises(js.NonArrayArgumentError) as info:
        js.jit(log_calls(g))("not an array", 2)
    assert str(info.value).startswith("wrapper(): parameter 'args' is not Static, so its value is traced as an "
                                      "array, but args[0] is a str.")


def _relu(x: jax.Array) -> jax.Array:
    return jnp.maximum(x, 0)


# -- the cases of the plugin's [jaxstatic-signature] tests, at run time --------------------------------------


def erase(fn: Callable[..., Any]) -> Callable[..., Any]:
    """What a decorator typed ``Callable[..., Any] -> Callable[..., Any]`` is at run time: a wrapper without wraps."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


def untyped(fn):  # type: ignore[no-untyped-def]
    return lambda *args, **kwargs: fn(*args, **kwargs)


def rewrap(fn: Callable[..., Any]) -> Callable[[jax.Array, int], jax.Array]:
    """Typed ``Callable[[Array, int], Array]``: a wrapper with named parameters."""
    def wrapper(x: jax.Array, n: int) -> jax.Array:
        return fn(x, n)  # type: ignore[no-any-return]

    return wrapper


def registered(fn: Callable[..., Any]) -> Callable[..., Any]:
    return fn


def _fn(*, static: bool = True) -> Callable[..., Any]:
    if static:
        def f(x: jax.Array, n: Static[int]) -> jax.Array:
            return x * n
    else:
        def f(x: jax.Array, n: int) -> jax.Array:  # type: ignore[misc]
            return x * n
    return f


@dataclasses.dataclass(frozen=True)
class SignatureCase:
    """A function of ``tests/typecheck/test_signature.yml`` at run time: each decorator gets the body its declared
    type stands for (``Callable[..., Any]``: a ``*args, **kwargs`` wrapper without wraps)."""

    case: str  # the YAML case
    function: str  # the function decorated there
    build: Callable[[], Callable[..., Any]]  # the object called, jaxstatic.jit applied as in the YAML
    plugin: bool  # the plugin reports [jaxstatic-signature]
    runtime: bool  # jaxstatic.jit issues HiddenStaticWarning
    why: str = ""  # where the two differ: why that is right, or what the run-time check cannot see
    raises: type[Exception] | None = None


SIGNATURE_CASES = [
    SignatureCase("erasing_decorators", "a", lambda: js.jit(erase(_fn())), plugin=True, runtime=True),
    SignatureCase("erasing_decorators", "b", lambda: js.jit(untyped(_fn())), plugin=True, runtime=True),
    SignatureCase("erasing_decorators", "c", lambda: js.jit(functools.lru_cache(_fn())), plugin=True, runtime=False,
                  why="lru_cache keeps __wrapped__: at run time jaxstatic reads n as Static (then the traced x is "
                      "unhashable for the cache)", raises=TypeError),
    SignatureCase("erasing_decorators", "d", lambda: js.jit(rewrap(_fn())), plugin=True, runtime=False,
                  why="named parameters passed on one by one are not followed at run time: that call looks like "
                      "any closure calling a jitted function"),
    SignatureCase("erasing_decorators", "e", lambda: js.jit(erase(_fn()), max_traces=2), plugin=True, runtime=True),
    SignatureCase("erasing_decorators", "later", lambda: js.jit(erase(_fn())), plugin=True, runtime=True),
    SignatureCase("preserving_decorators_pass", "a", lambda: js.jit(logged(_fn())), plugin=False, runtime=False),
    SignatureCase("preserving_decorators_pass", "b", lambda: js.jit(registered(logged(_fn()))), plugin=False,
                  runtime=False),
    SignatureCase("preserving_decorators_pass", "c", lambda: erase(js.jit(_fn())), plugin=False, runtime=False),
    SignatureCase("preserving_decorators_pass", "no_static", lambda: js.jit(erase(_fn(static=False))),
                  plugin=False, runtime=False),
    SignatureCase("preserving_decorators_pass", "cached", lambda: js.jit(functools.lru_cache(_fn(static=False))),
                  plugin=False, runtime=False, raises=TypeError),
]

_SIGNATURE_YAML = Path(__file__).parents[1] / "typecheck" / "test_signature.yml"


def _plugin_verdicts() -> dict[tuple[str, str], bool]:
    """Every function the YAML hands to a jaxstatic transform, and whether the plugin reports it."""
    verdicts = {}
    for case in yaml.safe_load(_SIGNATURE_YAML.read_text()):
        main = case["main"]
        for name in re.findall(r"@jit\b.*\n(?:\s*@.*\n)*\s*def (\w+)|= jit\((\w+)\)", main):
            verdicts[(case["case"], name[0] or name[1])] = False
        for name in re.findall(r'cannot see the Static parameters of "(\w+)".*\[jaxstatic-signature\]', main):
            verdicts[(case["case"], name)] = True
    return verdicts


def _warns_at_run_time(case: SignatureCase) -> bool:
    _shared.forget_closures()  # each case's function its own, though the same code closes over an equal function
    with hidden_warnings() as found:
        fn = case.build()
        if case.raises is None:
            assert fn(x, 3).tolist() == (x * 3).tolist()
        else:
            with pytest.raises(case.raises):
                fn(x, 3)
    assert all("cannot see the Static parameter 'n' of f: decorator " in m for m in found)
    return len(found) == 1


def test_the_plugins_signature_cases_at_run_time() -> None:
    """Both checks answer every case of the plugin's YAML; where they differ, the table says why."""
    assert {(c.case, c.function): c.plugin for c in SIGNATURE_CASES} == _plugin_verdicts(), (
        "SIGNATURE_CASES is out of step with tests/typecheck/test_signature.yml")
    assert all(c.why for c in SIGNATURE_CASES if c.plugin != c.runtime)
    found = {f"{c.case}.{c.function}": _warns_at_run_time(c) for c in SIGNATURE_CASES}
    assert found == {f"{c.case}.{c.function}": c.runtime for c in SIGNATURE_CASES}


@pytest.mark.parametrize("order", [
    ("vmap", "grad", "checkpoint", "value_and_grad"),
    ("value_and_grad", "vmap"),
    ("grad", "jit", "vmap"),
])
def test_each_transform_warns_once_for_the_same_decorated_function(order: tuple[str, ...]) -> None:
    """What each transform does to the hidden value differs (a vmap maps it, a grad traces it), and so does the fix:
    a warning given for one transform is no reason to keep quiet about another."""
    g = log_calls(_summed)
    found = []
    for _ in range(2):
        for name in order:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with contextlib.suppress(Exception):  # n is traced (mapped, differentiated): what the warning says
                    getattr(js, name)(g)(jnp.ones(3), 2)
            found.append([str(w.message) for w in caught if w.category is js.HiddenStaticWarning])
    expected = [[message("log_calls", LOG_CALLS, "_summed", transform=f"jaxstatic.{name}")] for name in order]
    assert found == expected + [[]] * len(order)
