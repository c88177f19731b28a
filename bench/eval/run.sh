#!/bin/sh
# BM1/BM2: execkit eval vs ipykernel, same interpreter, back to back.
# Needs a Python with jupyter_client and ipykernel: PY=/path/to/venv/bin/python bench/eval/run.sh
set -eu
PY=${PY:-python3}
cd "$(dirname "$0")/../.."
echo "machine: $(uname -srm), $(nproc) cores, $($PY -c 'import sys; print(sys.version.split()[0])')"
EXECKIT_PYTHON="$PY" cargo run --quiet --release -p execkit-eval --example bench_eval -- "${WARM:-1000}" "${COLD:-14}"
"$PY" bench/eval/jupyter_baseline.py "${WARM:-1000}" "${COLD:-10}"
