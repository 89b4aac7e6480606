#!/bin/sh
# `make fuzz`: runs each libFuzzer target of tests/fuzz for SECONDS from a seed corpus and prints what it found.
# Usage: tools/fuzz.sh BUILD_DIR SECONDS [TARGET...]   (targets: `BUILD_DIR/bin/stowage_fuzz_replay --list`)
# FUZZ_RUNS=N in the environment: each target stops after N executions (or at SECONDS, whichever comes first);
# FUZZ_MAX_LEN=N: inputs of at most N bytes (libFuzzer's -max_len; by default the largest seed, ~1 MB with ../shared).
# FUZZ_TIMEOUT=S: an input taking longer than S seconds is a finding (default 10).
# Seeds: the targets' built-in seeds (stowage_fuzz_replay --write-seeds), the example boards, the small models and
# tensors of Debian's libonnx-testdata, the checked-in regressions, and ../shared's models when that folder exists.
# The corpus grows in BUILD_DIR/fuzz/corpus/<target> across runs; crashes, leaks, timeouts and out-of-memory
# inputs land in BUILD_DIR/fuzz/findings/<target>/. Exit status 1 when anything was found.
set -eu
build=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
replay="$build/bin/stowage_fuzz_replay"
targets=${*:-$("$replay" --list)}
testdata=/usr/share/libonnx-testdata/data
shared="$here/../shared/models"

# copy_small DEST MAX_BYTES FILE...: copies each file under MAX_BYTES into DEST, named after its path.
copy_small() {
  dest=$1 max=$2
  shift 2
  for f in "$@"; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -le "$max" ] || continue
    cp "$f" "$dest/$(echo "$f" | tr '/' '_')"
  done
}

found=0
summary=""
for t in $targets; do
  seeds="$build/fuzz/seeds/$t" corpus="$build/fuzz/corpus/$t" findings="$build/fuzz/findings/$t"
  rm -rf "$seeds"
  mkdir -p "$seeds" "$corpus" "$findings"
  "$replay" "$t" --write-seeds "$seeds" >/dev/null
  case $t in
    onnx)
      copy_small "$seeds" 65536 "$testdata"/node/*/model.onnx "$testdata"/simple/*/model.onnx
      [ -d "$shared" ] && copy_small "$seeds" 1048576 $(find "$shared" -name '*.onnx') ;;
    tflite) [ -d "$shared" ] && copy_small "$seeds" 1048576 $(find "$shared" -name '*.tflite') ;;
    board_toml) copy_small "$seeds" 65536 "$here"/examples/boards/*.toml "$here"/tests/conformance/guard-board.toml ;;
    tensor_pb) copy_small "$seeds" 4096 "$testdata"/node/*/test_data_set_0/input_0.pb ;;
  esac
  before=$(find "$findings" -type f | wc -l)
  echo "== fuzz $t for ${seconds}s (corpus $corpus, seeds $(ls "$seeds" | wc -l))"
  log="$build/fuzz/$t.log"
  # FUZZ_RUNS (make fuzz FUZZ_RUNS=N): stop each target after N executions, or at SECONDS, whichever comes first.
  "$build/bin/stowage_fuzz_$t" -max_total_time="$seconds" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} ${FUZZ_MAX_LEN:+-max_len=$FUZZ_MAX_LEN} -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/" "$corpus" "$seeds" "$here/tests/fuzz/regressions/$t" >"$log" 2>&1 || true
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  new=$(( $(find "$findings" -type f | wc -l) - before ))
  [ "$new" -gt 0 ] && found=1
  line="$t: ${runs:-?} executions, corpus $(ls "$corpus" | wc -l) inputs, $new new finding(s)"
  echo "   $line (log $log)"
  grep -m3 -E "^(==[0-9]+==ERROR|SUMMARY|fuzz target found a bug)" "$log" | sed 's/^/   /' || true
  summary="$summary\n  $line"
done
printf "fuzz summary:$summary\n"
if [ "$found" = 1 ]; then
  echo "findings are in $build/fuzz/findings/<target>/; reproduce with $build/bin/stowage_fuzz_<target> FILE; once fixed, add the file to tests/fuzz/regressions/<target>/"
  exit 1
fi
