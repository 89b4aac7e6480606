// Small multi-operator .tflite models for tests: the writer is stowage/zoo/TfliteWriter.h (also used by the random
// int8 TFLite models); its names are used here as tflitetest::TensorSpec, OpSpec, bytesOf, buildTfliteModel.
#pragma once

#include "stowage/zoo/TfliteWriter.h"

namespace stowage::tflitetest {
using tflitewriter::buildTfliteModel;
using tflitewriter::bytesOf;
using tflitewriter::OpSpec;
using tflitewriter::TensorSpec;
}  // namespace stowage::tflitetest
