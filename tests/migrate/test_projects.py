"""The tool on projects written by others, as a new user runs it: each project's source distribution downloaded
with pip, converted, and some of its own tests run before and after. The same tests pass after as before.

Kept cheap for CI (two small downloads, a few test files): jax_dataclasses (its whole sdist converted, its tests
exercise ``jdc.pytree_dataclass``/``jdc.Static``/``jdc.jit``) and Flax's own ``flax.struct`` tests. Skipped only
when the package registry cannot be reached.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

from jaxstatic.migrate import main

# (pip requirement, the files of its sdist the tool converts, the tests run, tests left out and why)
PROJECTS = {
    "jax_dataclasses": ("jax_dataclasses==1.6.3", ["."], ["tests"],
                        # Python 3.12 syntax: the file does not even import on older Pythons, converted or not
                        ["tests/test_variadic_generic_py312.py"] if sys.version_info < (3, 12) else []),
    "flax": ("flax==0.12.8", ["tests/struct_test.py", "tests/serialization_test.py"],
             ["tests/struct_test.py", "tests/serialization_test.py"], []),
}
_OFFLINE = re.compile(r"NewConnectionError|Temporary failure|Network is unreachable|Could not fetch URL|"
                      r"No matching distribution found|ConnectTimeout|Max retries exceeded|Name or service not known")


def download(requirement: str, into: pathlib.Path) -> pathlib.Path:
    """The sdist of ``requirement``, unpacked under ``into``; skips the test when the registry is unreachable."""
    result = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                             "--disable-pip-version-check", "-q", "-d", str(into), requirement],
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        if _OFFLINE.search(result.stdout + result.stderr):
            pytest.skip(f"the package registry cannot be reached: {result.stderr.strip()[-200:]}")
        raise AssertionError(result.stdout + result.stderr)
    (archive,) = into.glob("*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(into, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))  # type: ignore[arg-type]
    (folder,) = [p for p in into.iterdir() if p.is_dir()]
    return folder


def outcomes(folder: pathlib.Path, tests: list[str], ignore: list[str]) -> dict[str, str]:
    """Each test id run in ``folder``, with its outcome."""
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-p",
                             "no:randomly", *tests, *(f"--ignore={i}" for i in ignore)],
                            cwd=folder, capture_output=True, text=True, timeout=900)
    found = {m.group(2): m.group(1) for m in re.finditer(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)",
                                                         result.stdout, re.MULTILINE)}
    assert found, result.stdout[-3000:] + result.stderr[-3000:]
    return found


@pytest.mark.installs  # downloads from the package index: .ci/run runs it (``--installs``)
@pytest.mark.parametrize("project", PROJECTS)
def test_a_projects_own_tests_pass_the_same_after_conversion(project: str, tmp_path: pathlib.Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    requirement, convert, tests, ignore = PROJECTS[project]
    before = download(requirement, tmp_path / "before")
    after = tmp_path / "after"
    shutil.copytree(before, after)
    expected = outcomes(before, tests, ignore)
    assert main([str(after / path) for path in convert]) == 0
    report = capsys.readouterr().out
    converted = int(re.search(r"(\d+) sites converted", report).group(1))  # type: ignore[union-attr]
    assert converted >= 3, report  # the tests below run converted code
    assert outcomes(after, tests, ignore) == expected
    assert main([str(after / path) for path in convert] + ["--check"]) == 0  # a second run changes nothing
