#include "result/eval_result.h"

#include "common/enum_names.h"
#include "common/json_optional.h"
#include "common/utf8.h"
#include "result/policy.h"

#include <array>
#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace kagent {

namespace {
constexpr EnumNames<Status, 10> kStatusNames{{
    {Status::Correct, "correct"},
    {Status::Wrong, "wrong"},
    {Status::CompileError, "compile_error"},
    {Status::RuntimeError, "runtime_error"},
    {Status::Timeout, "timeout"},
    {Status::Crash, "crash"},
    {Status::Invalid, "invalid"},
    {Status::ProblemError, "problem_error"},
    {Status::InternalError, "internal_error"},
    {Status::Rejected, "rejected"},
}};

}  // namespace

std::string to_string(Status s) { return enum_name(kStatusNames, s, "internal_error"); }

Status status_from_string(const std::string& s) { return enum_value(kStatusNames, s, "status"); }

const char* problem_error_reason(const std::string& kind) {
  if (kind == "problem_incomplete") return reason::kProblemIncomplete;
  if (kind == "file_not_found") return reason::kFileNotFound;
  return reason::kProblemLoad;
}

KAGENT_DEFINE_JSON_NULL_SAFE(KernelResources, kernel, registers, shared_static_bytes,
                                                stack_frame_bytes, spill_store_bytes, spill_load_bytes,
                                                constant_bytes)
KAGENT_DEFINE_JSON_NULL_SAFE(SassKernel, kernel, mangled, registers, shared_bytes, local_bytes,
                                                stack_bytes, instructions, global_loads, global_stores,
                                                shared_loads, shared_stores, ldmatrix, async_copies, atomics,
                                                local_loads, local_stores, local_in_loops, ffma, fmul, fadd, fp64,
                                                fp16, tensor, branches, loops, barriers)
KAGENT_DEFINE_JSON_NULL_SAFE(SassInfo, available, missing_reason, file, arch, kernels)

int SassKernel::tensor_instructions() const {
  int n = 0;
  for (const auto& [op, count] : tensor) n += count;
  return n;
}

namespace {

int accesses_by_width(const std::map<std::string, int>& by_width, bool vector) {
  int n = 0;
  for (const auto& [width, count] : by_width)
    if ((std::atoi(width.c_str()) >= 64) == vector) n += count;
  return n;
}

}  // namespace

int SassKernel::vector_global_accesses() const {
  return accesses_by_width(global_loads, true) + accesses_by_width(global_stores, true);
}

int SassKernel::scalar_global_accesses() const {
  return accesses_by_width(global_loads, false) + accesses_by_width(global_stores, false);
}

KAGENT_DEFINE_JSON_NULL_SAFE(CompileStep, name, seconds, cpu_seconds)

void to_json(nlohmann::json& j, const CompileInfo& c) {
  // The compiler's output quotes the candidate, whatever its bytes: JSON text is UTF-8 (utf8.h).
  j = {{"ok", c.ok},           {"cache_hit", c.cache_hit}, {"seconds", c.seconds},   {"errors", valid_utf8(c.errors)},
       {"log", valid_utf8(c.log)}, {"command", valid_utf8(c.command)}, {"artifact", valid_utf8(c.artifact)}, {"op_name", c.op_name},
       {"reason", c.reason},   {"limit", c.limit},         {"peak_rss_mb", c.peak_rss_mb},
       {"resources", c.resources}};
  put_optional(j, "sass", c.sass);
  if (!c.steps.empty()) j["steps"] = c.steps;
}

