// Planner benchmark on the bundled zoo models: for each model and board (the default one-pool board and the
// Cortex-M7 example board), each offset algorithm's bytes used per pool against the pool's bound for the
// buffers placed there (the live bytes at its busiest step). Prints a markdown table for bench/RESULTS.md.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "stowage/driver/Compiler.h"
#include "stowage/plan/algo/OffsetAlgorithm.h"
#include "stowage/zoo/ZooGraph.h"
#include "stowage/zoo/ZooModels.h"

using namespace stowage;

int main() {
  const std::vector<std::string> algorithms = {"greedy-size", "greedy-conflicts", "hill-climb", "exact", "auto"};
  const std::vector<std::pair<std::string, std::string>> boards = {
      {"default", ""}, {"cortex-m7", std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/cortex-m7.toml"}};
  std::printf("| model | board | pool | bound | ");
  for (const auto& a : algorithms) std::printf("%s | ", a.c_str());
  std::printf("\n|---|---|---|---:|");
  for (size_t i = 0; i < algorithms.size(); ++i) std::printf("---:|");
  std::printf("\n");
  int worse = 0;
  for (const zoo::ZooModelInfo& info : zoo::zooModels()) {
    auto graph = zoo::zooGraph(info.name, 1);
    if (!graph.ok()) {
      std::fprintf(stderr, "%s\n", graph.error().render().c_str());
      return 2;
    }
    for (const auto& [boardName, boardPath] : boards) {
      // pool -> (bound, used per algorithm)
      std::map<std::string, std::pair<size_t, std::vector<std::string>>> rows;
      std::vector<std::string> poolOrder;
      for (const std::string& algorithm : algorithms) {
        CompileOptions o;
        o.board.boardPath = boardPath;
        o.planner.algorithm = algorithm;
        o.planner.timeLimitSeconds = 5;
        auto r = compileGraph(*graph, o);
        if (!r.ok()) {
          std::fprintf(stderr, "%s on %s with %s: %s\n", info.name.c_str(), boardName.c_str(), algorithm.c_str(),
                       r.error().render().c_str());
          return 2;
        }
        for (const PoolUse& u : r->plan.pools) {
          const MemoryPool& pool = r->plan.board.pools[static_cast<size_t>(u.pool)];
          if (pool.kind != PoolKind::Workspace || u.buffers == 0) continue;
          auto& row = rows[pool.name];
          if (row.second.empty()) poolOrder.push_back(pool.name);
          row.first = std::max(row.first, u.peakLiveBytes);
          row.second.push_back(fmt::format("{}{}", u.usedBytes, u.usedBytes > u.peakLiveBytes ? "*" : ""));
          if (u.usedBytes > u.peakLiveBytes) ++worse;
        }
      }
      for (const std::string& pool : poolOrder) {
        const auto& row = rows[pool];
        std::printf("| %s | %s | %s | %zu | ", info.name.c_str(), boardName.c_str(), pool.c_str(), row.first);
        for (const std::string& cell : row.second) std::printf("%s | ", cell.c_str());
        std::printf("\n");
      }
    }
  }
  std::printf("\nbound = the live bytes of the buffers placed in that pool at its busiest step (no offset plan can use "
              "less); * = above it. %d cells above their bound.\n",
              worse);
  return 0;
}
