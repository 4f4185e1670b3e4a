#!/usr/bin/env bash
# The quickstart and the runtime tests against the newest Python jaxstatic supports and the newest JAX pip resolves
# for it, in a venv of their own (.venv-newest), with the C extension built and checked to be in use. The newest
# supported Python is the last "Programming Language :: Python :: 3.X" classifier of pyproject.toml, so the
# declared range is the tested one where that Python is installed; the CI image has none newer than 3.13, so this
# falls back to 3.13 (saying so on stderr) and tools/ci_py314.sh runs the same tests on 3.14.
#   bash tools/ci_newest.sh                          # the newest supported Python found (pyenv, then PATH)
#   JAXSTATIC_NEWEST_PYTHON=python3.12 bash tools/ci_newest.sh
set -euo pipefail
cd "$(dirname "$0")/.."

newest=$(sed -n 's/^ *"Programming Language :: Python :: \(3\.[0-9]*\)",.*/\1/p' pyproject.toml | sort -V | tail -n 1)
if [[ -z "$newest" ]]; then
    echo "tools/ci_newest.sh: no \"Programming Language :: Python :: 3.X\" classifier in pyproject.toml" >&2
    exit 1
fi
# The newest Python from 3.$newest down to 3.10 that runs: pyenv's installed versions first (a pyenv shim answers
# `command -v python3.13` even where that version is not selected), then the PATH. Where none is found, python3,
# said on stderr, so a run on an older Python is never mistaken for a run on the newest.
newest_python() {
    local minor candidate root
    root=$(pyenv root 2>/dev/null || true)
    for ((minor = ${newest#3.}; minor >= 10; minor--)); do
        for candidate in $([[ -n "$root" ]] && ls -d "$root/versions/3.$minor."*/bin/python3 2>/dev/null | sort -V -r) \
                "python3.$minor"; do
            if "$candidate" -c '' 2>/dev/null; then
                [[ $minor == "${newest#3.}" ]] ||
                    echo "tools/ci_newest.sh: Python $newest not found (pyenv, PATH); using Python 3.$minor" >&2
                echo "$candidate"; return
            fi
        done
    done
    echo "tools/ci_newest.sh: no Python 3.10-$newest found (pyenv, PATH); using python3" >&2
    echo python3
}
python=${JAXSTATIC_NEWEST_PYTHON:-$(newest_python)}
venv=.venv-newest

rm -rf "$venv"
"$python" -m venv "$venv"
# The newest of everything: the runtime tests need pytest, hypothesis, attrs, pyyaml, equinox, the wrappers and
# pickler they run jaxstatic inside (jaxtyping, beartype, cloudpickle), and the libraries whose objects retraces are
# explained in (optax, jax_dataclasses, flax, pydantic, ml_collections); nothing of the dev tools.
"$venv/bin/pip" install -q --upgrade jax jaxlib pytest hypothesis attrs pyyaml equinox jaxtyping beartype cloudpickle \
    optax jax_dataclasses flax pydantic ml_collections
"$venv/bin/pip" install -q -e .
"$venv/bin/pip" install -q pytest-xdist  # the tests run in parallel (pyproject's addopts)
"$venv/bin/python" - <<'EOF'
import sys

import jax

import jaxstatic._extension as compiled

if compiled.extension is None:
    sys.exit("tools/ci_newest.sh: the C extension (jaxstatic._hits) was not built or cannot be imported")
print(f"newest: jax {jax.__version__} on Python {sys.version.split()[0]}, C extension in use")
EOF
"$venv/bin/python" examples/quickstart.py
"$venv/bin/python" -m pytest tests/runtime -q -p no:cacheprovider
