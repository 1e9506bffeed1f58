# The two commands of the README: `make demo` and `make test`. Both set everything up first.
VENV ?= .venv
BIN := $(VENV)/bin
export ROS_AUTOMATIC_DISCOVERY_RANGE ?= LOCALHOST

.PHONY: setup demo test lint typecheck unit clean

setup:
	bash scripts/bootstrap.sh

demo: setup
	$(BIN)/sg-search demo

lint: setup
	$(BIN)/ruff check src tests scripts launch setup.py
	$(BIN)/ruff format --check src tests scripts launch setup.py

typecheck: setup
	$(BIN)/mypy

unit: setup
	$(BIN)/python -m pytest -n 2

test: lint typecheck unit

clean:
	rm -rf $(VENV) build install log
