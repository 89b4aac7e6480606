// Guard mode (`stowage compile --guard`): the C that checks a plan at run time. Every activation buffer gets
// canary bytes on both sides (reserved by the planner), its bytes are poisoned until its producer writes them
// and again when its lifetime ends, and a checksum taken after the write must still match whenever the buffer
// is read and after every step. Any violation calls stowage_guard_fail (stowage_hal.h) with the tensor's name.
#pragma once

#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

/// The guard helpers for net.c (file scope; `prefix` is the model name). Empty when the plan has no guard.
std::string guardHelpers(const ProgramPlan& plan, const std::string& prefix);

/// One guard record: a run of bytes with one checksum and one live flag.
struct GuardRecord {
  TensorId tensor = kNoTensor;  ///< a tensor whose data starts at the record's first byte (the root for a group)
  size_t size = 0;              ///< bytes covered
  /// Lies inside a group root's bytes (a Concat slice, or a view of one): no canaries of its own (its
  /// neighbours are other slices), never poisoned on its own; the root's record poisons the whole group.
  bool slice = false;
  int armStep = -1;    ///< a root: its group's first step, where canaries are set and the bytes poisoned
  int deadStep = 0;    ///< after this step nothing reads the record's tensors: it stops being checked
  /// A slice record shared by tensors with separate lifetimes (views of the same bytes at different times, e.g. the
  /// same rows of a Concat output and of an Add written in place over it): after these steps none of them is live,
  /// so it stops being checked until one is written again.
  std::vector<int> idleSteps;
  int retireStep = -1; ///< a root: its group's last step, after which the group's bytes are poisoned
  /// A root written over its layer's input (an overlapping layer, plan/analysis/RowOverlap.h): not armed before
  /// that step (canaries and poison would land on input rows still to be read); its canaries are set after it.
  bool armAfterWrite = false;
  /// The step whose output is written over this record's bytes (its last reader), or -1: the record stops being
  /// checked before that step's checks and is not poisoned (the bytes are the output's now).
  int overwrittenAt = -1;
  /// A root whose group holds a graph input that the application writes before the run (--io-in-pools): no step
  /// arms it, so its canaries are set at the start of the run (guardInputsWrittenByApplication), also when the input
  /// is only a slice of it (an input written in place by an Add whose output is a Concat slice).
  bool writtenByApplication = false;
};

/// The guard records of a plan: one per group root (shared by its views and in-place writes), plus one per
/// distinct slice of a root (a Concat input written into its output, with its views). `index` gives each
/// tensor's record (-1 for tensors without one). Empty when the plan has no guard.
struct GuardLayout {
  std::vector<int> index;
  std::vector<GuardRecord> records;
};
GuardLayout guardLayout(const Graph& g, const ProgramPlan& plan);

/// Statements run before step `step`'s kernel calls: arm (canaries, poison) each group that starts here and
/// mark each slice the node writes unwritten, and check each record it reads is live and intact.
std::string guardBeforeStep(const Graph& g, const ProgramPlan& plan, const GuardLayout& guard, int step, const std::string& prefix);

/// Statements run after step `step`: record the checksums of what it wrote, check every live record and its
/// canaries, then stop checking the records whose readers are done and poison the groups that end here.
std::string guardAfterStep(const Graph& g, const ProgramPlan& plan, const GuardLayout& guard, int step, const std::string& prefix);

/// --io-in-pools: statements run at the start of <name>_run that treat each graph input (written by the
/// application before the call) as just written: canaries around it, its checksum taken, marked live. (Groups
/// holding a graph input are never armed by a step; see guardLayout.)
std::string guardInputsWrittenByApplication(const Graph& g, const GuardLayout& guard, const std::string& prefix);

}  // namespace stowage
