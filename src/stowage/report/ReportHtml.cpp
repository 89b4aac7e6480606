// HTML report (see ReportHtml.h).
#include "stowage/report/ReportHtml.h"

#include "stowage/report/OffloadSummary.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "stowage/ir/Op.h"
#include "stowage/plan/analysis/NodeTargets.h"

namespace stowage {

namespace {

std::string esc(std::string_view s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string bytesText(size_t n) {
  if (n == std::numeric_limits<size_t>::max()) return "unlimited";
  if (n >= 1024 * 1024) return fmt::format("{:.2f} MiB", static_cast<double>(n) / (1024.0 * 1024.0));
  if (n >= 1024) return fmt::format("{:.1f} KiB", static_cast<double>(n) / 1024.0);
  return fmt::format("{} B", n);
}

/// A stable colour per tensor: hue from a hash of the name.
std::string colourOf(const std::string& name, BufferRole role) {
  uint32_t h = 2166136261u;
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  if (role == BufferRole::Constant) return fmt::format("hsl({},15%,62%)", h % 360);
  return fmt::format("hsl({},62%,58%)", h % 360);
}

constexpr const char* kStyle = R"(body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;font-size:12px}th,td{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f0f0f0}td.l{text-align:left}tr.hl td{background:#fff3b0}
svg{background:#fafafa;border:1px solid #ddd}rect.buf{stroke:#333;stroke-width:.5}rect.buf:hover{stroke-width:2}
line.peak{stroke:#d00;stroke-width:1.5;stroke-dasharray:4 3}line.cap{stroke:#555;stroke-dasharray:2 2}
text{font-size:11px;fill:#333}.remark{font-family:monospace;font-size:12px}
rect.est{fill:#4a7bd0}rect.unit{fill:#9bb5e0}rect.bnd{fill:#c9c9c9}rect.best{fill:#e0a040}
)";

constexpr const char* kScript = R"(document.querySelectorAll('rect.buf').forEach(function (r) {
  r.addEventListener('mouseenter', function () {
    var a = +r.getAttribute('data-first'), b = +r.getAttribute('data-last');
    document.querySelectorAll('tr.layer').forEach(function (row) {
      var s = +row.getAttribute('data-step');
      row.classList.toggle('hl', s >= a && s <= b);
    });
  });
});
document.getElementById('count').textContent = document.querySelectorAll('rect.buf').length;
)";

/// The whole model's estimate against its bounds (docs/accelerators.md, "Whole-model bound"): a sentence, then one
/// bar per figure on one scale (the estimate, every unit's least busy cycles, the bound with the floor, the
/// dependency bound, each target's transfer bound; the best bound marked).
std::string wholeModelHtml(const WholeModelCycles& w) {
  const uint64_t best = w.bestBound();
  const char* term = bestBoundTerm(w);
  std::string h = "<h2>Whole model: cycles against the bounds</h2>\n";
  h += fmt::format("<p class=\"whole\">Estimated {} cycles per run ({} of them CPU layers; the host simulator counts the same). "
                   "Bound {} cycles, set by {} (ratio {:.3f}); best bound {} cycles, the {} (ratio {:.3f}): the most a lower "
                   "bound under the board's cost model says (docs/accelerators.md, \"Whole-model bound\").</p>\n",
                   w.estimate, w.cpuCycles, w.bound, esc(w.boundUnit), w.ratio(), best, term, w.ratioToBestBound());
  struct Bar {
    std::string label, cls;
    uint64_t cycles;
  };
  std::vector<Bar> bars = {{"estimate", "est", w.estimate}};
  for (const UnitBound& u : w.units) bars.push_back({u.unit + " busy at least", "unit", u.cycles});
  bars.push_back({"bound with the fill and drain floor", "bnd", w.boundWithFloor});
  bars.push_back({"dependency bound", "bnd", w.dependencyBound});
  for (const TransferBound& t : w.transferBounds) bars.push_back({fmt::format("transfer bound of '{}'", t.targetName), "bnd", t.cycles});
  for (Bar& b : bars)
    if (b.cls == "bnd" && b.cycles == best) {
      b.cls = "best";
      b.label += " (best bound)";
      break;
    }
  uint64_t most = 1;
  for (const Bar& b : bars) most = std::max(most, b.cycles);
  const double left = 300, width = 560, row = 18;
  const double height = row * static_cast<double>(bars.size()) + 4;
  h += fmt::format("<svg class=\"whole\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" xmlns=\"http://www.w3.org/2000/svg\">\n",
                   left + width + 90, height, left + width + 90, height);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = 2 + row * static_cast<double>(i);
    const double len = std::max(1.0, width * static_cast<double>(b.cycles) / static_cast<double>(most));
    h += fmt::format("<text x=\"4\" y=\"{:.1f}\">{}</text><rect class=\"{}\" x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\">"
                     "<title>{}: {} cycles</title></rect><text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
                     y + 12, esc(b.label), b.cls, left, y, len, row - 4, esc(b.label), b.cycles, left + len + 4, y + 12, b.cycles);
  }
  h += "</svg>\n";
  return h;
}

}  // namespace

std::string buildReportHtml(const Graph& g, const ProgramPlan& plan, const ReportContext& context) {
  const Board& board = plan.board;
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  h += fmt::format("<title>Stowage memory report: {}</title>\n<style>{}</style></head><body>\n", esc(g.name), kStyle);
  h += fmt::format("<h1>Memory report: {} on board {}</h1>\n<p>Model file {}; {} layers; planner {} in {:.1f} ms; "
                   "<span id=\"count\">{}</span> buffers.</p>\n",
                   esc(g.name), esc(board.name), esc(context.modelPath), g.nodes.size(), esc(plan.algorithm), plan.seconds * 1000.0,
                   plan.buffers.size());

  // Pool summary.
  h += "<h2>Pools</h2>\n<table><tr><th>pool</th><th>kind</th><th>placement</th><th>capacity</th><th>used</th><th>lower bound</th>"
       "<th>utilisation</th><th>peak step</th></tr>\n";
  for (const PoolUse& u : plan.pools) {
    const MemoryPool& p = board.pools[static_cast<size_t>(u.pool)];
    const bool unlimited = u.capacityBytes == std::numeric_limits<size_t>::max();
    const std::string util =
        unlimited || u.capacityBytes == 0 ? "-" : fmt::format("{:.1f}%", 100.0 * static_cast<double>(u.usedBytes) / static_cast<double>(u.capacityBytes));
    h += fmt::format("<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                     esc(p.name), poolKindName(p.kind), poolPlacementName(p.placement), bytesText(u.capacityBytes), bytesText(u.usedBytes),
                     bytesText(u.lowerBoundBytes), util, u.peakStep < 0 ? std::string("-") : std::to_string(u.peakStep));
  }
  h += "</table>\n";
  if (!plan.offloaded.empty()) h += wholeModelHtml(wholeModelCycles(g, plan));

  // One memory map per pool.
  const int steps = std::max(1, plan.steps);
  for (const PoolUse& u : plan.pools) {
    const MemoryPool& p = board.pools[static_cast<size_t>(u.pool)];
    h += fmt::format("<h2>Pool {}: memory map</h2>\n", esc(p.name));
    if (u.buffers == 0) {
      h += "<p>No buffers.</p>\n";
      continue;
    }
    const double width = 900, height = 320, left = 70, top = 10, bottom = 30;
    const size_t span = std::max<size_t>(1, u.usedBytes);
    const double sx = width / steps, sy = height / static_cast<double>(span);
    h += fmt::format("<svg class=\"map\" data-pool=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" xmlns=\"http://www.w3.org/2000/svg\">\n",
                     esc(p.name), left + width + 10, top + height + bottom, left + width + 10, top + height + bottom);
    h += fmt::format("<text x=\"4\" y=\"{}\">0</text><text x=\"4\" y=\"{}\">{}</text>\n", top + height, top + 10, esc(bytesText(span)));
    h += fmt::format("<text x=\"{}\" y=\"{}\">step 0</text><text x=\"{}\" y=\"{}\">step {}</text>\n", left, top + height + 20,
                     left + width - 50, top + height + 20, steps);
    for (const PlacedBuffer& b : plan.buffers) {
      if (b.slot.pool != u.pool) continue;  // a declared alias is drawn over its root's rectangle
      const std::string& name = b.tensor == kNoTensor ? b.name : g.tensor(b.tensor).name;
      const double x = left + b.firstStep * sx, w = std::max(1.0, (b.endStep - b.firstStep) * sx);
      const double hh = std::max(1.0, static_cast<double>(bufferExtentBytes(b)) * sy);  // a strided alias: first run to last
      const double y = top + height - static_cast<double>(b.offset) * sy - hh;
      h += fmt::format("<rect class=\"buf\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\" data-first=\"{}\" "
                       "data-last=\"{}\"><title>{} ({}): {} bytes at offset {}{}, steps {}..{}</title></rect>\n",
                       x, y, w, hh, colourOf(name, b.role), b.firstStep, b.endStep - 1, esc(name), bufferRoleName(b.role), b.sizeBytes,
                       b.offset, p.banks > 1 ? fmt::format(" (bank {})", b.slot.bank) : "", b.firstStep, b.endStep - 1);
    }
    if (u.peakStep >= 0) {
      const double x = left + (u.peakStep + 0.5) * sx;
      h += fmt::format("<line class=\"peak\" x1=\"{:.2f}\" y1=\"{}\" x2=\"{:.2f}\" y2=\"{}\"><title>peak: step {}, {} bytes live</title></line>\n",
                       x, top, x, top + height, u.peakStep, u.peakLiveBytes);
    }
    h += "</svg>\n";
  }

  // Per-layer table.
  NodeTargets targets = assignNodeTargets(g, board);
  if (plan.nodeTargets.size() == g.nodes.size()) targets.targetOf = plan.nodeTargets;
  h += "<h2>Layers</h2>\n<table><tr><th>step</th><th>name</th><th>op</th><th>target</th><th>MACs</th><th>tiling</th>";
  for (const PoolUse& u : plan.pools) h += fmt::format("<th>live in {}</th>", esc(board.pools[static_cast<size_t>(u.pool)].name));
  h += "</tr>\n";
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const Node& n = g.nodes[step];
    h += fmt::format("<tr class=\"layer\" data-step=\"{}\"><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td>",
                     step, step, esc(n.name), opName(n.op),
                     esc(board.targets.empty() ? "cpu" : board.targets[static_cast<size_t>(targets.targetOf[step])].name), macCount(g, n));
    h += "<td class=\"l\">" + esc(offloadText(g, plan, plan.offloadedAt(static_cast<int>(step)))) + "</td>";
    for (const PoolUse& u : plan.pools) h += fmt::format("<td>{}</td>", liveBytesAt(plan, u.pool, static_cast<int>(step)));
    h += "</tr>\n";
  }
  h += "</table>\n";
  if (!plan.remarks.empty()) {
    h += "<h2>Remarks</h2>\n<ul>\n";
    for (const std::string& r : plan.remarks) h += "<li class=\"remark\">" + esc(r) + "</li>\n";
    h += "</ul>\n";
  }
  h += fmt::format("<script>\n{}</script>\n</body></html>\n", kScript);
  return h;
}

}  // namespace stowage
