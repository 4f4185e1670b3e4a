"""MkDocs hooks for the documentation site (``hooks:`` in ``mkdocs.yml``): the version on every page.

The version is read from ``pyproject.toml``, the one place it is declared, and shown in the header (beside the site's
name) and in the footer.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def version() -> str:
    found = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    if not found:
        raise ValueError("tools/docs_hooks.py: no version = \"...\" line in pyproject.toml")
    return found[1]


def on_config(config: Any) -> Any:
    v = version()
    config["site_name"] = f"{config['site_name']} {v}"
    config["copyright"] = f"jaxstatic {v} &middot; Apache-2.0 license"
    return config
