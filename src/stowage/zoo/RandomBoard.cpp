// Random board files (see RandomBoard.h).
#include "stowage/zoo/RandomBoard.h"

#include <fmt/format.h>

#include <algorithm>

#include "stowage/zoo/OnnxGraphBuilder.h"

namespace stowage::zoo {
namespace random_board_detail {

class BoardWriter {
 public:
  explicit BoardWriter(uint64_t seed) : rng(seed * 0xD1B54A32D192ED03ull + 0xB0A2D) {}

  SplitMix64 rng;
  std::string text;
  std::vector<std::string> workspacePools;  // names, in order
  uint64_t nextFixedBase = 0x10000000;

  int64_t pick(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng.next() % static_cast<uint64_t>(hi - lo + 1)); }
  bool chance(int percent) { return static_cast<int>(rng.next() % 100) < percent; }
  template <typename T>
  const T& oneOf(const std::vector<T>& v) { return v[rng.next() % v.size()]; }

  static size_t roundUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

  /// A fresh fixed address range of `bytes` (pools never overlap: each gets its own 16 MiB-aligned window).
  uint64_t fixedBase(size_t bytes) {
    const uint64_t base = nextFixedBase;
    nextFixedBase += (roundUp(bytes, 1u << 24) + (1u << 24));
    return base;
  }

  void costModel(bool fast) {
    if (!chance(70)) return;
    const int64_t bw = fast ? pick(8, 64) : pick(1, 8);
    text += fmt::format("read_bytes_per_cycle = {}\nwrite_bytes_per_cycle = {}\nlatency_cycles = {}\n", bw, bw,
                        fast ? pick(0, 2) : pick(5, 100));
  }

  /// A workspace pool of `size` bytes (0: unlimited, user or static) with a random placement.
  void workspacePool(const std::string& name, size_t size, size_t alignment, bool fast, const std::string& access,
                     bool allowFixed = true, bool allowBanks = true) {
    text += fmt::format("\n[[pools]]\nname = \"{}\"\nalignment = {}\n", name, alignment);
    workspacePools.push_back(name);
    if (!access.empty()) text += "access = " + access + "\n";
    costModel(fast);
    if (size == 0) {
      text += chance(50) ? "placement = \"static\"\n" : "placement = \"user\"\n";
      return;
    }
    const int64_t banks = allowBanks && chance(35) ? pick(2, 4) : 1;
    size_t bankSize = roundUp(std::max<size_t>(size / static_cast<size_t>(banks), alignment), alignment);
    size = bankSize * static_cast<size_t>(banks);
    const int64_t placement = allowFixed ? pick(0, 2) : pick(0, 1);
    if (placement == 2) {
      text += "placement = \"fixed\"\n";
      if (banks > 1 && chance(50)) {  // banks at non-contiguous addresses, in a random order of gaps
        std::string bases;
        for (int64_t b = 0; b < banks; ++b) {
          const uint64_t base = fixedBase(bankSize) + static_cast<uint64_t>(pick(0, 3)) * alignment * 64;
          bases += fmt::format("{}0x{:X}", b ? ", " : "", base);
        }
        text += fmt::format("bank_size = {}\nbank_bases = [{}]\n", bankSize, bases);
        return;
      }
      text += fmt::format("base = 0x{:X}\n", fixedBase(size));
    } else {
      text += placement == 1 ? "placement = \"static\"\n" : "placement = \"user\"\n";
    }
    text += fmt::format("size = {}\n", size);
    if (banks > 1) text += fmt::format("banks = {}\n", banks);
  }

  /// Zero to two constant pools (at least one when `required`); returns their names.
  std::vector<std::string> constantPools(const std::string& access, bool required = false) {
    std::vector<std::string> names;
    const int64_t mode = pick(required ? 1 : 0, 4);
    if (mode == 0) return names;  // the default static `weights` pool
    auto header = [&](const std::string& name) {
      text += fmt::format("\n[[pools]]\nname = \"{}\"\nkind = \"constant\"\nalignment = {}\n", name, oneOf<int>({4, 8, 16, 64}));
      if (!access.empty()) text += "access = " + access + "\n";
      names.push_back(name);
    };
    if (mode == 1 || mode == 4) {
      header("flash");
      text += "placement = \"static\"\n";
      costModel(false);
    }
    if (mode == 2) {
      header("wram");
      text += "placement = \"user\"\n";
    }
    if (mode == 3) {
      header("wfixed");
      const size_t size = 1u << 22;
      text += fmt::format("placement = \"fixed\"\nsize = {}\nbase = 0x{:X}\n", size, fixedBase(size));
    }
    if (mode == 4) {  // a small fast constant pool before the flash: constants spill from it
      text += "\n[[pools]]\nname = \"itcm\"\nkind = \"constant\"\nplacement = \"static\"\n";
      text += fmt::format("size = {}\n", pick(1, 64) * 256);
      if (!access.empty()) text += "access = " + access + "\n";
      costModel(true);
      names.push_back("itcm");
    }
    return names;
  }

