"""``tools/jax_tests_swapped.py``: the swap that turns JAX's own test files into tests of ``jaxstatic.jit``.

What it swaps decides what the yardstick measures: every ``jit`` of JAX's the module reaches, and nothing else.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("jax_tests_swapped", ROOT / "tools" / "jax_tests_swapped.py")
assert _spec is not None and _spec.loader is not None
swap = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(swap)


def test_every_jit_of_jax_the_module_reaches_is_swapped_and_nothing_else() -> None:
    source = textwrap.dedent('''\
        """A test file."""
        from __future__ import annotations
        import jax
        from jax import grad, jit
        from jax._src import api
        from jax._src.pjit import jit as pjit_jit
        import mylib

        a = jax.jit(f)
        b = jit(f)
        c = api.jit(f, static_argnums=0)
        d = pjit_jit(f)
        e = mylib.jit(f)
        g = grad(f)

        @jax.jit
        def h(x):
            return x
        ''')
    out, count = swap.swapped_source(source)
    assert count == 5
    assert out.splitlines()[:8] == [
        "\"\"\"A test file.\"\"\"", "from __future__ import annotations", "import jaxstatic", "import jax",
        "from jax import grad", "from jaxstatic import jit", "from jax._src import api",
        "from jaxstatic import jit as pjit_jit"]
    assert "a = jaxstatic.jit(f)" in out and "b = jit(f)" in out
    assert "c = jaxstatic.jit(f, static_argnums=0)" in out and "@jaxstatic.jit" in out
    assert "e = mylib.jit(f)" in out and "g = grad(f)" in out


def test_pmap_and_shard_map_are_swapped_as_functions_never_as_modules() -> None:
    source = textwrap.dedent('''\
        import jax
        from jax import pmap, vmap
        from jax._src import pmap as pmap_lib
        from jax._src.shard_map import shard_map

        a = jax.pmap(f)
        b = jax.shard_map(f, mesh=m)
        c = jax.vmap(f)
        ''')
    out, count = swap.swapped_source(source, ("jit", "pmap", "shard_map"))
    assert count == 4
    assert out.splitlines()[:6] == ["import jaxstatic", "import jax", "from jax import vmap",
                                    "from jaxstatic import pmap", "from jax._src import pmap as pmap_lib",
                                    "from jaxstatic import shard_map"]
    assert "a = jaxstatic.pmap(f)" in out and "b = jaxstatic.shard_map(f, mesh=m)" in out and "c = jax.vmap(f)" in out
    control, count = swap.swapped_source(source, ("shard_map",), swap.CONTROL)
    assert count == 2
    assert "from _jax_tests_control import shard_map" in control and "a = jax.pmap(f)" in control
    assert "b = _jax_tests_control.shard_map(f, mesh=m)" in control


def test_it_runs_a_file_both_ways_and_names_what_fails_only_swapped(tmp_path: Path) -> None:
    (tmp_path / "one_test.py").write_text(textwrap.dedent('''\
        import jax
        import jax.numpy as jnp

        def test_plain():
            assert jax.jit(lambda x: x + 1)(jnp.ones(2)).tolist() == [2.0, 2.0]

        def test_type():
            assert type(jax.jit(lambda x: x)).__name__ == "PjitFunction"
        '''))
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "jax_tests_swapped.py"), "--tests", str(tmp_path),
                           "one_test.py"], capture_output=True, text=True, timeout=600)
    assert proc.stdout.splitlines() == [
        "one_test.py [jax.jit]: 2 passed, 0 failed, 0 skipped (passed 2/2)",
        "one_test.py [jaxstatic.jit, 2 swapped]: 1 passed, 1 failed, 0 skipped (passed 1/2)",
        "  fails only swapped: one_test::test_type"], proc.stderr
    assert proc.returncode == 1
