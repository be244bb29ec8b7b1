# The README's two commands: `make demo` and `make test`. Both install what they need first.
PYTHON ?= python3
PIP := $(PYTHON) -m pip

.PHONY: install demo test lint docs

install:
	$(PIP) install --quiet --disable-pip-version-check -e ".[torch,mindspore,report,trainers,dev]"

# The demo: a diffusion-style training script that is not reproducible as written.
DEMO := fixtures/pytorch/diffusion_sampler.py
DEMO_COPY := build/demo/diffusion_sampler.py

demo: install
	@echo "== 1/4 msprobe-lint: the hazards, found statically"
	$(PYTHON) -m msprobe_rewriter.lint $(DEMO) || [ $$? -eq 1 ]
	@echo "== 2/4 msprobe-verify: run it twice, name the first diverging API and its line"
	$(PYTHON) -m msprobe_runtime.verify --steps 2 -- $(PYTHON) $(DEMO) --steps 2 || [ $$? -eq 1 ]
	@echo "== 3/4 msprobe-instrument --write on a copy: seed_all, CPU draws, deterministic data, debugger"
	rm -rf build/demo && mkdir -p build/demo && cp $(DEMO) $(DEMO_COPY)
	$(PYTHON) -m msprobe_rewriter.instrument --write --emit-config $(DEMO_COPY)
	@echo "== 4/4 msprobe-verify again: now bit-identical"
	$(PYTHON) -m msprobe_runtime.verify --steps 2 -- $(PYTHON) $(DEMO_COPY) --steps 2

# After a crash (a fatal signal: no pytest report), print the test that was running and the top frames of
# each thread from tests/conftest.py's log, last, where the tail of a CI log shows them.
CRASH_LOG := build/pytest-crash.log
test: install
	$(PYTHON) -m pytest -q || { status=$$?; grep -q '^Fatal Python error' $(CRASH_LOG) 2>/dev/null && \
	  awk '/^running /{test=$$0} /^Fatal Python error/{crash=1; print "== crash while " test} \
	       crash && /^(Current thread|Thread) /{frames=0} crash && frames++ < 16' $(CRASH_LOG); exit $$status; }

lint: install
	$(PYTHON) -m ruff check .

docs: install
	$(PYTHON) -m msprobe_rewriter.docs docs
	$(PYTHON) -m msprobe_rewriter.instrument.docs docs
