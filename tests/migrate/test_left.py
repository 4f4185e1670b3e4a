"""What the tool cannot convert safely is left exactly as it was, and reported with its line and the reason."""

from __future__ import annotations

import re
import textwrap

import pytest

from jaxstatic.migrate._cli import migrate_source

HEAD = "from functools import partial\n\nimport jax\n\n"

LEFT = {
    "names computed at run time": (
        "NAMES = ('n',)\n\n@partial(jax.jit, static_argnames=NAMES)\ndef f(x, n):\n    return x\n",
        r":7: JS001 left: static_argnames=NAMES is computed at run time; annotate the parameters by hand"),
    "negative position": (
        "@partial(jax.jit, static_argnums=-1)\ndef f(x, n):\n    return x\n",
        r":5: JS001 left: static_argnums holds -1, which JAX counts from the end of each call's arguments"),
    "position out of range": (
        "@partial(jax.jit, static_argnums=(2,))\ndef f(x, *args):\n    return x\n",
        r"static_argnums holds 2, but f\(\) has 1 positional parameters"),
    "name only **kwargs takes": (
        "@jax.jit(static_argnames='mode')\ndef f(x, **kwargs):\n    return x\n",
        r":5: JS002 left: static_argnames names 'mode', which is not a named parameter of f\(\)"),
    "options forwarded": (
        "OPTS = {}\n\n@partial(jax.jit, static_argnums=1, **OPTS)\ndef f(x, n):\n    return x\n",
        r"JS001 left: options forwarded through \*\*OPTS: which parameters are static is known only at run time"),
    "decorator below the jit": (
        "def deco(f):\n    return f\n\n@partial(jax.jit, static_argnums=1)\n@deco\ndef f(x, n):\n    return x\n",
        r":8: JS001 left: @deco below it changes the function jit sees"),
    "function from another file": (
        "from os.path import join\n\ng = jax.jit(join, static_argnums=1)\n",
        r":7: JS003 left: join is defined in another file \(from os.path import join\) not given: annotate its "
        r"parameters "
        r"Static\[...\] there and use js.jit here"),
    "not a function of the file": (
        "def f(x, n):\n    return x\n\ng = jax.jit(jax.grad(f), static_argnums=1)\n",
        r"JS003 left: the function jax.grad\(f\) is not a name defined in this file"),
    "decorated function": (
        "@jax.vmap\ndef f(x, n):\n    return x\n\ng = jax.jit(f, static_argnums=1)\n",
        r"JS003 left: f\(\) is decorated, so its signature is not the one jit sees"),
    "different statics at two calls": (
        "def f(x, n, m):\n    return x\n\ng = jax.jit(f, static_argnums=1)\nh = jax.jit(f, static_argnums=2)\n",
        r":8: JS003 left: f\(\) is made static on different parameters at different calls"),
    "Static already on a parameter JAX traces": (
        "from jaxstatic import Static\n\n@partial(jax.jit, static_argnums=1)\ndef f(x, n, m: Static[int]):\n"
        "    return x\n",
        r":7: JS001 left: f\(\) already annotates 'm' Static, which jit here traces"),
    "positional option": (
        "def f(x, n):\n    return x\n\ng = jax.jit(f, None, static_argnums=1)\n",
        r"JS003 left: option None given by position; give it by name"),
    "partial not as a decorator": (
        "def f(x, n):\n    return x\n\ng = partial(jax.jit, static_argnums=1)(f)\n",
        r"JS001 left: partial\(jax.jit, ...\) not used as a decorator; use js.jit on the function"),
    "pmap option without an equivalent": (
        "@partial(jax.pmap, static_broadcasted_argnums=1, global_arg_shapes=None)\ndef f(x, n):\n    return x\n",
        r"JS004 left: option 'global_arg_shapes' has no js.pmap equivalent"),
    "pmap axis name by position": (
        "@partial(jax.pmap, 'i', static_broadcasted_argnums=1)\ndef f(x, n):\n    return x\n",
        r"JS004 left: option 'i' given by position; give it by name"),
    "jdc.copy_and_mutate in the file": (
        "import jax_dataclasses as jdc\n\n@jdc.pytree_dataclass\nclass A:\n    n: jdc.Static[int]\n\n"
        "def bump(a):\n    with jdc.copy_and_mutate(a) as b:\n        b.n = 2\n    return b\n",
        r"JS005 left: this file uses jdc.copy_and_mutate, which mutates jax_dataclasses objects only"),
    "flax PyTreeNode": (
        "from flax import struct\n\nclass A(struct.PyTreeNode):\n    n: int = struct.field(pytree_node=False)\n",
        r"JS006 left: class A subclasses struct.PyTreeNode; write @js.dataclass by hand"),
    "flax dataclass with options": (
        "from flax import struct\n\n@struct.dataclass(kw_only=True)\nclass A:\n    n: int = struct.field(pytree_node=False)\n",
        r"JS006 left: @struct.dataclass\(kw_only=True\) takes options; convert class A by hand"),
    "flax pytree_node computed": (
        "from flax import struct\nSTATIC = False\n\n@struct.dataclass\nclass A:\n    n: int = struct.field(pytree_node=STATIC)\n",
        r"JS006 left: pytree_node=STATIC is computed at run time; annotate the field by hand"),
}


@pytest.mark.parametrize("case", LEFT)
def test_left_as_it_was_and_reported(case: str) -> None:
    body, message = LEFT[case]
    source = HEAD + textwrap.dedent(body)
    module, sites = migrate_source(source, "m.py")
    assert module.code == source
    assert not any(s.converted for s in sites)
    assert any(re.search(message, str(s)) for s in sites), [str(s) for s in sites]


def test_a_left_site_does_not_stop_the_others() -> None:
    source = HEAD + textwrap.dedent("""\
        NAMES = ("n",)


        @partial(jax.jit, static_argnames=NAMES)
        def left(x, n):
            return x * n


        @partial(jax.jit, static_argnames="n")
        def converted(x, n: int):
            return x * n
        """)
    module, sites = migrate_source(source, "m.py")
    assert "@partial(jax.jit, static_argnames=NAMES)\ndef left(x, n):" in module.code
    assert "@js.jit\ndef converted(x, n: Static[int]):" in module.code
    assert "from functools import partial" in module.code  # still used by the site left
    assert [(s.line, s.converted) for s in sites] == [(8, False), (13, True)]


def test_a_function_converted_for_one_transform_is_left_for_another() -> None:
    source = HEAD + textwrap.dedent("""\
        def f(x, n, m):
            return x


        g = jax.jit(f, static_argnums=1)
        h = jax.pmap(f, static_broadcasted_argnums=2)
        """)
    module, sites = migrate_source(source, "m.py")
    assert "def f(x, n: Static[Any], m):" in module.code
    assert "g = js.jit(f)\nh = jax.pmap(f, static_broadcasted_argnums=2)\n" in module.code  # jax.pmap ignores n's
    assert [str(s) for s in sites] == [
        "m.py:9: JS003 converted: f(): n now Static",
        "m.py:10: JS004 left: f() already annotates 'n' Static, which pmap here traces"]
