#!/usr/bin/env bash
# CI: the quickstart and the runtime tests on Python 3.14 (lazy annotations, PEP 649/749) with the newest JAX pip
# resolves for it and the C extension built and checked to be in use. The CI image has no Python 3.14, so it runs in
# a minimal Debian sid root made by debootstrap (sid ships python3.14), cached at $JAXSTATIC_PY314_ROOT between runs
# on one machine; the repository is bind-mounted at /src inside it. Needs root (debootstrap, chroot, mount).
# Measured: about 45 s to make the root, 3-4 minutes in all on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${JAXSTATIC_PY314_ROOT:-/var/cache/jaxstatic/py314}

if [[ ! -x "$root/usr/bin/python3.14" ]]; then
    command -v debootstrap >/dev/null || { apt-get update -q && apt-get install -y -q debootstrap; } >/dev/null
    rm -rf "$root" && mkdir -p "$root"
    debootstrap --variant=minbase --include=python3.14,python3.14-venv,python3.14-dev,build-essential,ca-certificates \
        sid "$root" http://deb.debian.org/debian >/dev/null
fi
# pip inside trusts what the host trusts (a proxy's CA, if any)
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/host-ca.crt"
cp /etc/resolv.conf /etc/hosts /etc/hostname "$root/etc/"  # names resolve as on the host (gloo, in the distributed test)
mkdir -p "$root/src"
mount --bind "$PWD" "$root/src"
mount -t proc proc "$root/proc"
trap 'umount "$root/proc"; umount "$root/src"' EXIT

chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
    PIP_CERT=/etc/ssl/certs/host-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 /bin/bash -euo pipefail -c '
cd /src
venv=/opt/venv-314
rm -rf "$venv"
python3.14 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade jax jaxlib pytest pytest-xdist hypothesis attrs pyyaml equinox jaxtyping \
    beartype cloudpickle typing_extensions
"$venv/bin/pip" install -q -e .
"$venv/bin/python" - <<PY
import sys

import jax

import jaxstatic._extension as compiled

if compiled.extension is None:
    sys.exit("tools/ci_py314.sh: the C extension (jaxstatic._hits) was not built or cannot be imported")
print(f"py314: jax {jax.__version__} on Python {sys.version.split()[0]}, C extension in use")
PY
"$venv/bin/python" examples/quickstart.py
"$venv/bin/python" -m pytest tests/runtime -q -p no:cacheprovider
'
