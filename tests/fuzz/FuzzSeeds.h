// The seed inputs of the fuzz targets, built from what the repository has (the zoo's ONNX builder, the TFLite test
// model writers, the .npy and .pb writers): stowage_fuzz_replay feeds them to every target in `make test`, and
// `make fuzz` writes them as the starting corpus.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stowage::fuzz {

struct FuzzSeed {
  std::string name;   ///< file name when written ("cnn.onnx")
  std::string bytes;  ///< the input
};

/// The seeds of target `target` ("onnx", "tflite", ...; empty for a target whose seeds are repository files, such as
/// the example boards). `large` adds bigger inputs (zoo models) that are worth fuzzing but slow to replay.
std::vector<FuzzSeed> builtinFuzzSeeds(std::string_view target, bool large);

}  // namespace stowage::fuzz
