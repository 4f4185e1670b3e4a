#!/usr/bin/env bash
# The quickstart and the runtime tests against the oldest JAX and Python jaxstatic supports, in a venv of their own
# (.venv-floor). The JAX floor is read from pyproject.toml, so the declared range is the tested one.
#   bash tools/ci_floor.sh                     # Python 3.10 when found, else python3
#   JAXSTATIC_FLOOR_PYTHON=python3.11 bash tools/ci_floor.sh
set -euo pipefail
cd "$(dirname "$0")/.."

floor=$(sed -n 's/^ *"jax>=\([0-9.]*\)",.*/\1/p' pyproject.toml)
if [[ -z "$floor" ]]; then
    echo "tools/ci_floor.sh: no \"jax>=X\" line in pyproject.toml" >&2
    exit 1
fi
# A pyenv shim answers `command -v python3.10` even where that version is not selected: try to run it.
floor_python() {
    local candidate
    for candidate in python3.10 "$(pyenv root 2>/dev/null)/versions/3.10"*/bin/python3.10; do
        if "$candidate" -c '' 2>/dev/null; then echo "$candidate"; return; fi
    done
    echo python3
}
python=${JAXSTATIC_FLOOR_PYTHON:-$(floor_python)}
venv=.venv-floor

rm -rf "$venv"
"$python" -m venv "$venv"
# numpy, ml_dtypes and equinox are held to the releases this floor was measured with; the runtime tests need
# pytest (with pytest-xdist: they run in parallel), hypothesis, attrs, pyyaml, equinox and the wrappers and pickler
# they run jaxstatic inside (jaxtyping, beartype, cloudpickle), and nothing of the dev tools (flax and orbax tests
# skip without them).
"$venv/bin/pip" install -q "jax==$floor" "jaxlib==$floor" "numpy<2.5" "ml_dtypes<0.8" "equinox<0.14" \
    pytest pytest-xdist hypothesis attrs pyyaml jaxtyping beartype cloudpickle
"$venv/bin/pip" install -q -e .
"$venv/bin/python" -c 'import sys, jax; print(f"floor: jax {jax.__version__} on Python {sys.version.split()[0]}")'
"$venv/bin/python" examples/quickstart.py
"$venv/bin/python" -m pytest tests/runtime -q -p no:cacheprovider
# The jax stubs built by pip from this jax, checked by the five type checkers of the main venv (about 30 s)
JAXSTATIC_STUBS_PYTHON="$venv/bin/python" .venv/bin/python -m pytest tests/test_stubs_installed.py -q -p no:cacheprovider
