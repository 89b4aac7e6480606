// Offset algorithm "auto", the default: the greedy algorithms first (milliseconds), stopping as soon as one
// reaches the lower bound (or fits the capacity, when one is given); otherwise the exact search for the rest
// of the time limit, starting from the best greedy plan. The result names the winner, e.g. "auto(exact)".
#pragma once

#include "stowage/plan/algo/OffsetProblem.h"

namespace stowage {

OffsetResult placeAuto(const OffsetProblem& p, const OffsetOptions& options);

}  // namespace stowage
