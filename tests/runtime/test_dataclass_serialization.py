"""``js.dataclass`` instances in flax serialization (``to_state_dict``/``from_state_dict``, ``to_bytes``/``from_bytes``)
and orbax checkpoints: arrays round-trip, ``Static`` fields are kept from the target, and jaxstatic never imports
flax itself."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxstatic as js
from jaxstatic import Static

from ._devices import cpu_env


@js.dataclass
class Linear:
    w: jax.Array
    b: jax.Array
    activation: Static[str] = "relu"
    options: Static[dict[str, float]] = js.field(default_factory=dict)


@js.dataclass
class Model:  # no Static field: registered as a plain dataclass
    layers: list[Linear]
    scale: jax.Array


def _model() -> Model:
    return Model([Linear(jnp.ones((2, 2)), jnp.arange(2.0), "tanh", {"s": 2.0}),
                  Linear(jnp.eye(2), jnp.zeros(2))], jnp.asarray(3.0))


def _target(model: Model) -> Model:
    return jax.tree_util.tree_map(jnp.zeros_like, model)


def _same(restored: Any, model: Any) -> None:
    assert jax.tree_util.tree_structure(restored) == jax.tree_util.tree_structure(model)
    assert all(np.array_equal(a, b) for a, b in zip(jax.tree_util.tree_leaves(restored),
                                                    jax.tree_util.tree_leaves(model)))


def test_jaxstatic_never_imports_flax_and_registers_its_classes_when_flax_is_imported() -> None:
    pytest.importorskip("flax")
    code = textwrap.dedent('''
        import sys
        import jax
        import jax.numpy as jnp
        import jaxstatic as js
        from jaxstatic import Static

        @js.dataclass
        class Linear:
            w: jax.Array
            activation: Static[str] = "relu"

        Linear(jnp.ones(2))
        print("flax" in sys.modules)
        from flax import serialization
        print(serialization.to_state_dict(Linear(jnp.ones(2), "tanh")))
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True,
                         env=cpu_env())
    assert out.stdout.splitlines() == ["False", "{'w': Array([1., 1.], dtype=float32)}"]


def test_flax_state_dict_round_trips_arrays_and_keeps_static_fields_from_the_target() -> None:
    serialization = pytest.importorskip("flax.serialization")
    model = _model()
    state = serialization.to_state_dict(model)
    assert sorted(state) == ["layers", "scale"] and sorted(state["layers"]["0"]) == ["b", "w"]
    restored = serialization.from_state_dict(_target(model), state)
    _same(restored, model)
    assert restored.layers[0].options == {"s": 2.0} and restored.layers[0].activation == "tanh"
    other = Model([Linear(jnp.zeros((2, 2)), jnp.zeros(2), "sigmoid"), Linear(jnp.zeros((2, 2)), jnp.zeros(2))],
                  jnp.asarray(0.0))
    assert serialization.from_state_dict(other, state).layers[0].activation == "sigmoid"  # the target's


def test_flax_bytes_round_trip() -> None:
    serialization = pytest.importorskip("flax.serialization")
    model = _model()
    restored = serialization.from_bytes(_target(model), serialization.to_bytes(model))
    _same(restored, model)
    assert restored.layers[0].activation == "tanh"


def test_flax_names_a_missing_or_unknown_field() -> None:
    serialization = pytest.importorskip("flax.serialization")
    layer = Linear(jnp.ones(2), jnp.ones(2))
    with pytest.raises(ValueError, match=r"^Missing field b in state dict while restoring an instance of Linear, "
                       r"at path \.$"):
        serialization.from_state_dict(layer, {"w": np.ones(2)})
    with pytest.raises(ValueError, match=r'^Unknown field\(s\) "extra" in state dict while restoring an instance '
                       r"of Linear at path \.$"):
        serialization.from_state_dict(layer, {"w": np.ones(2), "b": np.ones(2), "extra": 1})


def test_orbax_checkpoint_round_trips(tmp_path: Path) -> None:
    ocp = pytest.importorskip("orbax.checkpoint")
    model = _model()
    checkpointer = ocp.StandardCheckpointer()
    checkpointer.save(tmp_path / "model", model)
    checkpointer.wait_until_finished()
    abstract = jax.tree_util.tree_map(ocp.utils.to_shape_dtype_struct, model)
    restored = checkpointer.restore(tmp_path / "model", abstract)
    _same(restored, model)
    assert restored.layers[0].options == {"s": 2.0} and restored.layers[0].activation == "tanh"
