"""JS011: ``jax.jit(make_train(config))``, a factory of the file returning a function defined inside it, becomes
``js.jit(make_train(config))``, so that closures made again with an equal config share one program; what cannot be
shown safe is left as written and reported with the reason and the recipe, in ``--check`` and ``--diff`` alike."""

from __future__ import annotations

import pathlib
import re
import textwrap

import jax.numpy as jnp
import pytest

from jaxstatic.migrate._cli import main, migrate_source

from .test_rules import load

REAL = pathlib.Path(__file__).parent / "real"
RECIPE = "(docs/migration.md#a-config-held-in-a-closure)"

FACTORY = textwrap.dedent("""\
    import functools

    import jax


    def make_train(config):
        config["STEPS"] = config["T"] // 2

        def train(x):
            return x * config["LR"] + config["STEPS"]

        return train


    def run(config, x):
        return jax.jit(make_train(config))(x)


    def run_partial(config, x):
        return jax.jit(functools.partial(make_train(config)))(x)
    """)


def sites_of(source: str, path: str = "train.py") -> tuple[str, list[str]]:
    module, sites = migrate_source(source, path)
    return module.code, [str(s) for s in sites]


def test_a_factory_returning_its_inner_function_is_converted(tmp_path: pathlib.Path) -> None:
    code, sites = sites_of(FACTORY)
    assert sites == [
        f"train.py:16: JS011 converted: make_train(): jax.jit of the train it returns now js.jit: made again with "
        f"equal values, it shares one program {RECIPE}",
        f"train.py:20: JS011 converted: make_train(): jax.jit of the train it returns now js.jit: made again with "
        f"equal values, it shares one program {RECIPE}"]
    assert "return js.jit(make_train(config))(x)" in code
    assert "return js.jit(functools.partial(make_train(config)))(x)" in code
    assert "import jaxstatic as js\n" in code
    path = tmp_path / "converted.py"
    path.write_text(code)
    converted = load(path, "converted_factory")
    for _ in range(3):  # equal configs made again: one program, the same results as jax.jit's
        assert converted.run({"LR": 0.5, "T": 4}, jnp.ones(2)).tolist() == [2.5, 2.5]


LEFT = {
    "wrapped in jax.vmap": (
        "def make(c):\n    def f(x):\n        return x * c\n    return f\n\ng = jax.jit(jax.vmap(make(2)))\n",
        f"t.py:8: JS011 left: jax.vmap(...) around make(...): js.jit shares the programs of equal closures it is "
        f"given itself; jit the closure directly, or make what it closes over a Static parameter {RECIPE}"),
    "returns something else too": (
        "def make(c):\n    def f(x):\n        return x * c\n    if c:\n        return f\n    return g\n\n"
        "h = jax.jit(make(2))\n",
        "t.py:10: JS011 left: make() returns g, not a function defined inside it"),
    "inner function decorated": (
        "def make(c):\n    @jax.checkpoint\n    def f(x):\n        return x * c\n    return f\n\n"
        "h = jax.jit(make(2))\n",
        "t.py:9: JS011 left: f(), which make() returns, is decorated: js.jit would wrap what the decorator returns"),
}


@pytest.mark.parametrize("name", LEFT)
def test_what_cannot_be_shown_safe_is_left_and_reported(name: str) -> None:
    source, report = LEFT[name]
    code, sites = sites_of("import jax\n\n" + source, "t.py")
    assert code == "import jax\n\n" + source
    assert sites == [report]


def test_calls_of_functions_that_are_no_factory_are_not_looked_at() -> None:
    source = ("import jax\nfrom lib import make\n\ndef step(x):\n    return x\n\n"
              "a = jax.jit(make(2))\nb = jax.jit(jax.grad(step))\nc = jax.jit(step)\n")
    assert sites_of(source) == (source, [])


PPO = ("purejaxrl_ppo.py:301: JS011 {}: make_train(): jax.jit of the train it returns now js.jit: made again with "
       f"equal values, it shares one program {RECIPE}")


def test_purejaxrl_ppo_is_converted(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    source = (REAL / "purejaxrl_ppo.py").read_text()
    code, sites = sites_of(source, "purejaxrl_ppo.py")
    assert sites == [PPO.format("converted")]
    assert code.count("js.jit(") == 1 and "    train_jit = js.jit(make_train(config))\n" in code
    assert code.replace("js.jit(make_train", "jax.jit(make_train").replace("import jaxstatic as js\n", "") == source
    path = tmp_path / "purejaxrl_ppo.py"
    path.write_text(source)
    for flag in ("--check", "--diff"):
        assert main([flag, str(path)]) == (flag == "--check")
        out, err = capsys.readouterr()
        report = err if flag == "--diff" else out
        if flag == "--diff":
            assert "\n+    train_jit = js.jit(make_train(config))\n" in out
        assert re.sub(r"^\S*/", "", report, flags=re.M).splitlines() == [
            PPO.format("would convert"),
            "jaxstatic.migrate: 1 sites would convert, 0 left; 1 of 1 files would change"]
    assert path.read_text() == source
