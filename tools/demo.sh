#!/usr/bin/env bash
# `make demo`: compile the bundled DS-CNN keyword-spotting model to C, run it on the host, print the results.
set -euo pipefail
build=${1:-build}
bin="$build/bin"
out="$build/demo"
rm -rf "$out"
mkdir -p "$out"

echo "== 1. Write the bundled DS-CNN (MLPerf Tiny keyword spotting layout, seeded weights)"
"$bin/stowage-zoo" write ds-cnn -o "$out/ds_cnn.onnx" --seed 1 --sample-input "$out/input.npy"
echo
echo "== 2. What is in it: stowage info"
"$bin/stowage" info "$out/ds_cnn.onnx"
echo
board="$(dirname "$0")/../examples/boards/cortex-m7.toml"
echo "== 3. Compile to C for a Cortex-M7 board (DTCM, SRAM, ITCM, flash): stowage compile --board"
"$bin/stowage" compile "$out/ds_cnn.onnx" -o "$out/c" --name kws --board "$board"
ls -l "$out/c"
echo
echo "== 4. Build the generated C with the system cc and run it on the host, same board: stowage run"
"$bin/stowage" run "$out/ds_cnn.onnx" --input "$out/input.npy" --output-dir "$out/result" --format npy --board "$board"
echo
echo "Generated C: $out/c   Memory report: $out/c/report.html   Outputs: $out/result"
