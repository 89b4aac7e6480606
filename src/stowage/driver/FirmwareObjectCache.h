// Objects of earlier emulated firmware builds, reused when the same source is compiled the same way again (the same
// model run on several inputs rebuilds identical firmware). Opt-in through STOWAGE_FIRMWARE_CACHE (a folder).
#pragma once

#include <string>
#include <vector>

#include "stowage/firmware/FirmwareProject.h"

namespace stowage {

class FirmwareObjectCache {
 public:
  /// The cache in the folder STOWAGE_FIRMWARE_CACHE names (created when missing), or a disabled one when it is unset.
  static FirmwareObjectCache fromEnvironment();
  bool enabled() const { return !dir_.empty(); }
  /// The key of compiling `source` (relative to the project) with `args`: a hash of the command with `projectDir` left
  /// out, the source's text and the text of every header of the project (whichever the source includes).
  std::string key(const FirmwareProject& project, const std::string& source, const std::vector<std::string>& args,
                  const std::string& projectDir) const;
  /// Copies the object stored under `key` to `object`; false when there is none (or it cannot be copied).
  bool restore(const std::string& key, const std::string& object) const;
  /// Stores `object` under `key`; best effort (a cache that cannot be written is only slower), atomic for readers.
  void store(const std::string& key, const std::string& object) const;

 private:
  std::string dir_;
};

}  // namespace stowage