  /// A rule on one of the model's ops (a random pool or the unlimited `fallback` one), one sending an op's weights
  /// to the last constant pool, a pin of one tensor; each by chance.
  void rulesAndPins(const RandomBoardHints& hints, const std::vector<std::string>& constants, const std::string& fallback) {
    if (!hints.ops.empty() && chance(35)) {
      const std::string& op = oneOf(hints.ops);
      const std::string& pool = oneOf(workspacePools);
      const std::string role = oneOf<std::string>({"outputs", "inputs"});
      text += fmt::format("\n[[rules]]\nop = \"{}\"\n{} = [\"{}\", \"{}\"]\n", op, role, pool, fallback);
    }
    if (!hints.ops.empty() && constants.size() > 1 && chance(40))
      text += fmt::format("\n[[rules]]\nop = \"{}\"\nweights = [\"{}\"]\n", oneOf(hints.ops), constants.back());
    if (!hints.tensorNames.empty() && chance(30))
      text += fmt::format("\n[[pins]]\ntensor = \"{}\"\npool = \"{}\"\n", oneOf(hints.tensorNames), oneOf(workspacePools));
  }
};

RandomBoard cpuBoard(BoardWriter& w, const RandomBoardHints& hints) {
  RandomBoard b{"cpu", ""};
  const size_t ws = std::max<size_t>(hints.workspaceBytes, 256);
  w.text = fmt::format("name = \"random-cpu\"\n");
  const int fastPools = static_cast<int>(w.pick(0, 3));
  for (int i = 0; i < fastPools; ++i) {
    const size_t size = std::max<size_t>(64, ws * static_cast<size_t>(w.pick(3, 80)) / 100);
    w.workspacePool(fmt::format("fast{}", i), size, static_cast<size_t>(w.oneOf<int>({4, 8, 16, 32, 64})), true, "");
  }
  // The last workspace pool takes whatever the fast ones cannot: unlimited, or large enough for everything.
  if (w.chance(70))
    w.workspacePool("ram", 0, static_cast<size_t>(w.oneOf<int>({4, 16, 64})), false, "");
  else
    w.workspacePool("ram", ws * 2 + 4096, static_cast<size_t>(w.oneOf<int>({4, 16, 64})), false, "", true, false);
  const std::vector<std::string> constants = w.constantPools("");
  w.rulesAndPins(hints, constants, "ram");
  b.toml = w.text;
  return b;
}

RandomBoard acceleratorBoard(BoardWriter& w, const RandomBoardHints& hints, bool engine) {
  RandomBoard b{engine ? "engine" : "cores", ""};
  const size_t ws = std::max<size_t>(hints.workspaceBytes, 256);
  w.text = fmt::format("name = \"random-{}\"\n\n[[targets]]\nname = \"host\"\nkind = \"cpu\"\n", b.kind);
  const std::vector<std::string> engineOps = {"Conv", "Gemm", "MatMul", "QConv2d", "QDepthwiseConv2d", "QFullyConnected"};
  const std::vector<std::string> coreOps = {"Conv", "Gemm", "MatMul", "QConv2d", "QDepthwiseConv2d", "QFullyConnected",
                                            "Add", "QAdd", "MaxPool", "AveragePool"};
  w.text += "\n[[targets]]\nname = \"npu\"\nkind = \"accelerator\"\n";
  int64_t cores = 1;
  if (engine) {
    w.text += fmt::format("engine_dim = {}\n", w.oneOf<int>({2, 4, 8, 16}));
    w.text += fmt::format("engine_dtypes = {}\n", w.oneOf<std::string>({"[\"int8\"]", "[\"float32\"]", "[\"int8\", \"float32\"]"}));
    w.text += "ops = [\"Conv\", \"Gemm\", \"MatMul\", \"QConv2d\", \"QDepthwiseConv2d\", \"QFullyConnected\"]\n";
  } else {
    cores = w.pick(1, 8);
    w.text += fmt::format("cores = {}\nmacs_per_cycle = {}\n", cores, w.oneOf<double>({0.5, 1, 1.5, 4, 16}));
    if (w.chance(40)) {
      w.text += "ops = [\"*\"]\n";
    } else {
      std::string ops;
      for (const std::string& op : coreOps)
        if (w.chance(60)) ops += (ops.empty() ? "\"" : ", \"") + op + "\"";
      w.text += "ops = [" + (ops.empty() ? std::string("\"Conv\"") : ops) + "]\n";
    }
  }
  w.text += fmt::format("dma_channels = {}\ndma_bytes_per_cycle = {}\ndma_setup_cycles = {}\n", w.pick(1, 2),
                        w.oneOf<int>({2, 4, 8, 16, 32}), w.pick(0, 200));
  // Main memory both reach, optionally a small shared fast pool, then the accelerator's local pools.
  w.workspacePool("dram", 0, static_cast<size_t>(w.oneOf<int>({8, 16, 64})), false, "[\"host\", \"npu\"]");
  if (w.chance(30))
    w.workspacePool("shared", std::max<size_t>(256, ws * static_cast<size_t>(w.pick(5, 60)) / 100), 16, true,
                    "[\"host\", \"npu\"]", false, false);
  std::vector<std::string> local;
  const size_t localSize = static_cast<size_t>(w.oneOf<int>({2048, 4096, 8192, 16384, 32768, 65536, 262144}));
  if (engine) {
    const int64_t banks = w.pick(1, 4), accBanks = w.pick(1, 2);
    const size_t spadBank = localSize / static_cast<size_t>(banks) / 16 * 16;
    w.text += fmt::format("\n[[pools]]\nname = \"spad\"\nplacement = \"fixed\"\nalignment = 16\naccess = [\"npu\"]\n"
                          "size = {}\nbanks = {}\nbase = 0x{:X}\n", spadBank * static_cast<size_t>(banks), banks,
                          w.fixedBase(localSize));
    const size_t accSize = static_cast<size_t>(w.oneOf<int>({1024, 4096, 16384, 65536})) * static_cast<size_t>(accBanks);
    w.text += fmt::format("\n[[pools]]\nname = \"acc\"\nplacement = \"fixed\"\nalignment = 64\naccess = [\"npu\"]\n"
                          "size = {}\nbanks = {}\nbase = 0x{:X}\n", accSize, accBanks, w.fixedBase(accSize));
    local = {"spad", "acc"};
  } else {
    const size_t alignment = static_cast<size_t>(w.oneOf<int>({4, 8, 16}));
    w.text += fmt::format("\n[[pools]]\nname = \"l1\"\nplacement = \"fixed\"\nalignment = {}\naccess = [\"npu\"]\nsize = {}\n",
                          alignment, localSize);
    if (cores > 1 && w.chance(50)) {
      const size_t stride = BoardWriter::roundUp(localSize, 1u << 20);
      w.text += fmt::format("per_core_stride = {}\nbase = 0x{:X}\n", stride, w.fixedBase(stride * static_cast<size_t>(cores)));
    } else {
      w.text += fmt::format("base = 0x{:X}\n", w.fixedBase(localSize));
    }
    local = {"l1"};
  }
  // Declared, so that the accelerator reaches the constants of the layers it runs (the default `weights` pool is the
  // CPU's only: every such board would be rejected, clearly, by the planner).
  const std::vector<std::string> constants = w.constantPools("[\"host\", \"npu\"]", true);
  std::string scratch;
  for (const std::string& p : local) scratch += (scratch.empty() ? "\"" : ", \"") + p + "\"";
  for (const std::string& op : engine ? engineOps : coreOps)
    if (std::find(hints.ops.begin(), hints.ops.end(), op) != hints.ops.end())
      w.text += fmt::format("\n[[rules]]\nop = \"{}\"\nscratch = [{}]\n", op, scratch);
  // Rules and pins over the pools the host reaches (not the local ones).
  w.workspacePools.erase(std::remove_if(w.workspacePools.begin(), w.workspacePools.end(),
                                        [&](const std::string& p) { return std::find(local.begin(), local.end(), p) != local.end(); }),
                         w.workspacePools.end());
  w.rulesAndPins(hints, constants, "dram");
  b.toml = w.text;
  return b;
}

}  // namespace random_board_detail

RandomBoard randomBoard(uint64_t seed, const RandomBoardHints& hints) {
  random_board_detail::BoardWriter w(seed);
  const int64_t kind = w.pick(0, 9);
  if (kind < 6) return random_board_detail::cpuBoard(w, hints);
  return random_board_detail::acceleratorBoard(w, hints, kind < 8);
}

}  // namespace stowage::zoo
