#include "profiler/profile_builder.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "profiler/kernel_attribution.h"
#include "profiler/kernel_groups.h"
#include "profiler/roofline.h"

namespace kagent::profiler {

BoundCall classify_bound(double dram_pct, double sm_pct, double issue_pct) {
  BoundCall b;
  b.dram_pct = dram_pct;
  b.sm_pct = sm_pct;
  b.issue_pct = issue_pct;
  if (std::max(dram_pct, sm_pct) < kBoundThresholdPct) b.kind = "latency";
  else b.kind = dram_pct >= sm_pct ? "memory" : "compute";
  return b;
}

namespace {

using nlohmann::json;
using Range = std::map<std::string, double>;

std::optional<double> get(const Range& r, const char* key) {
  auto it = r.find(key);
  if (it == r.end()) return std::nullopt;
  return it->second;
}

constexpr const char* kFlopMetrics[] = {metric::kFadd, metric::kFmul, metric::kFfma, metric::kDadd, metric::kDmul,
                                        metric::kDfma, metric::kHadd, metric::kHmul, metric::kHfma};

double round_to(double v, double unit) { return std::round(v / unit) * unit; }

// Counters of several ranges (launches) combined: bytes and time add up, percentages and
// rates are averaged with each launch's duration as its weight.
class CounterSum {
 public:
  void add(const Range& r) {
    const double ns = get(r, metric::kDuration).value_or(0.0);
    const double w = ns > 0 ? ns : 1.0;
    ++ranges_;
    duration_ns_ += ns;
    if (auto v = get(r, metric::kDramRead)) {
      read_ += *v;
      has_read_ = true;
    }
    if (auto v = get(r, metric::kDramWrite)) {
      write_ += *v;
      has_write_ = true;
    }
    for (const char* key : kFlopMetrics) {
      if (auto v = get(r, key)) {
        flop_counts_[key] += *v;
        has_flops_ = true;
      }
    }
    for (const char* key : {metric::kDramPct, metric::kSmPct, metric::kIssueActive, metric::kWarpsActive, metric::kIpc,
                            metric::kL1Hit, metric::kTensorPct, metric::kFfmaPeak, metric::kDfmaPeak, metric::kSmClock,
                            metric::kDramPeak, metric::kDramClock}) {
      if (auto v = get(r, key)) {
        weighted_[key] += *v * w;
        seen_[key] += w;
      }
    }
  }

  int ranges() const { return ranges_; }
  double duration_ms() const { return duration_ns_ * 1e-6; }
  bool has_bytes() const { return has_read_ || has_write_; }
  double read_bytes() const { return read_; }
  double write_bytes() const { return write_; }
  double bytes() const { return read_ + write_; }
  // bytes per ns are GB/s
  std::optional<double> gbps() const {
    if (!has_bytes() || duration_ns_ <= 0) return std::nullopt;
    return bytes() / duration_ns_;
  }
  std::optional<double> avg(const char* key) const {
    auto it = seen_.find(key);
    if (it == seen_.end() || it->second <= 0) return std::nullopt;
    return weighted_.at(key) / it->second;
  }

  // DRAM % of peak: the counter; else achieved bandwidth against the measured peak.
  std::optional<double> dram_pct(double measured_peak_gbps) const {
    if (auto v = avg(metric::kDramPct)) return v;
    if (auto g = gbps(); g && measured_peak_gbps > 0) return 100.0 * *g / measured_peak_gbps;
    return std::nullopt;
  }
  // SM % of peak: sm__throughput; without it, the busier of issue slots and tensor pipe.
  std::optional<double> sm_pct(std::string* source) const {
    if (auto v = avg(metric::kSmPct)) {
      if (source) *source = metric::kSmPct;
      return v;
    }
    auto issue = avg(metric::kIssueActive);
    auto tensor = avg(metric::kTensorPct);
    if (!issue && !tensor) return std::nullopt;
    if (source) *source = std::string("max(") + metric::kIssueActive + ", tensor pipe)";
    return std::max(issue.value_or(0.0), tensor.value_or(0.0));
  }

