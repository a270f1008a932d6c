#include "profiler/profile_text.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "profiler/kernel_groups.h"
#include "profiler/kernel_names.h"
#include "profiler/roofline.h"

namespace kagent::profiler {

namespace {

using nlohmann::json;

double num(const json& j, const char* key, double fallback = 0) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

std::string cut(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n) + "..."; }

// "64x32" (trailing 1s dropped), "256".
std::string dims(const json& d) {
  if (!d.is_array() || d.empty()) return "-";
  std::vector<long long> v;
  for (const auto& x : d) v.push_back(x.get<long long>());
  while (v.size() > 1 && v.back() == 1) v.pop_back();
  return fmt::format("{}", fmt::join(v, "x"));
}

std::string bytes_short(double b) {
  if (b >= 1e9) return fmt::format("{:.2f}GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.1f}MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f}KB", b / 1e3);
  return fmt::format("{:.0f}B", b);
}

std::string ms(double v) {
  if (v >= 1) return fmt::format("{:.2f}ms", v);
  return fmt::format("{:.1f}us", v * 1000);
}

std::string pct(double fraction_or_pct, bool is_fraction) {
  return fmt::format("{:.0f}%", is_fraction ? 100 * fraction_or_pct : fraction_or_pct);
}

std::string count(long long n, const char* one, const char* many = nullptr) {
  return fmt::format("{} {}", n, n == 1 ? std::string(one) : many ? std::string(many) : std::string(one) + "s");
}

std::string kernel_name(const json& k, size_t max_chars) { return short_kernel_name(str(k, "name"), max_chars); }

std::string table(const json& kernels, const ProfileTextOptions& o, bool counters) {
  std::string s = fmt::format("  {:>6} {:>8} {:>5} {:>11} {:>7} {:>4} {:>6} {:>4} {:>5} {}{:<6} kernel\n", "share",
                              "time", "calls", "grid", "block", "regs", "smem", "occ", "waves",
                              counters ? "bound    " : "", "src");
  const size_t rows = std::min(kernels.size(), o.max_rows);
  for (size_t i = 0; i < rows; ++i) {
    const json& k = kernels[i];
    const double smem = num(k, "static_smem") + num(k, "dynamic_smem");
    const json occ = k.value("occupancy", json::object());
    const std::string occ_s = occ.contains("theoretical") ? pct(num(occ, "theoretical"), true) : "-";
    const std::string waves = k.contains("waves") ? fmt::format("{:.2f}", num(k, "waves")) : "-";
    std::string bound;
    if (counters) bound = fmt::format("{:<9}", k.contains("bound") ? str(k["bound"], "class") : "-");
    s += fmt::format("  {:>5.1f}% {:>8} {:>5} {:>11} {:>7} {:>4} {:>6} {:>4} {:>5} {}{:<6} {}\n",
                     num(k, "share_pct"), ms(num(k, "total_ms")), k.value("calls", 0), dims(k["grid"]),
                     dims(k["block"]), k.value("registers", 0), smem > 0 ? bytes_short(smem) : "0", occ_s, waves,
                     bound, cut(str(k, "source"), 6), kernel_name(k, o.max_name_chars));
  }
  if (kernels.size() > rows) {
    double share = 0, total = 0;
    for (size_t i = rows; i < kernels.size(); ++i) {
      share += num(kernels[i], "share_pct");
      total += num(kernels[i], "total_ms");
    }
    s += fmt::format("  (table cut to {} rows: {} more kernels, {:.1f}% of GPU time, {})\n", rows, kernels.size() - rows,
                     share, ms(total));
  }
  return s;
}

// A model's hundreds of kernels: the time by source, every kernel counted (the own vs library
// split), then the top kernel names (template instantiations summed) by time.
std::string grouped_table(const json& kernels, const ProfileTextOptions& o) {
  const json sources = group_kernels_by_source(kernels);
  std::vector<std::string> parts;
  for (const auto& g : sources)
    parts.push_back(fmt::format("{} {:.1f}% ({}, {})", str(g, "source").empty() ? "?" : str(g, "source"),
                                num(g, "share_pct"), count(g.value("kernels", 0), "kernel"),
                                count(g.value("calls", 0), "launch", "launches")));
  std::string s = fmt::format("by source: {}\n", fmt::join(parts, ", "));
  const json names = group_kernels_by_name(kernels);
  s += fmt::format("by name ({} kernels under {} names, template instantiations summed):\n", kernels.size(),
                   names.size());
  s += fmt::format("  {:>6} {:>8} {:>6} {:>7} {:<6} kernel\n", "share", "time", "calls", "kernels", "src");
  const size_t rows = std::min(names.size(), o.max_rows);
  for (size_t i = 0; i < rows; ++i) {
    const json& g = names[i];
    s += fmt::format("  {:>5.1f}% {:>8} {:>6} {:>7} {:<6} {}\n", num(g, "share_pct"), ms(num(g, "total_ms")),
                     g.value("calls", 0), g.value("kernels", 0), cut(str(g, "source"), 6),
                     short_kernel_name(str(g, "name"), o.max_name_chars));
  }
  if (names.size() > rows) {
    double share = 0, total = 0;
    size_t more = 0;
    for (size_t i = rows; i < names.size(); ++i) {
      share += num(names[i], "share_pct");
      total += num(names[i], "total_ms");
      more += names[i].value("kernels", size_t{0});
    }
    s += fmt::format("  (cut to {} names: {} more names, {} kernels, {:.1f}% of GPU time, {})\n", rows,
                     names.size() - rows, more, share, ms(total));
  }
  return s;
}

// The busiest own kernel (or busiest kernel) for the occupancy line.
const json* top_kernel(const json& kernels) {
  for (const auto& k : kernels)
    if (k.value("own", false)) return &k;
  return kernels.empty() ? nullptr : &kernels[0];
}

std::string occupancy_line(const json& kernels, size_t max_name) {
  const json* k = top_kernel(kernels);
  if (!k || !k->contains("occupancy") || !(*k)["occupancy"].contains("theoretical")) return {};
  const json& occ = (*k)["occupancy"];
  std::string s = fmt::format("occupancy {}: {} theoretical ({} blocks/SM, limited by {})", kernel_name(*k, max_name),
                              pct(num(occ, "theoretical"), true), occ.value("active_blocks_per_sm", 0),
                              str(occ, "limiter").empty() ? "nothing" : str(occ, "limiter"));
  if (k->contains("counters") && (*k)["counters"].contains("warps_active_pct"))
    s += fmt::format(", {:.0f}% achieved", num((*k)["counters"], "warps_active_pct"));
  if (k->contains("waves")) {
    const double w = num(*k, "waves");
    s += fmt::format(", {:.2f} waves{}", w, w < 1 ? " (SMs left idle)" : "");
  }
  return s + "\n";
}

std::string spills_line(const json& kernels, const json& resources, size_t max_name) {
  std::vector<std::string> parts;
  if (resources.is_array()) {
    for (const auto& r : resources) {
      const double st = num(r, "spill_store_bytes"), ld = num(r, "spill_load_bytes");
      if (st > 0 || ld > 0)
        parts.push_back(fmt::format("{} {:.0f} B stores/{:.0f} B loads", short_kernel_name(str(r, "kernel"), max_name), st, ld));
    }
    if (parts.empty()) return "spills: none\n";
    return fmt::format("spills: {}\n", fmt::join(parts, "; "));
  }
  for (const auto& k : kernels)
    if (k.value("own", false) && num(k, "local_mem_per_thread") > 0)
      parts.push_back(fmt::format("{} {:.0f} B/thread", kernel_name(k, max_name), num(k, "local_mem_per_thread")));
  if (parts.empty()) return {};
  return fmt::format("local memory (spills or local arrays): {}\n", fmt::join(parts, "; "));
}

std::string bound_line(const json& b) {
  const std::string kind = str(b, "class");
  const std::string basis = str(b, "basis");
  if (basis == "counters")
    return fmt::format("bound: {} ({}: DRAM {:.0f}% of peak, SM {:.0f}%, issue slots busy {:.0f}%; rule: the larger >= 60% "
                       "decides, both below = latency)\n",
                       kind, str(b, "scope"), num(b, "dram_pct"), num(b, "sm_pct"), num(b, "issue_pct"));
  if (basis == "io_bytes")
    return fmt::format("bound: {} (inputs+weights+outputs alone need {:.0f}% of measured DRAM peak; no counters)\n", kind,
                       num(b, "dram_pct"));
  return "bound: unknown (no hardware counters)\n";
}

// FLOPs, bytes, intensity and roofline position of the busiest kernels that have them, then
// of the candidate's own kernels together when several ran.
std::string roofline_lines(const json& kernels, const json& p, const ProfileTextOptions& o) {
  std::string s;
  size_t shown = 0, with = 0;
  for (const auto& k : kernels) {
    if (!k.contains("roofline")) continue;
    ++with;
    if (shown++ < o.max_roofline_rows)
      s += roofline_line(short_kernel_name(str(k, "name"), o.max_name_chars), k["roofline"]);
  }
  if (with > o.max_roofline_rows) s += fmt::format("roofline: ... {} more kernels in the profile JSON\n", with - o.max_roofline_rows);
  if (with > 1 && p.contains("roofline")) s += roofline_line(str(p["roofline"], "scope"), p["roofline"]);
  return s;
}

}  // namespace

