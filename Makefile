# Newcomer entry points: `make demo` and `make test` install what they need, then run.
PY ?= python3
export PYTHONDONTWRITEBYTECODE = 1

.PHONY: setup demo test lint progs roms fuzz bench eval
# FuseSoC through the interpreter (pip may put its console script outside PATH, e.g. behind pyenv's shims)
FUSESOC = $(PY) -c 'import sys; from fusesoc.main import main; sys.argv[0] = "fusesoc"; sys.exit(main())'

setup:
	@bash scripts/setup.sh

progs: setup
	@$(MAKE) -s -C xdp_progs

demo: setup progs
	@$(PY) scripts/demo.py

# ruff, the generated files' freshness, and verilator --lint-only -Wall over the RTL as its manifest lists it
# (sephirot/sephirot.core, through FuseSoC): as synthesised, and as simulated (combinational block-RAM reads, assertions)
lint: setup
	@$(PY) -m ruff check hxdp tests scripts benchmarks
	@$(PY) -m hxdp.rtl.headers --check
	@mkdir -p out; for t in lint lint_sim; do \
	  $(FUSESOC) --cores-root sephirot run --build-root out/fusesoc --target $$t hxdp:sephirot:core >out/fusesoc-$$t.log 2>&1 \
	    || { grep -E "%(Warning|Error)" out/fusesoc-$$t.log; echo "lint: verilator $$t failed (out/fusesoc-$$t.log)"; exit 1; }; \
	done

test: setup progs lint
	@$(PY) -m pytest -q -n 2 -m "not slow" tests

roms: setup progs
	@$(PY) -c "from hxdp.suite import build_roms; [print(p) for p in build_roms()]"

FUZZ_COUNT ?= 1000
FUZZ_SEED ?= 1
fuzz: setup
	@hxdp fuzz --count $(FUZZ_COUNT) --packets 20 --seed $(FUZZ_SEED) --engine seq-model --engine vliw-model --jobs 2 --out out/fuzz

EVAL_FLAGS ?=
eval: setup progs
	@hxdp experiment --out docs/eval $(EVAL_FLAGS)

bench: setup progs
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done
