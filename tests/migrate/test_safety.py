"""The tool never changes what a program does: where the source is less tidy than the rule cases (arrays kept as
metadata, functions used twice, loose annotations, names that shadow, subclasses, options forwarded), each site is
converted so that the program computes the same with no new warning, or left as it was with the reason."""

from __future__ import annotations

import pathlib
import sys
import textwrap
import types
import warnings
from typing import Any

import jax
import numpy as np
import pytest

from jaxstatic.migrate import main
from jaxstatic.migrate._cli import migrate_source


def run(source: str, name: str) -> dict[str, Any]:
    """The module ``source`` executed, with every warning an error (the old code ran clean)."""
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses look their module up
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module.__dict__


def convert(source: str, strict: bool = False) -> tuple[str, list[str]]:
    module, sites = migrate_source(textwrap.dedent(source), "m.py", strict=strict)
    return module.code, [str(s) for s in sites]


def same_result(before: str, after: str, name: str) -> None:
    """Both modules' ``run()`` give the same arrays, with no warning."""
    expected, got = run(textwrap.dedent(before), f"{name}_before")["run"](), run(after, f"{name}_after")["run"]()
    jax.tree_util.tree_map(np.testing.assert_array_equal, expected, got)


SUBCLASS = """\
import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class Base:
    def doubled(self):
        return jax.tree_util.tree_map(lambda x: 2 * x, self)


@struct.dataclass
class Transform(Base):
    pos: jax.Array


class Contact(Base):  # not decorated: JAX takes it for a leaf
    pass


def run():
    contact = Contact()
    return [Transform(jnp.ones(2)).doubled().pos, jax.tree_util.tree_leaves(contact)[0] is contact]
"""


def test_a_struct_with_an_undecorated_subclass_is_left() -> None:
    code, sites = convert(SUBCLASS)
    assert sites == [
        "m.py:7: JS006 left: class Contact (m.py:17) subclasses it and is not converted; a js.dataclass needs each "
        "subclass decorated",
        "m.py:13: JS006 converted: class Transform is a js.dataclass"]
    assert "@struct.dataclass\nclass Base:" in code and "@js.dataclass\nclass Transform(Base):" in code
    same_result(SUBCLASS, code, "migrate_subclass")