  json to_json(double measured_peak_gbps) const {
    json j;
    j["duration_ms"] = duration_ms();
    if (has_bytes()) {
      j["dram_read_bytes"] = read_;
      j["dram_write_bytes"] = write_;
      j["dram_bytes"] = bytes();
    }
    if (auto g = gbps()) j["dram_gbps"] = round_to(*g, 0.1);
    if (auto v = dram_pct(measured_peak_gbps)) j["dram_pct"] = round_to(*v, 0.1);
    if (auto v = avg(metric::kSmPct)) j["sm_pct"] = round_to(*v, 0.1);
    if (auto v = avg(metric::kIssueActive)) j["issue_pct"] = round_to(*v, 0.1);
    if (auto v = avg(metric::kWarpsActive)) j["warps_active_pct"] = round_to(*v, 0.1);
    if (auto v = avg(metric::kIpc)) j["ipc"] = round_to(*v, 0.01);
    if (auto v = avg(metric::kL1Hit)) j["l1_hit_pct"] = round_to(*v, 0.1);
    if (auto v = avg(metric::kTensorPct)) j["tensor_pct"] = round_to(*v, 0.1);
    return j;
  }

  // FLOPs, bytes, intensity and roofline position; null without FLOP counters or DRAM bytes.
  // Peaks from the counters (Nsight Compute's definition); DRAM bandwidth from the measured copy
  // bandwidth when the DRAM peak counters are missing.
  json roofline(double measured_peak_gbps) const {
    if (!has_flops_ || !has_bytes()) return nullptr;
    auto count = [&](const char* key) {
      auto it = flop_counts_.find(key);
      return it == flop_counts_.end() ? 0.0 : it->second;
    };
    const FlopCounts f = flops_from(count(metric::kFadd), count(metric::kFmul), count(metric::kFfma),
                                    count(metric::kDadd), count(metric::kDmul), count(metric::kDfma),
                                    count(metric::kHadd), count(metric::kHmul), count(metric::kHfma));
    std::optional<RooflinePeaks> peaks;
    const auto sm_clock = avg(metric::kSmClock);
    if (sm_clock) {
      RooflinePeaks pk;
      pk.fp32_flops_per_s = 2.0 * avg(metric::kFfmaPeak).value_or(0.0) * *sm_clock;
      pk.fp64_flops_per_s = 2.0 * avg(metric::kDfmaPeak).value_or(0.0) * *sm_clock;
      const auto dram_peak = avg(metric::kDramPeak), dram_clock = avg(metric::kDramClock);
      if (dram_peak && dram_clock) {
        pk.dram_bytes_per_s = *dram_peak * *dram_clock;
        pk.dram_basis = "counters";
      } else if (measured_peak_gbps > 0) {
        pk.dram_bytes_per_s = measured_peak_gbps * 1e9;
        pk.dram_basis = "measured copy bandwidth";
      }
      peaks = pk;
    }
    return roofline_json(f, bytes(), duration_ns_, peaks);
  }

  // The bound call with its numbers, or null when the counters say too little.
  json bound_json(double measured_peak_gbps) const {
    std::string compute_source;
    auto dram = dram_pct(measured_peak_gbps);
    auto sm = sm_pct(&compute_source);
    if (!dram || !sm) return nullptr;
    const BoundCall b = classify_bound(*dram, *sm, avg(metric::kIssueActive).value_or(0.0));
    return {{"class", b.kind},
            {"basis", "counters"},
            {"dram_pct", round_to(b.dram_pct, 0.1)},
            {"sm_pct", round_to(b.sm_pct, 0.1)},
            {"issue_pct", round_to(b.issue_pct, 0.1)},
            {"compute_metric", compute_source}};
  }

