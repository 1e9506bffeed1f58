#!/usr/bin/env python3
"""Build this repository's ROS 2 interface packages into the running venv (pip-only installs).

Run it with the venv's python. It
1. rewrites the include paths that the ROS wheels' CMake export files carry from
   the machine they were built on (``/opt/python/cpXY-cpXY/...``) to this
   interpreter's own Python and numpy include directories, and
2. configures, builds and installs each interface package with cmake into
   ``sys.prefix``, skipping a package whose sources and toolchain are unchanged
   since its last build (a hash stamp in ``share/<pkg>/``).

Inside a ROS distro use colcon instead (see README); never run this there.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Build order matters only if one package depends on another; these two do not.
PACKAGES = ("src/tf2_msgs", "src/sg_search_interfaces")
FOREIGN_PYTHON_INCLUDE = re.compile(r"/opt/python/cp3\d+-cp3\d+/include/python3\.\d+")
FOREIGN_NUMPY_INCLUDE = re.compile(
    r"/opt/python/cp3\d+-cp3\d+/lib/python3\.\d+/site-packages/numpy/(?:_)?core/include"
)
STAMP_NAME = ".sg_search_build_stamp"


def patch_cmake_exports(prefix: Path) -> int:
    """Rewrite foreign include paths in the wheels' CMake exports; return files changed."""
    import numpy

    python_include = sysconfig.get_paths()["include"]
    numpy_include = numpy.get_include()
    changed = 0
    for path in (prefix / "share").glob("*/cmake/*.cmake"):
        text = path.read_text()
        if "/opt/python/" not in text:
            continue
        new = FOREIGN_NUMPY_INCLUDE.sub(numpy_include, text)
        new = FOREIGN_PYTHON_INCLUDE.sub(python_include, new)
        if new != text:
            path.write_text(new)
            changed += 1
    return changed


def source_hash(package_dir: Path) -> str:
    """Hash of the package's sources, this script and the interpreter that builds it."""
    digest = hashlib.sha256()
    digest.update(sys.version.encode())
    digest.update(Path(__file__).read_bytes())
    for path in sorted(p for p in package_dir.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(package_dir)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def build_package(package_dir: Path, prefix: Path, build_root: Path, jobs: int) -> bool:
    """Configure, build and install one ament_cmake package; return False if it was up to date."""
    name = package_dir.name
    stamp = prefix / "share" / name / STAMP_NAME
    wanted = source_hash(package_dir)
    if stamp.is_file() and stamp.read_text().strip() == wanted:
        print(f"[build_interfaces] {name}: up to date")
        return False
    build_dir = build_root / name
    build_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["AMENT_PREFIX_PATH"] = str(prefix)
    env["CMAKE_PREFIX_PATH"] = str(prefix)
    configure = [
        "cmake",
        "-S",
        str(package_dir),
        "-B",
        str(build_dir),
        f"-DPython3_EXECUTABLE={sys.executable}",
        "-DBUILD_TESTING=OFF",
        f"-DCMAKE_INSTALL_PREFIX={prefix}",
        "-DCMAKE_BUILD_TYPE=Release",
    ]
    print(f"[build_interfaces] {name}: building (takes about a minute)", flush=True)
    for command in (
        configure,
        ["cmake", "--build", str(build_dir), "--parallel", str(jobs)],
        ["cmake", "--install", str(build_dir)],
    ):
        result = subprocess.run(command, env=env, capture_output=True, text=True)
        if result.returncode != 0:
            sys.stderr.write(result.stdout[-4000:] + result.stderr[-4000:])
            raise SystemExit(f"[build_interfaces] {name}: '{' '.join(command[:2])}' failed")
    stamp.write_text(wanted + "\n")
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--build-dir", type=Path, default=REPO / "build" / "interfaces")
    args = parser.parse_args()
    prefix = Path(sys.prefix)
    if prefix == Path(sys.base_prefix):
        raise SystemExit("build_interfaces.py must run inside the project venv (.venv/bin/python)")
    print(f"[build_interfaces] patched {patch_cmake_exports(prefix)} CMake export files")
    for relative in PACKAGES:
        build_package(REPO / relative, prefix, args.build_dir, args.jobs)


if __name__ == "__main__":
    main()