void from_json(const nlohmann::json& j, CompileInfo& c) {
  const CompileInfo d;
  c.ok = get_measured(j, "ok", d.ok);
  c.cache_hit = get_measured(j, "cache_hit", d.cache_hit);
  c.seconds = get_or(j, "seconds", d.seconds);
  c.errors = get_measured(j, "errors", d.errors);
  c.log = get_measured(j, "log", d.log);
  c.command = get_measured(j, "command", d.command);
  c.artifact = get_measured(j, "artifact", d.artifact);
  c.op_name = get_measured(j, "op_name", d.op_name);
  c.reason = get_measured(j, "reason", d.reason);
  c.limit = get_measured(j, "limit", d.limit);
  c.peak_rss_mb = get_measured(j, "peak_rss_mb", d.peak_rss_mb);
  c.resources = get_measured(j, "resources", d.resources);
  get_optional(j, "sass", c.sass);
  c.steps = get_measured(j, "steps", d.steps);
}
KAGENT_DEFINE_JSON_NULL_SAFE(Mismatch, index, got, expected)
KAGENT_DEFINE_JSON_NULL_SAFE(OutputCheck, output, ok, reason, message, max_abs_error,
                                                max_rel_error, worst_index, mismatched, numel, atol, rtol,
                                                samples)
KAGENT_DEFINE_JSON_NULL_SAFE(TimingStats, median_ms, mean_ms, stdev_ms, min_ms, max_ms,
                                                rel_stdev, iterations, total_s, stop_reason, host_median_ms,
                                                issue_median_ms, launch_latency, preemptions)

void to_json(nlohmann::json& j, const Correctness& c) {
  j = {{"trials", c.trials},
       {"trials_passed", c.trials_passed},
       {"max_abs_error", c.max_abs_error},
       {"max_rel_error", c.max_rel_error},
       {"first_failure_trial", c.first_failure_trial},
       {"first_failure_run", c.first_failure_run}};
  put_optional(j, "first_failure", c.first_failure);
}

void from_json(const nlohmann::json& j, Correctness& c) {
  c.trials = get_measured(j, "trials", 0);
  c.trials_passed = get_measured(j, "trials_passed", 0);
  c.max_abs_error = get_measured(j, "max_abs_error", 0.0);
  c.max_rel_error = get_measured(j, "max_rel_error", 0.0);
  c.first_failure_trial = get_measured(j, "first_failure_trial", -1);
  c.first_failure_run = get_or<std::string>(j, "first_failure_run", "");
  get_optional(j, "first_failure", c.first_failure);
}

void to_json(nlohmann::json& j, const GpuContention& c) {
  j = {{"known", c.known}, {"shared", c.shared}, {"others", c.others}};
  put_optional(j, "sm_clock_mhz_before", c.sm_clock_mhz_before);
  put_optional(j, "sm_clock_mhz_after", c.sm_clock_mhz_after);
  if (c.timing_lock) j["timing_lock"] = true;
  if (!c.siblings.empty()) j["siblings"] = c.siblings;
}

void from_json(const nlohmann::json& j, GpuContention& c) {
  c.known = get_or(j, "known", false);
  c.shared = get_or(j, "shared", false);
  c.others = get_or(j, "others", std::vector<std::string>{});
  get_optional(j, "sm_clock_mhz_before", c.sm_clock_mhz_before);
  get_optional(j, "sm_clock_mhz_after", c.sm_clock_mhz_after);
  c.timing_lock = get_or(j, "timing_lock", false);
  c.siblings = get_or(j, "siblings", std::vector<std::string>{});
}

void to_json(nlohmann::json& j, const BaselineRecheck& b) {
  j = {{"cached_ms", b.cached_ms}, {"measured_ms", b.measured_ms}, {"replaced", b.replaced}};
}

void from_json(const nlohmann::json& j, BaselineRecheck& b) {
  b.cached_ms = get_or(j, "cached_ms", 0.0);
  b.measured_ms = get_or(j, "measured_ms", 0.0);
  b.replaced = get_or(j, "replaced", false);
}

