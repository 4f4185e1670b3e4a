"""jaxstatic's own options are declared once, as fields of a transform's options record made by ``_options.own``
(``JitOptions`` for ``js.jit``): the typed overloads of ``js.jit``, its docstring and its guide are held to those
fields, so none of them can miss a new option."""

from __future__ import annotations

import ast
import inspect

import pytest

import jaxstatic as js
from jaxstatic._jit import JitFunction, JitOptions
from jaxstatic._options import own_options

from ._blocks import ROOT

OWN = own_options(JitOptions)  # name -> default


def f(x: object, n: int = 1) -> object:
    return x


def _overloads() -> list[ast.FunctionDef]:
    tree = ast.parse((ROOT / "jaxstatic" / "_jit.py").read_text())
    return [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "jit"
            and any(isinstance(d, ast.Name) and d.id == "overload" for d in node.decorator_list)]


def test_jit_declares_its_own_options() -> None:
    """The fields made by ``own`` are found, with their defaults: the tests below hold the overloads, docstring and
    guide to them, so a new option is added to the record alone, never to a list here."""
    assert JitFunction._options_type is JitOptions
    assert {"max_traces": None, "cache_size": 8192, "strict_donation": None}.items() <= dict(OWN).items()


@pytest.mark.parametrize("overload", range(2))
def test_each_typed_overload_of_jit_takes_each_own_option_with_its_default(overload: int) -> None:
    node = _overloads()[overload]
    defaults = {arg.arg: default for arg, default in zip(node.args.kwonlyargs, node.args.kw_defaults)}
    assert set(OWN) <= set(defaults), set(OWN) - set(defaults)
    for name, own_default in OWN.items():
        default = defaults[name]
        assert isinstance(default, ast.Constant)
        assert default.value is Ellipsis or default.value == own_default, (name, default.value)


def test_jit_docstring_and_guide_name_each_own_option() -> None:
    doc = inspect.getdoc(js.jit) or ""
    guide = (ROOT / "docs" / "guides" / "jit.md").read_text()
    bullet = guide.split("- jaxstatic's own options:", 1)[1].split("\n\n", 1)[0].split("\n- ", 1)[0]
    for name in OWN:
        assert f"``{name}``" in doc, name
        assert f"`{name}`" in bullet, name


def test_an_unknown_option_is_compared_with_the_own_ones_too() -> None:
    with pytest.raises(js.OptionError, match=r"jaxstatic.jit\(f\): unknown option\(s\) \['strict_donatoin'\] "
                                             r"\(did you mean 'strict_donation'"):
        js.jit(f, strict_donatoin=True)


def test_own_options_never_reach_jax_jit() -> None:
    g = js.jit(f, static_argnames="n", max_traces=3, cache_size=4, strict_donation=False)
    assert dict(g._opts.jax) == {}  # taken out (JAX's static options are the record's fields): the exact-key lane stays
    assert (g._opts.max_traces, g._opts.cache_size, g._opts.strict_donation) == (3, 4, False)
    assert g._opts.static_argnames == "n"
