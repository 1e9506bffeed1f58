# The two commands of the README: `make demo` and `make test`. Both set everything up first.
VENV ?= .venv
BIN := $(VENV)/bin
export ROS_AUTOMATIC_DISCOVERY_RANGE ?= LOCALHOST

.PHONY: setup demo test lint typecheck imports unit clean setup-vision test-vision test-browser

setup:
	bash scripts/bootstrap.sh

demo: setup
	$(BIN)/sg-search demo

lint: setup
	$(BIN)/ruff check src tests scripts launch setup.py
	$(BIN)/ruff format --check src tests scripts launch setup.py

typecheck: setup
	$(BIN)/mypy

# Layering and "no ROS in the core": the import-linter contracts in pyproject.toml.
imports: setup
	$(BIN)/lint-imports --no-cache

unit: setup
	$(BIN)/python -m pytest -n 2 --dist loadgroup --durations=15

test: lint typecheck imports unit

# Optional: the YOLO/SAM detector in its own venv (torch 2.14.1 + torchvision; ~7 GB).
setup-vision:
	SG_SEARCH_VENV=.venv-vision SG_SEARCH_VISION=1 bash scripts/bootstrap.sh

test-vision: setup-vision
	SG_SEARCH_VISION=1 .venv-vision/bin/python -m pytest tests/perception -v

# A real browser (Debian's chromium) and tesseract (reads the viewer's canvas), then the
# browser tests: Rerun's web viewer and report.html in headless Chromium. Needs apt as root.
test-browser: setup
	command -v chromium >/dev/null && command -v tesseract >/dev/null || \
		{ apt-get update -qq && apt-get install -y -qq chromium tesseract-ocr; }
	$(BIN)/python -m pytest tests/browser -v

clean:
	rm -rf $(VENV) .venv-vision build install log
