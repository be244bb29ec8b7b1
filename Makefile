# The README's two commands: `make demo` and `make test`. Both install what they need first.
PYTHON ?= python3
PIP := $(PYTHON) -m pip

.PHONY: install demo test lint docs

install:
	$(PIP) install --quiet --disable-pip-version-check -e ".[torch,mindspore,report,dev]"

demo: install
	$(PYTHON) -m msprobe_rewriter.lint fixtures/pytorch/image_classifier.py || [ $$? -eq 1 ]

test: install
	$(PYTHON) -m pytest -q

lint: install
	$(PYTHON) -m ruff check .

docs: install
	$(PYTHON) -m msprobe_rewriter.docs docs