void to_json(nlohmann::json& j, const Timing& t) {
  j = nlohmann::json::object();
  put_optional(j, "candidate", t.candidate);
  put_optional(j, "eager", t.eager);
  put_optional(j, "compiled", t.compiled);
  put_optional(j, "speedup_eager", t.speedup_eager);
  put_optional(j, "speedup_compiled", t.speedup_compiled);
  put_optional(j, "rounds", t.rounds);
  j["baseline_cache_hit"] = t.baseline_cache_hit;
  put_optional(j, "baseline_recheck", t.baseline_recheck);
  put_optional(j, "contention", t.contention);
  // Derived, for readers of the record: a timing taken on a shared GPU is not to be trusted.
  j["trusted"] = !(t.contention && t.contention->shared);
}

void from_json(const nlohmann::json& j, Timing& t) {
  get_optional(j, "candidate", t.candidate);
  get_optional(j, "eager", t.eager);
  get_optional(j, "compiled", t.compiled);
  get_optional(j, "speedup_eager", t.speedup_eager);
  get_optional(j, "speedup_compiled", t.speedup_compiled);
  get_optional(j, "rounds", t.rounds);
  t.baseline_cache_hit = get_measured(j, "baseline_cache_hit", false);
  get_optional(j, "baseline_recheck", t.baseline_recheck);
  get_optional(j, "contention", t.contention);
}

std::optional<double> eager_speedup(const Timing& t, SpeedupEstimate estimate) {
  if (t.rounds && estimate == SpeedupEstimate::Rounds) return t.rounds->mean;
  if (t.rounds && estimate == SpeedupEstimate::RoundsLow) return t.rounds->low;
  return t.speedup_eager;
}

// Written out, not by macro: the macro's functions are inline, and callers outside this file need them.
// "action" is the guard's own (strict's); "kernelbench_action" is resolved through the policy table.
void to_json(nlohmann::json& j, const GuardFinding& g) {
  j = {{"name", g.name},
       {"action", g.action},
       {"kernelbench_action", action_under(g, Policy::KernelBench)},
       {"message", g.message}};
}

void from_json(const nlohmann::json& j, GuardFinding& g) {
  g.name = get_or<std::string>(j, "name", "");
  g.action = get_or<std::string>(j, "action", "");
  g.message = get_or<std::string>(j, "message", "");
  g.kernelbench_action = get_or<std::string>(j, "kernelbench_action", "");
}

void to_json(nlohmann::json& j, const PolicyVerdict& v) {
  j = {{"status", to_string(v.status)}, {"reason", v.reason}, {"message", v.message}};
}

void from_json(const nlohmann::json& j, PolicyVerdict& v) {
  v.status = status_from_string(j.at("status").get<std::string>());
  v.reason = get_or<std::string>(j, "reason", "");
  v.message = get_or<std::string>(j, "message", "");
}

void to_json(nlohmann::json& j, const PhaseRecord& p) {
  j = {{"name", p.name}, {"seconds", p.seconds}, {"peak_gpu_bytes", p.peak_gpu_bytes}, {"failure", p.failure}};
  if (!p.parts.empty()) {
    j["parts"] = nlohmann::json::object();
    for (const auto& [step, seconds] : p.parts) j["parts"][step] = seconds;
  }
}

void from_json(const nlohmann::json& j, PhaseRecord& p) {
  p.name = get_or<std::string>(j, "name", "");
  p.seconds = get_or(j, "seconds", 0.0);
  p.peak_gpu_bytes = get_or<int64_t>(j, "peak_gpu_bytes", 0);
  p.failure = get_or<std::string>(j, "failure", "");
  p.parts.clear();
  if (j.contains("parts") && j["parts"].is_object())
    for (const auto& [step, seconds] : j["parts"].items())
      if (seconds.is_number()) p.parts.emplace_back(step, seconds.get<double>());
}

// Out of line (not the macro's inline ones): the worker converts these outside this file.
void to_json(nlohmann::json& j, const ExtensionBuild& e) {
  j = {{"name", e.name}, {"built_by", e.built_by}, {"reason", e.reason}, {"seconds", e.seconds}};
}

