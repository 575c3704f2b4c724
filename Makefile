# The two commands a newcomer needs: `make demo` and `make test`. Both create the virtualenv and
# install what they need (Java 17 for Spark included when running as root on Debian).
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST := $(VENV)/bin/pytest

.PHONY: demo test test-fast test-all java chromium ui lint bench

$(VENV)/.installed: setup.cfg pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

# Spark needs a Java runtime >= 17: install it where we can, otherwise say exactly what is missing.
java:
	@if command -v java >/dev/null 2>&1 && java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])'; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Java 17 (openjdk-17-jre-headless) for Spark"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null; \
	else echo "spark-ivm needs Java 17 or newer for Spark: install openjdk-17-jre-headless (Debian/Ubuntu: sudo apt-get install openjdk-17-jre-headless) or set JAVA_HOME" >&2; exit 1; fi

# The browser test of `ivm ui` drives Debian's chromium through Playwright (whose own browser download
# needs the network): install it where we can, otherwise say exactly what is missing.
chromium:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's chromium for the browser test of ivm ui"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else echo "the browser test of ivm ui needs chromium at /usr/bin/chromium (Debian/Ubuntu: sudo apt-get install chromium)" >&2; exit 1; fi

ui: $(VENV)/.installed
	$(VENV)/bin/ivm ui

demo: $(VENV)/.installed java
	$(VENV)/bin/ivm demo

# The CI command: everything but the slow tests (Spark integration tests included).
test: $(VENV)/.installed java chromium
	$(PYTEST) -q -m "not slow" -n 2 --dist loadgroup --durations=30

# Without Spark: seconds, for the edit-test loop.
test-fast: $(VENV)/.installed
	$(PYTEST) -q

test-all: $(VENV)/.installed java chromium
	$(PYTEST) -q -m ""

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

bench: $(VENV)/.installed java
	$(PY) examples/benchmarks/q3_throughput.py
