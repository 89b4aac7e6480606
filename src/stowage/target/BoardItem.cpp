// Reading one target, pool, rule or pin from an ItemReader (TOML table or flag): keys, types, defaults and
// derived bank sizes, then the item's own checks (BoardCheck.h).
#include "stowage/target/BoardItem.h"

#include <algorithm>
#include <filesystem>
#include <limits>

#include "stowage/target/BoardCheck.h"
#include "stowage/target/ByteSize.h"
#include "stowage/target/Suggest.h"

namespace stowage {

Diagnostic ItemReader::error(std::string_view key, const std::string& message, std::string hint) const {
  return makeError(where(key), label + ": " + message, std::move(hint));
}

Status ItemReader::checkKnownKeys(const std::vector<std::string>& known) const {
  for (const auto& k : keys()) {
    if (std::find(known.begin(), known.end(), k) != known.end()) continue;
    std::string hint;
    std::string close = closestMatch(k, known);
    if (!close.empty()) hint = "did you mean '" + close + "'?";
    else {
      hint = "known keys:";
      for (const auto& kk : known) hint += " " + kk;
    }
    return error(k, "unknown key '" + k + "'", hint);
  }
  return Status::success();
}

const std::vector<std::string>& targetKeys() {
  static const std::vector<std::string> k = {"name",         "kind",         "cores",           "ops",
                                             "engine_dim",   "engine_dtypes", "macs_per_cycle", "dma_channels",
                                             "dma_bytes_per_cycle", "dma_setup_cycles", "intrinsics"};
  return k;
}

const std::vector<std::string>& poolKeys() {
  static const std::vector<std::string> k = {
      "name",    "size", "alignment", "kind",      "placement",  "access",
      "section", "base", "banks",     "bank_size", "bank_bases", "read_bytes_per_cycle",
      "write_bytes_per_cycle",        "latency_cycles", "per_core_stride", "memory", "load_from"};
  return k;
}

const std::vector<std::string>& ruleKeys() {
  static const std::vector<std::string> k = {"op", "node", "inputs", "outputs", "weights", "scratch"};
  return k;
}

const std::vector<std::string>& pinKeys() {
  static const std::vector<std::string> k = {"tensor", "pool"};
  return k;
}

const std::vector<std::string>& memoryKeys() {
  static const std::vector<std::string> k = {"name", "base", "size", "kind"};
  return k;
}

const std::vector<std::string>& deviceKeys() {
  static const std::vector<std::string> k = {"cpu", "fpu", "dsp", "mve", "flash", "ram", "stack", "openocd", "qemu"};
  return k;
}

const std::vector<std::string>& kernelKeys() {
  static const std::vector<std::string> k = {"kernel", "dtype", "target", "function", "header", "source"};
  return k;
}

namespace {

KeyWhere whereOf(const ItemReader& in) {
  return [&in](std::string_view key) { return in.where(key); };
}

/// The string `key`, which must be present; when it is missing a misspelled key is reported first.
Result<std::string> requiredString(ItemReader& in, const std::string& key, const std::vector<std::string>& known) {
  if (!in.has(key)) {
    STOWAGE_TRY(in.checkKnownKeys(known));
    return in.error("", "has no '" + key + "'", "add " + key + " = \"...\"");
  }
  STOWAGE_ASSIGN_OR_RETURN(std::string s, in.getString(key));
  if (s.empty()) return in.error(key, "'" + key + "' is empty");
  return s;
}

std::optional<std::vector<std::string>>& roleSlot(PlacementRule& r, TensorRole role) {
  switch (role) {
    case TensorRole::Input: return r.inputs;
    case TensorRole::Output: return r.outputs;
    case TensorRole::Weight: return r.weights;
    case TensorRole::Scratch: return r.scratch;
  }
  return r.inputs;
}

}  // namespace

Result<Target> readTarget(ItemReader& in, const std::string& what) {
  in.label = what;
  Target t;
  t.origin = in.where("");
  STOWAGE_ASSIGN_OR_RETURN(t.name, requiredString(in, "name", targetKeys()));
  in.label = "target '" + t.name + "'";
  STOWAGE_TRY(in.checkKnownKeys(targetKeys()));
  if (in.has("kind")) {
    STOWAGE_ASSIGN_OR_RETURN(std::string kind, in.getString("kind"));
    auto k = targetKindFromName(kind);
    if (!k) return in.error("kind", "'kind' must be \"cpu\" or \"accelerator\", not \"" + kind + "\"");
    t.kind = *k;
  }
  if (in.has("cores")) {
    STOWAGE_ASSIGN_OR_RETURN(uint64_t cores, in.getUnsigned("cores"));
    if (cores < 1 || cores > 4096) return in.error("cores", "'cores' must be between 1 and 4096, not " + std::to_string(cores));
    t.cores = static_cast<int>(cores);
  }
  if (in.has("ops")) {
    STOWAGE_ASSIGN_OR_RETURN(t.ops, in.getStringList("ops"));
  } else if (t.kind == TargetKind::Cpu) {
    t.ops = {"*"};
  }
  if (in.has("engine_dim")) {
    STOWAGE_ASSIGN_OR_RETURN(uint64_t dim, in.getUnsigned("engine_dim"));
    if (dim > 4096) return in.error("engine_dim", "'engine_dim' must be between 0 and 4096, not " + std::to_string(dim));
    t.engineDim = static_cast<int>(dim);
  }
  if (in.has("engine_dtypes")) {
    STOWAGE_ASSIGN_OR_RETURN(t.engineDtypes, in.getStringList("engine_dtypes"));
  }
  if (in.has("macs_per_cycle")) {
    STOWAGE_ASSIGN_OR_RETURN(t.macsPerCycle, in.getNumber("macs_per_cycle"));
  }
  if (in.has("dma_channels")) {
    STOWAGE_ASSIGN_OR_RETURN(uint64_t ch, in.getUnsigned("dma_channels"));
    if (ch < 1 || ch > 64) return in.error("dma_channels", "'dma_channels' must be between 1 and 64, not " + std::to_string(ch));
    t.dmaChannels = static_cast<int>(ch);
  }
  if (in.has("dma_bytes_per_cycle")) {
    STOWAGE_ASSIGN_OR_RETURN(t.dmaBytesPerCycle, in.getNumber("dma_bytes_per_cycle"));
  }
  if (in.has("dma_setup_cycles")) {
    STOWAGE_ASSIGN_OR_RETURN(t.dmaSetupCycles, in.getNumber("dma_setup_cycles"));
  }
  if (in.has("intrinsics")) {
    STOWAGE_ASSIGN_OR_RETURN(t.intrinsics, in.getIntrinsics("intrinsics"));
  }
  STOWAGE_TRY(checkTarget(t, whereOf(in)));
  return t;
}

Result<MemoryPool> readPool(ItemReader& in, const std::string& what) {
  in.label = what;
  MemoryPool p;
  p.origin = in.where("");
  STOWAGE_ASSIGN_OR_RETURN(p.name, requiredString(in, "name", poolKeys()));
  in.label = "pool '" + p.name + "'";
  STOWAGE_TRY(in.checkKnownKeys(poolKeys()));
  if (in.has("size")) {
    STOWAGE_ASSIGN_OR_RETURN(uint64_t size, in.getByteSize("size"));
    p.sizeBytes = static_cast<size_t>(size);
  }
  if (in.has("alignment")) {
    STOWAGE_ASSIGN_OR_RETURN(uint64_t a, in.getByteSize("alignment"));
    p.alignment = static_cast<size_t>(a);
  }
  if (in.has("kind")) {
    STOWAGE_ASSIGN_OR_RETURN(std::string kind, in.getString("kind"));
    auto k = poolKindFromName(kind);
    if (!k) return in.error("kind", "'kind' must be \"workspace\" or \"constant\", not \"" + kind + "\"");
    p.kind = *k;
  }
  if (in.has("placement")) {
    STOWAGE_ASSIGN_OR_RETURN(std::string placement, in.getString("placement"));
    auto k = poolPlacementFromName(placement);
    if (!k)
      return in.error("placement",
                      "'placement' must be \"user\", \"static\" or \"fixed\", not \"" + placement + "\"");
    p.placement = *k;
  }
  if (in.has("access")) {
    STOWAGE_ASSIGN_OR_RETURN(p.access, in.getStringList("access"));
    if (p.access.empty())
      return in.error("access", "'access' is empty: no target could read or write the pool",
                      "list the targets that use it, e.g. access = [\"cpu\"], or leave 'access' out for every cpu target");
  }
  if (in.has("section")) {
    STOWAGE_ASSIGN_OR_RETURN(p.section, in.getString("section"));
    if (p.section.empty()) return in.error("section", "'section' is empty", "leave 'section' out for the default section");
  }
  if (in.has("base")) {
    STOWAGE_ASSIGN_OR_RETURN(uint64_t base, in.getUnsigned("base"));
    p.base = base;
  }
  bool banksGiven = in.has("banks"), bankSizeGiven = in.has("bank_size");
  if (banksGiven) {
    STOWAGE_ASSIGN_OR_RETURN(uint64_t banks, in.getUnsigned("banks"));
    if (banks < 1 || banks > 65536) return in.error("banks", "'banks' must be between 1 and 65536, not " + std::to_string(banks));
    p.banks = static_cast<int>(banks);
  }
  if (bankSizeGiven) {
    STOWAGE_ASSIGN_OR_RETURN(uint64_t bankSize, in.getByteSize("bank_size"));
    if (bankSize == 0) return in.error("bank_size", "'bank_size' must be greater than 0");
    p.bankSizeBytes = static_cast<size_t>(bankSize);
  }
  if (in.has("bank_bases")) {
    STOWAGE_ASSIGN_OR_RETURN(p.bankBases, in.getUnsignedList("bank_bases"));
    if (p.bankBases.empty()) return in.error("bank_bases", "'bank_bases' is empty", "leave it out for contiguous banks");
    if (!banksGiven) p.banks = static_cast<int>(std::min<size_t>(p.bankBases.size(), 65536));
    else if (p.bankBases.size() != static_cast<size_t>(p.banks))
      return in.error("bank_bases", "'bank_bases' lists " + std::to_string(p.bankBases.size()) +
                                        " addresses but 'banks' is " + std::to_string(p.banks));
    if (!p.base) p.base = p.bankBases.front();
  }
  if (in.has("per_core_stride")) {
    STOWAGE_ASSIGN_OR_RETURN(uint64_t stride, in.getByteSize("per_core_stride"));
    if (stride == 0) return in.error("per_core_stride", "'per_core_stride' must be greater than 0", "leave it out for a pool shared by every core");
    p.perCoreStride = static_cast<size_t>(stride);
  }
  for (auto [key, slot] : {std::pair{"memory", &p.memory}, std::pair{"load_from", &p.loadFrom}}) {
    if (!in.has(key)) continue;
    STOWAGE_ASSIGN_OR_RETURN(*slot, in.getString(key));
    if (slot->empty()) return in.error(key, std::string("'") + key + "' is empty", "name one of the board's [[memories]]");
  }
  const std::string readKeys[] = {"read_bytes_per_cycle", "write_bytes_per_cycle", "latency_cycles"};
  double* readTo[] = {&p.readBytesPerCycle, &p.writeBytesPerCycle, &p.latencyCycles};
  for (int i = 0; i < 3; ++i) {
    if (!in.has(readKeys[i])) continue;
    STOWAGE_ASSIGN_OR_RETURN(*readTo[i], in.getNumber(readKeys[i]));
  }

  // Derive the missing one of size / banks / bank_size.
  if (bankSizeGiven && !p.sizeBytes) {
    if (p.bankSizeBytes > std::numeric_limits<size_t>::max() / static_cast<size_t>(p.banks))
      return in.error("bank_size", "'banks' * 'bank_size' does not fit in 64 bits");
    p.sizeBytes = p.bankSizeBytes * static_cast<size_t>(p.banks);
  } else if (!bankSizeGiven && p.banks > 1) {
    if (!p.sizeBytes)
      return in.error("banks", "a pool with 'banks' > 1 needs 'size' or 'bank_size'");
    if (*p.sizeBytes % static_cast<size_t>(p.banks) != 0)
      return in.error("banks", "'size' (" + std::to_string(*p.sizeBytes) + " bytes) is not a multiple of " +
                                   std::to_string(p.banks) + " banks",
                      "give 'bank_size' too, or a size that divides evenly");
    p.bankSizeBytes = *p.sizeBytes / static_cast<size_t>(p.banks);
  } else if (bankSizeGiven && !banksGiven && p.bankBases.empty() && p.sizeBytes && p.bankSizeBytes != 0 &&
             *p.sizeBytes % p.bankSizeBytes == 0 && *p.sizeBytes / p.bankSizeBytes <= 65536) {
    p.banks = static_cast<int>(*p.sizeBytes / p.bankSizeBytes);
  } else if (!bankSizeGiven && p.banks == 1 && p.sizeBytes) {
    p.bankSizeBytes = *p.sizeBytes;
  }
  STOWAGE_TRY(checkPool(p, whereOf(in)));
  return p;
}

Result<PlacementRule> readRule(ItemReader& in, const std::string& what) {
  in.label = what;
  PlacementRule r;
  r.origin = in.where("");
  if (in.has("op")) {
    STOWAGE_ASSIGN_OR_RETURN(r.op, in.getString("op"));
  }
  if (in.has("node")) {
    STOWAGE_ASSIGN_OR_RETURN(r.node, in.getString("node"));
  }
  in.label = ruleLabel(r);
  STOWAGE_TRY(in.checkKnownKeys(ruleKeys()));
  for (TensorRole role : {TensorRole::Input, TensorRole::Output, TensorRole::Weight, TensorRole::Scratch}) {
    std::string key(tensorRoleKey(role));
    if (!in.has(key)) continue;
    STOWAGE_ASSIGN_OR_RETURN(std::vector<std::string> pools, in.getStringList(key));
    roleSlot(r, role) = std::move(pools);
  }
  STOWAGE_TRY(checkRule(r, whereOf(in)));
  return r;
}

Result<PoolPin> readPin(ItemReader& in, const std::string& what) {
  in.label = what;
  PoolPin pin;
  pin.origin = in.where("");
  STOWAGE_ASSIGN_OR_RETURN(pin.tensor, requiredString(in, "tensor", pinKeys()));
  in.label = "pin '" + pin.tensor + "'";
  STOWAGE_TRY(in.checkKnownKeys(pinKeys()));
  STOWAGE_ASSIGN_OR_RETURN(pin.pool, requiredString(in, "pool", pinKeys()));
  return pin;
}

Result<KernelOverride> readKernel(ItemReader& in, const std::string& what, const std::string& baseDir) {
  in.label = what;
  KernelOverride k;
  k.origin = in.where("");
  STOWAGE_ASSIGN_OR_RETURN(k.kernel, requiredString(in, "kernel", kernelKeys()));
  in.label = "kernel '" + k.kernel + "'";
  STOWAGE_TRY(in.checkKnownKeys(kernelKeys()));
  const PortableKernel* portable = findPortableKernel(k.kernel);
  if (!portable) {
    std::vector<std::string> names;
    for (const PortableKernel& p : portableKernels()) names.push_back(p.name);
    const std::string close = closestMatch(k.kernel, names);
    return in.error("kernel", "'kernel' names \"" + k.kernel + "\", which is not a kernel of the Stowage runtime",
                    close.empty() ? "name the portable kernel it replaces, as declared in runtime/include/stowage_kernels*.h "
                                    "(e.g. \"stowage_qconv2d_s8\"); the list is in docs/kernels.md"
                                  : "did you mean '" + close + "'?");
  }
  if (in.has("dtype")) {
    STOWAGE_ASSIGN_OR_RETURN(std::string d, in.getString("dtype"));
    std::string list;
    for (const auto& x : portable->dtypes) list += (list.empty() ? "" : ", ") + x;
    if (std::find(kernelDtypeNames().begin(), kernelDtypeNames().end(), d) == kernelDtypeNames().end()) {
      const std::string close = closestMatch(d, kernelDtypeNames());
      return in.error("dtype", "'dtype' is \"" + d + "\", which is not an element type",
                      close.empty() ? k.kernel + " takes " + list : "did you mean '" + close + "'?");
    }
    if (std::find(portable->dtypes.begin(), portable->dtypes.end(), d) == portable->dtypes.end())
      return in.error("dtype", "'dtype' is \"" + d + "\" but " + k.kernel + " reads " + list,
                      portable->dtypes.size() == 1 ? "remove 'dtype': the kernel's name fixes its type" : "use one of: " + list);
    k.dtype = d;
  }
  if (in.has("target")) {
    STOWAGE_ASSIGN_OR_RETURN(k.targets, in.getStringList("target"));
    if (k.targets.empty()) return in.error("target", "'target' is empty", "name a target, or remove 'target' for the cpu");
  }
  STOWAGE_ASSIGN_OR_RETURN(k.function, requiredString(in, "function", kernelKeys()));
  if (!isIdentifier(k.function))
    return in.error("function", "'function' is \"" + k.function + "\", which is not a C identifier",
                    "letters, digits and '_', not starting with a digit");
  if (k.function.rfind("stowage_", 0) == 0)
    return in.error("function", "'function' is \"" + k.function + "\": names starting with \"stowage_\" belong to the Stowage runtime",
                    "give your kernel a name of your own, e.g. \"board_" + k.function.substr(8) + "\"");
  // The files, relative to the board file's folder; both must exist (they are copied beside the generated C).
  auto file = [&](const std::string& key, const char* ext) -> Result<std::string> {
    STOWAGE_ASSIGN_OR_RETURN(std::string written, requiredString(in, key, kernelKeys()));
    std::filesystem::path p(written);
    if (p.is_relative() && !baseDir.empty()) p = std::filesystem::path(baseDir) / p;
    std::error_code ec;
    p = std::filesystem::absolute(p, ec).lexically_normal();
    if (p.extension() != ext)
      return in.error(key, "'" + key + "' is \"" + written + "\"; it must be a " + ext + " file");
    if (!std::filesystem::is_regular_file(p, ec))
      return in.error(key, "'" + key + "' names \"" + written + "\", which does not exist (looked for " + p.string() + ")",
                      "paths are relative to the board file's folder");
    return p.string();
  };
  STOWAGE_ASSIGN_OR_RETURN(k.header, file("header", ".h"));
  STOWAGE_ASSIGN_OR_RETURN(k.source, file("source", ".c"));
  return k;
}

Result<DeviceMemory> readMemory(ItemReader& in, const std::string& what) {
  in.label = what;
  DeviceMemory m;
  m.origin = in.where("");
  STOWAGE_ASSIGN_OR_RETURN(m.name, requiredString(in, "name", memoryKeys()));
  in.label = "memory '" + m.name + "'";
  STOWAGE_TRY(in.checkKnownKeys(memoryKeys()));
  if (!in.has("base")) return in.error("", "has no 'base'", "add base = 0x... (the address of its first byte)");
  STOWAGE_ASSIGN_OR_RETURN(m.base, in.getUnsigned("base"));
  if (!in.has("size")) return in.error("", "has no 'size'", "add size = \"...\" (e.g. \"128KiB\")");
  STOWAGE_ASSIGN_OR_RETURN(m.sizeBytes, in.getByteSize("size"));
  if (m.sizeBytes == 0) return in.error("size", "'size' is 0");
  if (m.sizeBytes - 1 > std::numeric_limits<uint64_t>::max() - m.base)
    return in.error("size", "'base' + 'size' runs past the end of the 64-bit address space");
  if (in.has("kind")) {
    STOWAGE_ASSIGN_OR_RETURN(std::string kind, in.getString("kind"));
    auto k = memoryKindFromName(kind);
    if (!k)
      return in.error("kind", "'kind' must be \"flash\" (read-only while running: code, constants) or \"ram\", not \"" + kind + "\"");
    m.kind = *k;
  }
  return m;
}

Result<Device> readDevice(ItemReader& in) {
  in.label = "[device]";
  Device d;
  d.origin = in.where("");
  STOWAGE_TRY(in.checkKnownKeys(deviceKeys()));
  if (!in.has("cpu")) {
    std::string list;
    for (const auto& n : knownCpuNames()) list += " " + n;
    return in.error("", "has no 'cpu'", "add cpu = \"...\", one of:" + list);
  }
  STOWAGE_ASSIGN_OR_RETURN(std::string cpu, in.getString("cpu"));
  auto spec = defaultCpuSpec(cpu);
  if (!spec) {
    std::string list;
    for (const auto& n : knownCpuNames()) list += " " + n;
    return in.error("cpu", "unknown CPU '" + cpu + "'" + didYouMean(cpu, knownCpuNames()), "known CPUs:" + list);
  }
  d.cpu = *spec;
  const bool arm = d.cpu.isa == IsaFamily::Arm;
  if (in.has("fpu")) {
    if (!arm) return in.error("fpu", "'fpu' is for Arm CPUs; '" + cpu + "' states its extensions in its name");
    const std::string builtIn = spec->fpu;
    if (in.holdsBool("fpu")) {
      STOWAGE_ASSIGN_OR_RETURN(bool on, in.getBool("fpu"));
      if (on && builtIn.empty()) return in.error("fpu", "'" + cpu + "' has no floating-point unit", "leave 'fpu' out");
      if (!on) d.cpu.fpu.clear();
    } else {
      STOWAGE_ASSIGN_OR_RETURN(std::string fpu, in.getString("fpu"));
      const bool ok = (cpu == "cortex-m4" && fpu == "fpv4-sp-d16") || (cpu == "cortex-m7" && (fpu == "fpv5-d16" || fpu == "fpv5-sp-d16")) ||
                      (cpu == "cortex-m33" && fpu == "fpv5-sp-d16");
      if (!ok)
        return in.error("fpu", "'" + cpu + "' has no FPU called '" + fpu + "'",
                        builtIn.empty() ? "this CPU has no FPU: leave 'fpu' out"
                                        : "fpu = true (the default, " + builtIn + ") or false (software floating point)");
      d.cpu.fpu = fpu;
    }
  }
  if (in.has("dsp")) {
    STOWAGE_ASSIGN_OR_RETURN(bool dsp, in.getBool("dsp"));
    if (dsp && !spec->dsp) return in.error("dsp", "'" + cpu + "' has no DSP extension");
    if (!dsp && spec->dsp && cpu != "cortex-m33")
      return in.error("dsp", "the DSP extension cannot be left out of '" + cpu + "'", "only the Cortex-M33 has it as an option");
    d.cpu.dsp = dsp;
  }
  if (in.has("mve")) {
    STOWAGE_ASSIGN_OR_RETURN(std::string mve, in.getString("mve"));
    if (mve != "none" && mve != "int" && mve != "float")
      return in.error("mve", "'mve' must be \"none\", \"int\" or \"float\", not \"" + mve + "\"");
    if (spec->mve.empty() && mve != "none") return in.error("mve", "'" + cpu + "' has no Helium (MVE)");
    if (mve == "float" && d.cpu.fpu.empty())
      return in.error("mve", "mve = \"float\" needs the FPU (fpu = false was given)", "say mve = \"int\" or \"none\"");
    d.cpu.mve = mve == "none" ? "" : mve;
  } else if (d.cpu.fpu.empty() && d.cpu.mve == "float") {
    d.cpu.mve = "int";  // without an FPU, Helium has integer vectors only
  }
  for (auto [key, slot] : {std::pair{"flash", &d.flashMemory}, std::pair{"ram", &d.ramMemory}, std::pair{"qemu", &d.qemuMachine}}) {
    if (!in.has(key)) continue;
    STOWAGE_ASSIGN_OR_RETURN(*slot, in.getString(key));
    if (slot->empty()) return in.error(key, std::string("'") + key + "' is empty");
  }
  if (in.has("stack")) {
    STOWAGE_ASSIGN_OR_RETURN(d.stackBytes, in.getByteSize("stack"));
    if (d.stackBytes < 256 || d.stackBytes % 8 != 0)
      return in.error("stack", "'stack' must be at least 256 bytes and a multiple of 8, not " + std::to_string(d.stackBytes));
  }
  if (in.has("openocd")) {
    STOWAGE_ASSIGN_OR_RETURN(d.openocdConfigs, in.getStringList("openocd"));
    for (const auto& c : d.openocdConfigs)
      if (c.empty()) return in.error("openocd", "'openocd' lists an empty file name");
  }
  return d;
}

}  // namespace stowage