 private:
  int ranges_ = 0;
  double duration_ns_ = 0, read_ = 0, write_ = 0;
  bool has_read_ = false, has_write_ = false;
  std::map<std::string, double> weighted_, seen_;
  std::map<std::string, double> flop_counts_;
  bool has_flops_ = false;
};

json occupancy_json(const Occupancy& o) {
  if (!o.valid) return {{"error", o.error}};
  return {{"theoretical", round_to(o.theoretical, 0.001)},
          {"active_blocks_per_sm", o.active_blocks_per_sm},
          {"active_warps_per_sm", o.active_warps_per_sm},
          {"max_warps_per_sm", o.max_warps_per_sm},
          {"limiter", o.limiter}};
}

const char* kRule =
    "memory or compute: the larger of DRAM and SM throughput (% of peak) when it is >= 50%; "
    "latency: both below 50%";

}  // namespace

json build_profile(const ProfileCapture& cap, const ProfileContext& ctx) {
  const auto& records = cap.records;
  const double peak = ctx.device.is_object() ? ctx.device.value("measured_dram_gbps", 0.0) : 0.0;
  const Attribution attr = attribute_kernels(records, ctx.own_kernels);

  // Counters map onto launches by launch order (correlation ids increase with launches) when
  // both calls launched the same number of kernels.
  std::vector<size_t> launch_order(records.size());
  std::iota(launch_order.begin(), launch_order.end(), size_t{0});
  std::sort(launch_order.begin(), launch_order.end(),
            [&](size_t a, size_t b) { return records[a].correlation_id < records[b].correlation_id; });
  const auto& ranges = cap.counters.ranges;
  const bool whole_call = cap.counters.scope == "call";
  const bool matched = cap.counters.available && !whole_call && cap.counters.ranges_dropped == 0 &&
                       ranges.size() == records.size();
  // Per-launch ranges for fewer launches than were traced: their sums are not the call's.
  const bool partial = cap.counters.available && !whole_call && ranges.size() < records.size();
  const std::string totals_scope =
      whole_call ? "whole call"
      : partial  ? fmt::format("first {} of {} launches", ranges.size(), records.size())
                 : "all kernels";
  std::vector<const Range*> range_of(records.size(), nullptr);
  if (matched)
    for (size_t i = 0; i < launch_order.size(); ++i) range_of[launch_order[i]] = &ranges[i];

  // One row per kernel (mangled name), in order of first launch.
  std::vector<std::vector<size_t>> groups;
  std::map<std::string, size_t> group_of;
  for (size_t i : launch_order) {
    auto [it, fresh] = group_of.emplace(records[i].mangled, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }

  json kernels = json::array();
  CounterSum own_counters, all_counters;
  for (const Range& r : ranges) all_counters.add(r);
  for (const auto& g : groups) {
    const KernelRecord* longest = &records[g.front()];
    double total = 0;
    CounterSum counters;
    for (size_t i : g) {
      total += records[i].duration_ms();
      if (records[i].duration_ms() > longest->duration_ms()) longest = &records[i];
      if (range_of[i]) {
        counters.add(*range_of[i]);
        if (attr.kernels[i].own) own_counters.add(*range_of[i]);
      }
    }
    const KernelRecord& k = *longest;
    const KernelSourceInfo& src = attr.kernels[g.front()];
    json row = {{"name", k.name},
                {"mangled", k.mangled},
                {"own", src.own},
                {"source", src.source},
                {"calls", g.size()},
                {"total_ms", total},
                {"mean_ms", total / static_cast<double>(g.size())},
                {"share_pct", attr.total_ms > 0 ? round_to(100.0 * total / attr.total_ms, 0.1) : 0.0},
                {"grid", k.grid},
                {"block", k.block},
                {"registers", k.registers},
                {"static_smem", k.static_smem},
                {"dynamic_smem", k.dynamic_smem},
                {"local_mem_per_thread", k.local_mem_per_thread}};
    if (cap.limits) {
      const Occupancy o = theoretical_occupancy(k, *cap.limits);
      row["occupancy"] = occupancy_json(o);
      if (o.valid) row["waves"] = round_to(o.waves, 0.01);
    }
    if (counters.ranges() > 0) {
      row["counters"] = counters.to_json(peak);
      if (json b = counters.bound_json(peak); !b.is_null()) row["bound"] = b;
      if (json r = counters.roofline(peak); !r.is_null()) row["roofline"] = r;
    }
    kernels.push_back(std::move(row));
  }
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const json& a, const json& b) { return a["total_ms"].get<double>() > b["total_ms"].get<double>(); });

