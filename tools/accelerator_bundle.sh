#!/usr/bin/env bash
# What the runtime test suite needs on a machine that has JAX and an accelerator but no network (a TPU host, say),
# built here, where PyPI is reachable, into one folder to copy there beside the checkout:
#   - jaxstatic's C extension, compiled for that machine's Python, to copy into the checkout there (the tests import
#     the checkout's jaxstatic; this checkout's own build is left as it is);
#   - jaxstatic as a wheel (its pytest plugin is found through the installed distribution's entry point);
#   - the wheels of the `tests` extra and everything they need, except JAX itself and what comes with it there.
#
#   bash tools/accelerator_bundle.sh [FOLDER] [PYTHON]     # defaults: .whl-accel, 3.11 (the TPU hosts' Python)
#
# Then, on that machine, in the checkout (docs/contributing.md, "On an accelerator"):
#   cp FOLDER/_hits.*.so jaxstatic/ && pip install --no-index --no-deps --target /tmp/site FOLDER/*.whl
#   export PYTHONPATH=$PYTHONPATH:/tmp/site
#   JAX_PLATFORMS=tpu,cpu python3 -m pytest -p no:cacheprovider -n 0 tests/runtime
#
# With JAX_CHECKOUT=<a clone of jax-ml/jax>, JAX's own test files of the tag of the JAX installed here (JAX_TAG to
# choose another) go into FOLDER/jax-tests, for tools/jax_tests_swapped.py there (their absl-py comes with optax):
#   python3 tools/jax_tests_swapped.py --tests FOLDER/jax-tests --platform tpu --swap jit,pmap,shard_map --control \
#       pmap_test.py shard_map_test.py
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.whl-accel}
py=${2:-3.11}
# JAX, jaxlib and their own needs are the machine's: a second copy would hide the one built for its accelerator
theirs='^(jax|jaxlib|jax_cuda[0-9]*_.*|libtpu|numpy|scipy|ml_dtypes|opt_einsum)-'

python="python$py"
command -v "$python" >/dev/null || { echo "accelerator_bundle: $python not found (pyenv install $py)" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out"

# jaxstatic's wheel, and its extension beside it, for that Python
"$python" -m pip wheel -q --no-deps -w "$out" .
unzip -o -q -j "$out"/jaxstatic-*.whl 'jaxstatic/_hits*.so' -d "$out"

# The test extra's wheels for that Python, binary only (the machine may have no compiler)
python3 -m pip download -q --only-binary=:all: --python-version "$py" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform linux_x86_64 -d "$out" \
    "$(ls "$out"/jaxstatic-*.whl)[tests]"
for whl in "$out"/*.whl; do
    base=$(basename "$whl")
    if [[ $base =~ $theirs ]]; then rm "$whl"; fi
done
echo "accelerator_bundle: $(ls "$out"/*.whl | wc -l) wheels and $(basename "$(ls "$out"/_hits*.so)") in $out ($(du -sh "$out" | cut -f1))"
if [[ -n ${JAX_CHECKOUT:-} ]]; then
    tag=${JAX_TAG:-jax-v$(python3 -c 'import jax; print(jax.__version__)')}
    mkdir -p "$out/jax-tests-src"
    git -C "$JAX_CHECKOUT" archive "$tag" tests | tar -x -C "$out/jax-tests-src"
    mv "$out/jax-tests-src/tests" "$out/jax-tests" && rmdir "$out/jax-tests-src"
    echo "accelerator_bundle: JAX's test files of $tag in $out/jax-tests"
fi
