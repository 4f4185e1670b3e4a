"""JS010 beside the static rules: one run converts static and donated options; what it cannot read is left."""

from __future__ import annotations

from jaxstatic.migrate._cli import migrate_source


def _run(source: str) -> tuple[str, list[str]]:
    module, sites = migrate_source(source, "t.py")
    return module.code, [str(s) for s in sites]


def test_static_and_donated_options_convert_in_one_run() -> None:
    code, sites = _run(
        "from functools import partial\n"
        "import jax\n\n"
        "@partial(jax.jit, static_argnums=1, donate_argnums=0)\n"
        "def step(params: dict, n: int, batch: jax.Array) -> dict:\n"
        "    return params\n")
    assert "@js.jit\ndef step(params: Donate[dict], n: Static[int], batch: jax.Array) -> dict:" in code
    assert "from jaxstatic import Donate, Static" in code
    assert sites == ["t.py:4: JS001 converted: step(): n now Static",
                     "t.py:4: JS010 converted: step(): params now Donate"]


def test_what_cannot_be_read_is_left_and_reported() -> None:
    source = ("import jaxstatic as js\n"
              "from jaxstatic import Static\n"
              "WHICH = (0,)\n\n"
              "@js.jit(donate_argnums=WHICH)\n"
              "def f(x, y):\n"
              "    return x\n\n"
              "@js.jit(donate_argnames='n')\n"
              "def g(x, n: Static[int]):\n"
              "    return x\n\n"
              "@js.jit(donate_argnums=2)\n"
              "def h(x, *rest):\n"
              "    return x\n\n"
              "def k(x):\n"
              "    return x\n\n"
              "kk = js.jit(k, donate_argnums=0)\n")
    code, sites = _run(source)
    assert code == source
    assert sites == [
        "t.py:5: JS010 left: donate_argnums=WHICH is computed at run time; annotate the parameters by hand",
        "t.py:9: JS010 left: g() annotates 'n' Static, which has no buffer to donate",
        "t.py:13: JS010 left: donate_argnums holds 2, but h() has 1 positional parameters",
        "t.py:20: JS010 left: js.jit(k, donate_...) is a call, not a decorator: the option keeps working; to "
        "declare it, annotate the parameters Donate[...] where they are defined",
    ]
