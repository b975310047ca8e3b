# memhtml tasks. `just` itself ships in the dev extra (rust-just).

python := env_var_or_default("PYTHON", "python3")

# Install the package with its dev and benchmark extras.
setup:
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DCMAKE_C_FLAGS_RELEASE=-O1 -DCMAKE_CXX_FLAGS_RELEASE=-O1" {{python}} -m pip install -e '.[dev,bench,local,model]'

# Everything CI checks: lint, types, layering, then every test. `-n auto` starts one
# worker more than the cores (tests/conftest.py: much of the suite waits on servers,
# timers and browsers, and a third worker keeps two cores busy). Work stealing keeps
# the workers busy to the end: the kill and crash suites' long cases otherwise
# queue behind one worker while the other idles. The real small model's tests fail
# here, rather than skip, when the model extra is missing. Bytecode is written even
# where the machine sets PYTHONDONTWRITEBYTECODE: otherwise each worker rewrites the
# asserts of every test module again and each of the suite's command processes
# compiles memhtml again (docs/benchmarks.md, "The suite's own time").
test: lint typecheck
    env -u PYTHONDONTWRITEBYTECODE MEMHTML_REAL_MODEL=required {{python}} -m pytest -n auto --dist worksteal -p no:cacheprovider

lint:
    {{python}} -m ruff check src tests bench tools
    lint-imports

typecheck:
    {{python}} -m mypy

# Benchmarks; figures go into docs/benchmarks.md by hand.
bench:
    {{python}} -m bench.format
    {{python}} -m bench.head
    {{python}} -m bench.domain
    {{python}} -m bench.mdindex
    {{python}} -m bench.markdown_import
    {{python}} -m bench.persistent
    {{python}} -m bench.langdetect
    {{python}} -m bench.langdetect_candidates
    {{python}} -m bench.temporal
    {{python}} -m bench.mcp
    {{python}} -m bench.mcp_soak
    {{python}} -m bench.team
    {{python}} -m bench.pygit2_leaks
    {{python}} -m bench.sleep
    {{python}} -m bench.sleep_planted
    {{python}} -m bench.sleep_model
    {{python}} -m bench.sleep_real_model

# Build a store from the shipped examples in a temp dir, search it, publish it.
demo:
    {{python}} -m memhtml demo