void from_json(const nlohmann::json& j, ExtensionBuild& e) {
  e.name = get_or<std::string>(j, "name", "");
  e.built_by = get_or<std::string>(j, "built_by", "");
  e.reason = get_or<std::string>(j, "reason", "");
  e.seconds = get_or(j, "seconds", 0.0);
}

double EvalResult::guards_seconds() const {
  double s = 0;
  for (const auto& p : phases)
    if (p.name.starts_with("guards")) s += p.seconds;
  return s;
}

const PhaseRecord* EvalResult::phase(const std::string& name) const {
  for (const auto& p : phases)
    if (p.name == name) return &p;
  return nullptr;
}

nlohmann::json sandbox_not_run(std::string_view why) { return {{"candidate_ran", false}, {"why", why}}; }

nlohmann::json sandbox_json(const EvalResult& r) {
  return r.sandbox.is_null() ? sandbox_not_run("no candidate code ran in a worker") : r.sandbox;
}

void to_json(nlohmann::json& j, const EvalResult& r) {
  // Messages and the worker's output quote the candidate and its exceptions: made UTF-8 (utf8.h).
  j = {{"status", to_string(r.status)},
       {"reason", r.reason},
       {"message", valid_utf8(r.message)},
       {"runtime_error", valid_utf8(r.runtime_error)},
       {"format", r.format},
       {"device", r.device},
       {"profile", r.profile},
       {"guards", r.guards},
       {"policy", r.policy},
       {"verdicts", r.verdicts},
       {"phases", r.phases},
       {"extensions", r.extensions},
       {"footprint_bytes", r.footprint_bytes},
       {"eval_seconds", r.eval_seconds},
       {"total_seconds", r.total_seconds},
       {"worker_log_tail", valid_utf8(r.worker_log_tail)}};
  put_optional(j, "compile", r.compile);
  put_optional(j, "correctness", r.correctness);
  put_optional(j, "timing", r.timing);
  put_optional(j, "own_kernel_share", r.own_kernel_share);
  if (!r.isolation.empty()) j["isolation"] = r.isolation;
  if (!r.startup.is_null()) j["startup"] = r.startup;
  // Every result says what held the candidate's code, or that none of it ran.
  j["sandbox"] = sandbox_json(r);
}

void from_json(const nlohmann::json& j, EvalResult& r) {
  r.status = status_from_string(j.at("status").get<std::string>());
  r.reason = get_or<std::string>(j, "reason", "");
  r.message = get_or<std::string>(j, "message", "");
  r.runtime_error = get_or<std::string>(j, "runtime_error", "");
  r.format = get_or<std::string>(j, "format", "");
  r.device = get_or(j, "device", nlohmann::json()).get<DeviceInfo>();
  r.profile = get_or(j, "profile", nlohmann::json());
  r.guards = get_or(j, "guards", std::vector<GuardFinding>{});
  r.phases = get_or(j, "phases", std::vector<PhaseRecord>{});
  r.extensions = get_or(j, "extensions", std::vector<ExtensionBuild>{});
  r.footprint_bytes = get_or<int64_t>(j, "footprint_bytes", 0);
  r.eval_seconds = get_or(j, "eval_seconds", 0.0);
  r.total_seconds = get_or(j, "total_seconds", 0.0);
  r.worker_log_tail = get_or<std::string>(j, "worker_log_tail", "");
  get_optional(j, "compile", r.compile);
  get_optional(j, "correctness", r.correctness);
  get_optional(j, "timing", r.timing);
  r.policy = get_or<std::string>(j, "policy", "");
  r.verdicts = get_or(j, "verdicts", std::map<std::string, PolicyVerdict>{});
  get_optional(j, "own_kernel_share", r.own_kernel_share);
  r.isolation = get_or(j, "isolation", nlohmann::json()).get<Isolation>();
  r.startup = get_or(j, "startup", nlohmann::json());
  r.sandbox = get_or(j, "sandbox", nlohmann::json());
  if (r.sandbox.is_object() && r.sandbox.value("candidate_ran", true) == false) r.sandbox = nullptr;
}

}  // namespace kagent
