#!/usr/bin/env bash
# CI: the plugin's cases on the oldest mypy it supports (pyproject's `mypy` extra), in a venv of their own.
# The YAML cases share one mypy cache within the run (tests/typecheck/conftest.py), so this costs a few minutes.
# Skipped here: the plugin's own strict type check (written against the newest mypy's internals) and the
# install tests (they do not depend on the mypy version). jaxstatic-check reads configurations through mypy's own
# process_options and runs its build, so its tests over configured projects run here too.
set -euo pipefail
cd "$(dirname "$0")/.."
OLDEST=1.15.0
VENV=.venv-mypy-oldest
rm -rf "$VENV"
python3 -m venv "$VENV"
# equinox, attrs: cases on their classes; pytest-xdist: the cases run in parallel (pyproject's addopts)
"$VENV/bin/pip" install -q "mypy==$OLDEST" pytest pytest-xdist pytest-mypy-plugins equinox attrs
"$VENV/bin/pip" install -q -e . --config-settings editable_mode=strict
test "$("$VENV/bin/python" -c 'import mypy.version; print(mypy.version.__version__)')" = "$OLDEST"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/typecheck tests/test_check_projects.py \
    tests/plugin/test_versions.py tests/plugin/test_incremental.py tests/plugin/test_with_stubs.py
