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


def test_decorators_that_only_donate_become_jaxstatic_transforms() -> None:
    code, sites = _run(
        "import functools\n"
        "from functools import partial\n"
        "import jax\n\n"
        "@functools.partial(jax.jit, donate_argnums=(0,))\n"
        "def update(params, grads):\n"
        "    return params\n\n"
        "@partial(jax.pmap, axis_name='batch', donate_argnums=(0,))\n"
        "def p_update(state, batch):\n"
        "    return state\n\n"
        "@jax.jit(donate_argnames='state')\n"
        "def named(state: jax.Array, lr: float) -> jax.Array:\n"
        "    return state\n")
    assert ("@js.jit\ndef update(params: Donate[Any], grads):" in code
            and "@js.pmap(axis_name='batch')\ndef p_update(state: Donate[Any], batch):" in code
            and "@js.jit\ndef named(state: Donate[jax.Array], lr: float) -> jax.Array:" in code), code
    assert sites == ["t.py:5: JS001 converted: update(): jax.jit now js.jit",
                     "t.py:5: JS010 converted: update(): params now Donate",
                     "t.py:9: JS004 converted: p_update(): jax.pmap now js.pmap",
                     "t.py:9: JS010 converted: p_update(): state now Donate",
                     "t.py:13: JS002 converted: named(): jax.jit now js.jit",
                     "t.py:13: JS010 converted: named(): state now Donate"]


def test_calls_that_donate_annotate_the_function_they_jit() -> None:
    code, sites = _run(
        "import jax\n\n"
        "def train_step(state, batch, config, learning_rate_fn, label_smoothing=0.0, dropout_rng=None):\n"
        "    return state\n\n"
        "def eval_step(state, batch):\n"
        "    return state\n\n"
        "jit_train_step = jax.jit(train_step, in_shardings=(None, None, None), static_argnums=(2, 3, 4),\n"
        "                         donate_argnums=0)\n"
        "jit_eval_step = jax.jit(eval_step, donate_argnums=0)\n"
        "p_eval_step = jax.pmap(eval_step, axis_name='batch', donate_argnums=(0,))\n")
    assert "def train_step(state: Donate[Any], batch, config: Static[Any], learning_rate_fn: Static[Any], " \
        "label_smoothing: Static[Any] = 0.0, dropout_rng=None):" in code, code
    assert "jit_train_step = js.jit(train_step, in_shardings=(None, None, None))" in code
    assert "def eval_step(state: Donate[Any], batch):" in code
    assert "jit_eval_step = js.jit(eval_step)\np_eval_step = js.pmap(eval_step, axis_name='batch')" in code
    assert sites == [
        "t.py:9: JS003 converted: train_step(): config, label_smoothing, learning_rate_fn now Static; state now "
        "Donate",
        "t.py:11: JS003 converted: eval_step(): state now Donate",
        "t.py:12: JS004 converted: eval_step(): state now Donate",
    ]


def test_donating_sites_it_cannot_prove_are_reported() -> None:
    source = ("import functools\n"
              "import jax\n\n"
              "def train_step(state, batch, model=None):\n"
              "    return state\n\n"
              "def eval_step(state, batch):\n"
              "    return state\n\n"
              "p_train = jax.pmap(functools.partial(train_step, model=1), axis_name='batch', donate_argnums=(0,))\n"
              "a = jax.jit(eval_step, donate_argnums=0)\n"
              "b = jax.jit(eval_step, donate_argnums=1)\n"
              "jit = jax.jit\n"
              "c = jit(train_step, donate_argnums=0)\n"
              "donating = functools.partial(jax.jit, donate_argnums=0)\n")
    code, sites = _run(source)
    assert code == source
    assert sites == [
        "t.py:10: JS004 left: the function functools.partial(train_step, model=1) is not a name defined in this file",
        "t.py:11: JS003 left: eval_step() donates different parameters at different calls",
        "t.py:12: JS003 left: eval_step() donates different parameters at different calls",
        "t.py:14: JS000 left: jit(..., donate_argnums=...) is not a call of jax.jit or jax.pmap this tool "
        "recognises; convert it by hand",
        "t.py:15: JS001 left: partial(jax.jit, ...) not used as a decorator; use js.jit on the function and annotate "
        "its parameters",
    ]
