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
echo "== 3. Compile to C: stowage compile"
"$bin/stowage" compile "$out/ds_cnn.onnx" -o "$out/c" --name kws
ls -l "$out/c"
echo
echo "== 4. Build the generated C with the system cc and run it on a deterministic input: stowage run"
"$bin/stowage" run "$out/ds_cnn.onnx" --input "$out/input.npy" --output-dir "$out/result" --format npy
echo
echo "Generated C: $out/c   Outputs: $out/result"