  json p;
  p["version"] = 1;
  p["sources"] = group_kernels_by_source(kernels);  // own vs each library, every kernel counted
  p["kernels"] = kernels;
  uint64_t first = 0, last = 0;
  for (const auto& r : records) {
    first = first == 0 ? r.start_ns : std::min(first, r.start_ns);
    last = std::max(last, r.end_ns);
  }
  p["totals"] = {{"kernels", groups.size()},
                 {"launches", records.size()},
                 {"gpu_ms", attr.total_ms},
                 {"own_ms", attr.own_ms},
                 {"library_ms", attr.library_ms},
                 {"span_ms", last > first ? static_cast<double>(last - first) * 1e-6 : 0.0}};
  p["own_share"] = round_to(attr.own_share, 0.0001);
  p["own_kernels_listed"] = !ctx.own_kernels.empty();
  if (cap.dropped_records > 0) p["dropped_records"] = cap.dropped_records;

  // Counters: availability and, for the whole call, DRAM traffic and achieved bandwidth.
  const auto& c = cap.counters;
  p["counters_available"] = c.available;
  p["counters_reason"] = c.available ? "" : c.reason;
  json cj = {{"status", c.status}, {"chip", c.chip}, {"metrics", c.metrics}, {"dropped", c.dropped},
             {"passes", c.passes}, {"ranges", c.ranges.size()}, {"ranges_dropped", c.ranges_dropped},
             {"matched", matched}, {"capacity", c.capacity}, {"image_bytes", c.image_bytes},
             {"seconds", c.seconds}, {"steps", c.step_seconds}, {"scope", c.scope}};
  if (c.available && whole_call)
    cj["note"] = fmt::format("counters over the whole call as one range ({} launches): not per kernel", records.size());
  else if (c.available && !matched)
    cj["note"] = fmt::format("counters were not attributed per kernel: {} profiled launches vs {} traced{}", c.ranges.size(),
                             records.size(), partial ? "; the totals cover those profiled only" : "");
  p["counters"] = cj;

  if (peak > 0) p["measured_dram_gbps"] = peak;
  if (c.available && all_counters.has_bytes()) {
    json d = {{"bytes", all_counters.bytes()},
              {"read_bytes", all_counters.read_bytes()},
              {"write_bytes", all_counters.write_bytes()},
              {"duration_ms", all_counters.duration_ms()},
              {"scope", totals_scope}};
    if (auto g = all_counters.gbps()) {
      d["gbps"] = round_to(*g, 0.1);
      if (peak > 0) d["pct_of_measured_peak"] = round_to(100.0 * *g / peak, 0.1);
    }
    p["dram"] = d;
  }
  if (ctx.io_bytes > 0 && attr.total_ms > 0) {
    const double gbps = static_cast<double>(ctx.io_bytes) / (attr.total_ms * 1e6);
    json io = {{"bytes", ctx.io_bytes}, {"gbps", round_to(gbps, 0.1)}};
    if (peak > 0) io["pct_of_measured_peak"] = round_to(100.0 * gbps / peak, 0.1);
    p["io"] = io;
  }

  // The candidate's bound call and roofline, weighted by time: its own kernels where counters are
  // per kernel and some are its own; else the totals (all kernels, the whole call, or the first N).
  const bool use_own = matched && own_counters.ranges() > 0;
  const CounterSum& call_counters = use_own ? own_counters : all_counters;
  const std::string call_scope = use_own ? "own kernels" : totals_scope;
  json bound;
  if (c.available) {
    bound = call_counters.bound_json(peak);
    if (!bound.is_null()) bound["scope"] = call_scope;
  }
  if (bound.is_null() && ctx.io_bytes > 0 && peak > 0 && attr.total_ms > 0) {
    // Without counters, the unavoidable traffic still proves memory-boundness when it alone
    // keeps DRAM busy; it cannot prove the opposite.
    const double pct = 100.0 * static_cast<double>(ctx.io_bytes) / (attr.total_ms * 1e6) / peak;
    bound = {{"class", pct >= kBoundThresholdPct ? "memory" : "unknown"},
             {"basis", "io_bytes"},
             {"dram_pct", round_to(pct, 0.1)},
             {"scope", "all kernels"}};
  }
  if (bound.is_null()) bound = {{"class", "unknown"}, {"basis", "none"}};
  if (c.available) {
    if (json r = call_counters.roofline(peak); !r.is_null()) {
      r["scope"] = call_scope;
      p["roofline"] = r;
    }
  }
  bound["rule"] = kRule;
  p["bound"] = bound;
  return p;
}

}  // namespace kagent::profiler