std::string render_profile_text(const json& p, const json& resources, const ProfileTextOptions& o) {
  if (!p.is_object()) return "profile: none\n";
  if (p.contains("error"))
    return "profile: failed (" +
           cut(p["error"].is_string() ? p["error"].get<std::string>() : p["error"].dump(), o.max_reason_chars) + ")\n";
  const json kernels = p.value("kernels", json::array());
  const json totals = p.value("totals", json::object());
  std::string s;
  if (kernels.empty()) return "profile: no kernel ran on the GPU during one call of the candidate\n";
  s += fmt::format("profile (one call): {} kernel(s), {} launch(es), GPU time {}; own kernels {:.1f}% of it{}\n",
                   totals.value("kernels", 0), totals.value("launches", 0), ms(num(totals, "gpu_ms")),
                   100 * num(p, "own_share"), p.value("own_kernels_listed", false) ? "" : " (own = not a known library)");
  const bool counters = p.value("counters_available", false);
  if (kernels.size() > o.max_rows) {
    // Too many for one row each: the groups first, then the launch details of the busiest few.
    s += grouped_table(kernels, o);
    ProfileTextOptions busiest = o;
    busiest.max_rows = o.max_detail_rows;
    s += "busiest kernels:\n" + table(kernels, busiest, counters);
  } else {
    s += table(kernels, o, counters);
  }

  const double peak = num(p, "measured_dram_gbps");
  const std::string peak_s = peak > 0 ? fmt::format(" of measured peak {:.0f} GB/s", peak) : " (no measured peak)";
  if (p.contains("dram")) {
    const json& d = p["dram"];
    // Counters of some launches only, or of the whole call as one range: said, not passed off as the kernels'.
    const std::string scope = str(d, "scope");
    s += fmt::format("DRAM: {} moved in {} = {:.0f} GB/s{}{}{}\n", bytes_short(num(d, "bytes")), ms(num(d, "duration_ms")),
                     num(d, "gbps"),
                     d.contains("pct_of_measured_peak") ? fmt::format(", {:.0f}%", num(d, "pct_of_measured_peak")) : "",
                     peak_s, scope.empty() || scope == "all kernels" ? "" : " (" + scope + ")");
  }
  if (p.contains("io")) {
    const json& io = p["io"];
    s += fmt::format("inputs+weights+outputs: {}, {:.0f} GB/s effective{}{}\n", bytes_short(num(io, "bytes")),
                     num(io, "gbps"),
                     io.contains("pct_of_measured_peak") ? fmt::format(", {:.0f}%", num(io, "pct_of_measured_peak")) : "",
                     peak_s);
  }
  if (p.contains("bound")) s += bound_line(p["bound"]);
  s += roofline_lines(kernels, p, o);
  s += occupancy_line(kernels, o.max_name_chars);
  s += spills_line(kernels, resources, o.max_name_chars);
  if (!counters) {
    const std::string why = str(p, "counters_reason");
    s += "hardware counters: not available (" + (why.empty() ? "not collected" : cut(why, o.max_reason_chars)) + ")\n";
  } else if (p.contains("counters") && p["counters"].contains("note")) {
    s += "hardware counters: " + cut(str(p["counters"], "note"), o.max_reason_chars) + "\n";
  }
  return s;
}

}  // namespace kagent::profiler
