#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer, through cargo-fuzz, on the stable
# toolchain: no sanitizer) of every decoder that reads outside bytes, each
# target for SECONDS (default 10), starting from seeds of real traffic that
# the property-based targets of the same name write. A crash stops the run
# with libFuzzer's report and exit 1; the input is kept under artifacts/.
# Usage: crates/fuzz/run.sh [SECONDS] [TARGET...]   (docs/security.md)
set -euo pipefail
secs=${1:-10}
shift || true
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
fuzz=crates/fuzz
if ! command -v cargo-fuzz >/dev/null; then
  echo "cargo-fuzz is missing: cargo install cargo-fuzz --version 0.13.2 --locked" >&2
  exit 1
fi
echo "fuzz: writing the seeds (real traffic) to $fuzz/corpus"
FLOTILLA_FUZZ_SEEDS_OUT="$root/$fuzz/corpus" FLOTILLA_FUZZ_CASES=1 \
  cargo test --quiet --locked -p flotilla-actors -p flotilla-host -p flotilla-hub --lib fuzz_ \
  >/dev/null
echo "fuzz: building the targets (release, instrumented)"
cargo fuzz build --fuzz-dir "$fuzz" --sanitizer none --release
targets=("$@")
if ((${#targets[@]} == 0)); then
  mapfile -t targets < <(cargo fuzz list --fuzz-dir "$fuzz")
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for target in "${targets[@]}"; do
  mkdir -p "$fuzz/corpus/$target"
  if ! cargo fuzz run --fuzz-dir "$fuzz" --sanitizer none --release "$target" \
    "$fuzz/corpus/$target" -- -max_total_time="$secs" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz $target: CRASH (input under $fuzz/artifacts/$target)" >&2
    exit 1
  fi
  echo "fuzz $target: $(grep -E '^Done [0-9]+ runs' "$log" | tail -n 1), 0 crashes"
done
