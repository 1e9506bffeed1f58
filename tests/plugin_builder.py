"""Build and install a third-party distribution with ``sg_search.reasoners`` entry points into
a folder (``pip install --target``, offline, no build isolation), as a lab's package would be."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def install_reasoner_plugin(tmp_path: Path, module: str, source: str, entry_points: dict[str, str]) -> Path:
    """``module`` (a package holding ``source``) with ``entry_points`` {name: "module:factory"}
    installed under ``tmp_path / "site"``; put that folder on PYTHONPATH to use it."""
    package = tmp_path / "plugin_src"
    (package / module).mkdir(parents=True)
    (package / module / "__init__.py").write_text(source)
    eps = [f"{name} = {target}" for name, target in entry_points.items()]
    (package / "setup.py").write_text(
        "from setuptools import setup\n"
        f"setup(name={module.replace('_', '-')!r}, version='0.1', packages=[{module!r}],\n"
        f"      entry_points={{'sg_search.reasoners': {eps!r}}})\n"
    )
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(site), str(package)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return site
