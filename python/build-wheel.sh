#!/usr/bin/env bash
# Builds the execkit wheel with the JavaScript kernel inside it, into target/wheels/.
#   python/build-wheel.sh [--release] [--install]
# --release builds optimised code (slower to build); --install pip-installs the wheel into the
# current Python afterwards. Without the kernel, `pip install .` works too (no JavaScript cells).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=dev
install=0
for arg in "$@"; do
  case "$arg" in
    --release) profile=release ;;
    --install) install=1 ;;
    *) echo "usage: python/build-wheel.sh [--release] [--install]" >&2; exit 2 ;;
  esac
done
out=target/wheels
# `--workspace` resolves dependency features as the workspace build does, so a tree built by
# `cargo build --workspace` is reused instead of compiled again for the kernel alone.
cargo build --profile "$profile" --workspace --bin execkit-js-kernel
dir=debug
[ "$profile" = release ] && dir=release
mkdir -p python/execkit/bin
# Debug info would make up most of the wheel (hundreds of MiB in a dev build): strip it.
strip -o python/execkit/bin/execkit-js-kernel "target/$dir/execkit-js-kernel"
rm -f "$out"/execkit-*.whl
python3 -m maturin build --profile "$profile" --strip --out "$out"
if [ "$install" = 1 ]; then
  python3 -m pip install --force-reinstall "$out"/execkit-*.whl
fi
