# The two commands of the README. Both create .venv themselves and are quick when it is already set up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# three pytest-xdist workers on this 2-core machine. Four won when the suite waited on brokers more than it computed
# (10 min 32 s against three's 11 min 6 s, the cores busy 84 % of the run); since the test clusters stopped fetching
# jars and loading 50-partition internal topics the cores are busy through the run, and at four, tests that must
# hold a rate or answer within a timeout failed in 3 clean-clone runs out of 3 (kb-ci115-117): the suite's speed now
# comes from less work, not more processes. A module's tests stay on one worker, the groups handed out longest first
# (tests/conftest.py, tests/durations.json); the slowest tests named at the end
PYTEST := $(BIN)/python -m pytest -n 3 --dist loadgroup --no-loadscope-reorder --durations=15
# CI's suite: every test but the long scenarios, each of which has a short version in it (tests/conftest.py checks
# that the marker names one)
SUITE := -m "not long"

.PHONY: demo test test-quick test-long test-stress bytecode docs docs-serve network-tools clean

demo: $(VENV)/.installed bytecode
	$(BIN)/kafkabench run quick

test: $(VENV)/.installed-dev bytecode
	$(PYTEST) $(SUITE) $(PYTEST_ARGS)

# The inner loop: the unit tests and the integration tests that take seconds (marked quick), about a minute
test-quick: $(VENV)/.installed-dev bytecode
	$(PYTEST) -m quick $(PYTEST_ARGS)

# The long scenarios (marked long): the fault runs whose short versions `make test` runs, at full length
test-long: $(VENV)/.installed-dev bytecode
	$(PYTEST) -m long $(PYTEST_ARGS)

# The same suite with a busy process pinned to one core beside it (started and stopped here, bounded by itself
# too): the machine a CI run gets when other work shares it.
test-stress: $(VENV)/.installed-dev bytecode
	@$(BIN)/python tools/cpu_hog.py --seconds 5400 & hog=$$!; \
	trap 'kill $$hog 2>/dev/null' EXIT INT TERM; \
	echo "cpu hog $$hog spinning on one core"; \
	$(PYTEST) $(SUITE) $(PYTEST_ARGS)

# kafkabench's own modules compiled once (a third of a second; only what changed after that): where
# PYTHONDONTWRITEBYTECODE is set, every CLI call and worker a run starts would otherwise compile them again
# (0.3 s a CLI call, 0.06 s a worker)
bytecode: $(VENV)/.installed
	@$(BIN)/python -m compileall -q src >/dev/null

# The docs site (mkdocs.yml, docs/): built into site/, every warning an error; or served while you edit it.
docs: $(VENV)/.installed-dev
	$(BIN)/mkdocs build --strict

docs-serve: $(VENV)/.installed-dev
	$(BIN)/mkdocs serve

# The packages installed by uv (from PyPI, into the virtualenv by its own pip): the dev set in 2-3 s, where pip
# took 33 s of a clean-clone CI run (docs/dependencies.md)
$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "kafkabench needs Python 3.11+; run make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)

# a target of its own: a venv made before kafkabench installed with uv gets it too
$(BIN)/uv: | $(BIN)/python
	$(BIN)/python -m pip install --quiet uv

$(VENV)/.installed: pyproject.toml | $(BIN)/uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[aiokafka]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[dev]'
	touch $@ $(VENV)/.installed

# What an isolated cluster's network faults need, from Debian's packages (root): nftables (partition, loss), iptables
# and libnetfilter-queue1 (delay), ethtool (offloads off for exact loss). `make test` installs them itself when run
# as root (tests/debian.py); a user runs this once.
NETWORK_PACKAGES := nftables iptables ethtool libnetfilter-queue1
network-tools:
	@[ "$$(id -u)" -eq 0 ] || { echo "network-tools: installing Debian packages needs root: sudo make network-tools"; exit 1; }
	apt-get install -y --no-install-recommends $(NETWORK_PACKAGES) || { apt-get update && apt-get install -y --no-install-recommends $(NETWORK_PACKAGES); }

clean:
	rm -rf $(VENV)
