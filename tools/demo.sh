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
echo "== 5. The same firmware on an emulated Cortex-M7 (QEMU mps2-an500; the board's TCMs carved out of its RAM):"
echo "      stowage run --emulate (cross-built with arm-none-eabi-gcc, linker script from the board)"
"$bin/stowage" run "$out/ds_cnn.onnx" --input "$out/input.npy" --output-dir "$out/mcu" --format npy --board "$board" --emulate mps2-an500
if cmp -s "$out/result/output_0.npy" "$out/mcu/output_0.npy"; then
  echo "outputs byte-identical to step 4 (host)"
else
  echo "demo: the emulated Cortex-M7's output differs from the host run's ($out/mcu vs $out/result)" >&2
  exit 1
fi
echo
accel="$(dirname "$0")/../examples/boards/gemmini-like.toml"
echo "== 6. Offload to a Gemmini-like accelerator (16x16 int8/f32 engine, scratchpad and accumulator at fixed"
echo "      addresses, DMA with ping-pong tiles) and run on the host simulator: stowage run --board ... --trace"
"$bin/stowage" run "$out/ds_cnn.onnx" --input "$out/input.npy" --output-dir "$out/accel" --format npy --board "$accel" --trace
if cmp -s "$out/result/output_0.npy" "$out/accel/output_0.npy"; then
  echo "outputs byte-identical to step 4 (CPU only)"
else
  echo "demo: the accelerator run's output differs from the CPU run's ($out/accel vs $out/result)" >&2
  exit 1
fi
echo
echo "Generated C: $out/c   Memory report: $out/c/report.html   Outputs: $out/result"
echo "Accelerator trace (Perfetto / chrome://tracing): $out/accel/trace.json"