def test_a_subclass_in_another_file_leaves_its_base(tmp_path: pathlib.Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    base = "from flax import struct\n\n\n@struct.dataclass\nclass Config:\n    n: int = struct.field(pytree_node=False)\n"
    (tmp_path / "base.py").write_text(base)
    (tmp_path / "named.py").write_text("from base import Config\n\n\nclass NamedConfig(Config):\n    pass\n")
    assert main([str(tmp_path)]) == 0
    assert (tmp_path / "base.py").read_text() == base
    assert (f"base.py:5: JS006 left: class NamedConfig ({tmp_path / 'named.py'}:4) subclasses it and is not "
            "converted") in capsys.readouterr().out


GRAPH = """\
import jax
import jax.numpy as jnp
import numpy as np
from typing import Any
from flax import struct


@struct.dataclass
class Graph:
    nodes: jax.Array
    senders: np.ndarray = struct.field(pytree_node=False)


@struct.dataclass
class Loose:
    nodes: jax.Array
    extra: Any = struct.field(pytree_node=False)


@struct.dataclass
class Sized:
    nodes: jax.Array
    size: int = struct.field(pytree_node=False)


def run():
    g = Graph(jnp.arange(3.0), np.array([0, 1, 1]))
    return [jax.jit(lambda g: g.nodes[g.senders])(g), Loose(jnp.ones(1), np.ones(1)).extra,
            jax.jit(lambda s: s.nodes * s.size)(Sized(jnp.ones(2), 3))]
"""


def test_a_static_field_that_may_hold_an_array_is_left() -> None:
    code, sites = convert(GRAPH)
    assert sites == [
        "m.py:9: JS006 left: static field senders might hold an array (it is annotated np.ndarray), which Static "
        "refuses; give it a hashable type, or convert the class by hand",
        "m.py:15: JS006 left: static field extra might hold any value (it is annotated Any), an array among them, "
        "which Static refuses; give it a hashable type, or convert the class by hand",
        "m.py:21: JS006 converted: class Sized is a js.dataclass"]
    assert "    size: Static[int]\n" in code
    same_result(GRAPH, code, "migrate_graph")


VMAPPED = """\
import jax
import jax.numpy as jnp
import jaxstatic as js


def scale(x, n):
    return x * n


batched = js.vmap(scale)
fast = jax.jit(scale, static_argnums=1)


def shift(x, n):
    return x + n


a = jax.jit(shift, static_argnums=1)
b = jax.pmap(shift, static_broadcasted_argnums=1)


def run():
    x = jnp.ones((1, 2))
    return [batched(x, jnp.arange(1.0)), fast(x, 2), a(x, 3), b(x, 3)]
"""


def test_a_function_a_jaxstatic_transform_also_takes_is_left() -> None:
    code, sites = convert(VMAPPED)
    assert sites == [
        "m.py:11: JS003 left: scale is also used in js.vmap(scale), which may read its annotations: annotating it "
        "would change what that does",
        "m.py:18: JS003 converted: shift(): n now Static", "m.py:19: JS004 converted: shift(): n now Static"]
    assert "def scale(x, n):" in code
    assert "def shift(x, n: Static[Any]):" in code  # once, though two rules made it static
    same_result(VMAPPED, code, "migrate_vmapped")


def test_jitted_and_pmapped_on_different_positions_is_left_for_one() -> None:
    code, sites = convert("""\
        import jax


        def f(x, n, m):
            return x * n + m


        a = jax.jit(f, static_argnums=1)
        b = jax.pmap(f, static_broadcasted_argnums=2)
        """)
    assert sites[1] == "m.py:9: JS004 left: f() already annotates 'n' Static, which pmap here traces"
    assert "b = jax.pmap(f, static_broadcasted_argnums=2)" in code


AXIS = """\
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("axis", "keep"))
def total(x, axis: int = None, keep: "bool" = None):
    return jnp.sum(x, axis=axis, keepdims=bool(keep))


def run():
    return [total(jnp.ones((2, 3))), total(jnp.ones((2, 3)), axis=1)]
"""


def test_a_none_default_widens_the_static_type() -> None:
    code, sites = convert(AXIS)
    assert 'def total(x, axis: Static[int | None] = None, keep: Static["bool | None"] = None):' in code
    assert sites == ["m.py:7: JS001 converted: total(): axis, keep now Static"]
    same_result(AXIS, code, "migrate_axis")  # no StaticTypeWarning: every warning is an error there


SHADOW = """\
from functools import partial

import jax
import jax.numpy as jnp


class Table:
    js = {"scale": 2.0}  # a class attribute named like the import


@partial(jax.jit, static_argnums=1)
def step(x, n):
    js = {"jit": n}  # a local too
    return x * js["jit"] * Table.js["scale"]


def run():
    return step(jnp.ones(2), 3)
"""


def test_a_name_the_file_binds_gets_a_free_alias() -> None:
    code, sites = convert(SHADOW)
    assert code.startswith("import jax.numpy as jnp\nimport jaxstatic\nfrom jaxstatic import Static\n")
    assert "@jaxstatic.jit\ndef step(x, n: Static[Any]):" in code
    assert sites == ["m.py:11: JS001 converted: step(): n now Static"]
    same_result(SHADOW, code, "migrate_shadow")


def test_each_name_gets_an_alias_of_its_own() -> None:
    code, _ = convert("""\
        from functools import partial

        import jax

        jaxstatic, Static, Any = 1, 2, 3


        @partial(jax.jit, static_argnums=1)
        def f(x, js):
            return x
        """)
    assert "import jaxstatic as js_\nfrom jaxstatic import Static as JsStatic\nfrom typing import Any as AnyType\n" \
        in code
    assert "@js_.jit\ndef f(x, js: JsStatic[AnyType]):" in code


def test_options_forwarded_through_kwargs_are_reported() -> None:
    source = """\
        from functools import partial

        import jax


        def jit_with(fn, **options):
            return jax.jit(fn, **options)


        def make(**options):
            @partial(jax.jit, **options)
            def k(x, n):
                return x * n
            return k
        """
    code, sites = convert(source)
    assert code == textwrap.dedent(source)
    assert sites == [
        "m.py:7: JS003 left: options forwarded through **options to jax.jit: which parameters are static is known "
        "only at run time; annotate them Static[...] by hand and use js.jit",
        "m.py:11: JS003 left: options forwarded through **options to jax.jit: which parameters are static is "
        "known only at run time; annotate them Static[...] by hand and use js.jit"]


STRICT = """\
from functools import partial
from flax import struct
import jax
import mujoco


@partial(jax.jit, static_argnums=1)
def typed(x, n: int):
    return x * n


@partial(jax.jit, static_argnums=1)
def untyped(x, n):
    return x * n


@struct.dataclass
class Model:
    spec: mujoco.MjSpec = struct.field(pytree_node=False)
"""


def test_strict_converts_only_what_it_can_prove() -> None:
    code, sites = convert(STRICT, strict=True)
    assert sites == [
        "m.py:7: JS001 left: typed(): parameter 'n' is annotated int, and js.jit warns when a caller passes "
        "another type; --strict converts only parameters annotated Any or not at all",
        "m.py:12: JS001 converted: untyped(): n now Static",
        "m.py:18: JS006 left: static field spec might hold an unhashable value: MjSpec is not a builtin type, so "
        "--strict cannot tell, which Static refuses; give it a hashable type, or convert the class by hand"]
    assert "def untyped(x, n: Static[Any]):" in code
    default, _ = convert(STRICT)
    assert "def typed(x, n: Static[int]):" in default and "spec: Static[mujoco.MjSpec]" in default


def test_a_function_its_own_file_gives_away_is_not_annotated_from_another(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    ops = "import jaxstatic as js\n\n\ndef power(x, k):\n    return x**k\n\n\nbatched = js.vmap(power)\n"
    model = "import jax\n\nfrom ops import power\n\nfast = jax.jit(power, static_argnums=1)\n"
    (tmp_path / "ops.py").write_text(ops)
    (tmp_path / "model.py").write_text(model)
    assert main([str(tmp_path)]) == 0
    assert (tmp_path / "ops.py").read_text() == ops and (tmp_path / "model.py").read_text() == model
    assert (f"model.py:5: JS003 left: power is also used in {tmp_path / 'ops.py'} where its annotations may be "
            "read") in capsys.readouterr().out
