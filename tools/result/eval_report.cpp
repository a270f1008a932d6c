#include "result/eval_report.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "common/json_optional.h"
#include "common/units.h"
#include "result/policy.h"

namespace kagent {

std::string format_ms(double ms) {
  if (ms >= 100) return fmt::format("{:.1f} ms", ms);
  if (ms >= 1) return fmt::format("{:.3f} ms", ms);
  return fmt::format("{:.1f} us", ms * 1000);
}

std::string format_index(const std::vector<int64_t>& index) {
  return fmt::format("[{}]", fmt::join(index, ", "));
}

namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

std::string indent(const std::string& text, size_t max_lines = 40) {
  std::istringstream in(text);
  std::string line, out;
  size_t n = 0;
  while (std::getline(in, line)) {
    if (n++ == max_lines) {
      out += "    [... more lines cut]\n";
      break;
    }
    out += "    " + line + "\n";
  }
  return out;
}

std::string timing_line(const char* label, const TimingStats& t) {
  return fmt::format("{} {} (median of {}, noise {:.1f}%)", label, format_ms(t.median_ms), t.iterations,
                     t.rel_stdev * 100);
}

// "policy    kernelbench: CORRECT; strict: REJECTED (library_share); own kernels 12% of GPU time",
// where the result has verdicts under its policies.
std::string render_policy_line(const EvalResult& r) {
  if (r.verdicts.empty()) return "";
  std::string s = "policy    ";
  bool first = true;
  for (const auto& name : policy_names()) {
    const auto it = r.verdicts.find(name);
    if (it == r.verdicts.end()) continue;
    s += fmt::format("{}{}{}: {}{}", first ? "" : "; ", name, name == r.policy ? " (rules)" : "",
                     upper(to_string(it->second.status)), it->second.reason.empty() ? "" : " (" + it->second.reason + ")");
    first = false;
  }
  if (r.own_kernel_share) s += fmt::format("; own kernels {:.0f}% of the GPU time", *r.own_kernel_share * 100);
  return s + "\n";
}

// One line per reward-hack guard finding with its action under the ruling policy (and
// strict's where that differs); a single "passed" line when the guards ran clean.
std::string render_guard_lines(const EvalResult& r) {
  if (r.guards.empty())
    return r.guards_seconds() > 0 ? fmt::format("guards    passed ({:.2f} s)\n", r.guards_seconds()) : "";
  const Policy policy = r.policy.empty() ? Policy::Strict : policy_from_string(r.policy);
  std::string s;
  for (size_t i = 0; i < r.guards.size(); ++i) {
    const auto& g = r.guards[i];
    const std::string action = action_under(g, policy);
    const std::string other = action_under(g, policy == Policy::Strict ? Policy::KernelBench : Policy::Strict);
    s += fmt::format("{}{:<6} {}: {}{}\n", i == 0 ? "guards    " : "          ", action, g.name, g.message,
                     other == action ? "" : fmt::format(" ({} under {})", other,
                                                        to_string(policy == Policy::Strict ? Policy::KernelBench
                                                                                           : Policy::Strict)));
  }
  if (r.guards_seconds() > 0) s += fmt::format("          ({:.2f} s of guards)\n", r.guards_seconds());
  return s;
}

// "start-up  worker 9.12 s (python 3.20 s, device 1.10 s, ...), problem_load 0.41 s, ...": the
// seconds of a lone `kagent eval` before its evaluation (EvalResult::startup).
std::string render_startup(const nlohmann::json& startup) {
  if (!startup.is_object() || startup.empty()) return "";
  std::string s;
  for (const auto& [key, value] : startup.items()) {
    if (!value.is_number()) continue;
    s += fmt::format("{}{} {:.2f} s", s.empty() ? "" : ", ", key, value.get<double>());
    if (key != "worker_start" || !startup.contains("steps")) continue;
    std::string steps;
    for (const auto& [step, seconds] : startup["steps"].items())
      if (seconds.is_number()) steps += fmt::format("{}{} {:.2f} s", steps.empty() ? "" : ", ", step, seconds.get<double>());
    if (!steps.empty()) s += " (" + steps + ")";
  }
  return s.empty() ? "" : "start-up  " + s + "\n";
}

std::string render_phases(const EvalResult& r) {
  if (r.phases.empty()) return "";
  std::string s = fmt::format("phases    {:<22} {:>9} {:>12} {:>10}  {}\n", "", "seconds", "peak GPU", "x footprint",
                              "failure");
  for (const auto& p : r.phases)
    s += fmt::format("          {:<22} {:>9.3f} {:>12} {:>10}  {}\n", p.name, p.seconds,
                     p.peak_gpu_bytes > 0 ? format_bytes(static_cast<double>(p.peak_gpu_bytes)) : "-",
                     r.footprint_bytes > 0 && p.peak_gpu_bytes > 0
                         ? fmt::format("{:.2f}", static_cast<double>(p.peak_gpu_bytes) / static_cast<double>(r.footprint_bytes))
                         : "-",
                     p.failure);
  for (const auto& p : r.phases) {
    if (p.parts.empty()) continue;
    std::string parts;
    for (const auto& [step, seconds] : p.parts) parts += fmt::format("{}{} {:.3f} s", parts.empty() ? "" : ", ", step, seconds);
    s += fmt::format("          {}: {}\n", p.name, parts);
  }
  if (r.footprint_bytes > 0)
    s += fmt::format("          footprint (inputs + parameters + outputs) {}\n", format_bytes(static_cast<double>(r.footprint_bytes)));
  s += render_startup(r.startup);
  return s;
}

}  // namespace

std::string render_isolation(const Isolation& i) {
  std::string s;
  if (i.memory_wait_seconds > 0) s += fmt::format("gpu       waited {:.1f} s for GPU memory other processes held\n", i.memory_wait_seconds);
  if (i.timing_lock_wait_seconds > 0)
    s += fmt::format("gpu       waited {:.1f} s for the GPU's timing lock (another worker timed; not counted "
                     "against the timeout)\n",
                     i.timing_lock_wait_seconds);
  if (i.retry)
    s += fmt::format("worker    verdict from a fresh worker: the first try gave {} {}{} ({})\n", i.retry->first_status,
                     i.retry->first_reason,
                     i.retry->why == "after_candidate" ? " after " + i.retry->after : " while another process held GPU memory",
                     i.retry->first_message.substr(0, 160));
  for (const auto& l : i.left_behind)
    s += fmt::format("left      {}: {} ({}{})\n", l.item, l.detail.substr(0, 200),
                     l.action == kLeftReplaced ? "the worker was replaced" : "put back", l.charged ? ", charged" : "");
  return s;
}

std::string shared_gpu_warning(const EvalResult& r) {
  if (!r.timing || !r.timing->contention || !r.timing->contention->shared) return "";
  const auto& c = *r.timing->contention;
  std::string others;
  for (size_t i = 0; i < c.others.size() && i < 3; ++i) others += (i ? ", " : "") + c.others[i];
  if (c.others.size() > 3) others += fmt::format(" and {} more", c.others.size() - 3);
  return fmt::format("timings were taken on a shared GPU ({} used it too): they may be slow, and the baselines "
                     "measured were not cached",
                     others);
}

std::string render_eval_report(const EvalResult& r, const std::string& title, const std::vector<std::string>& notes,
                               bool verbose) {
  std::string s;
  const std::string device = r.device.available ? r.device.name : "";
  s += fmt::format("kagent eval  {}{}\n", title, device.empty() ? "" : "  on " + device);
  // Without a GPU nothing went wrong inside kagent: the verdict says the candidate did not run
  // (exit status 15), not that kagent failed (INTERNAL_ERROR, 14).
  const std::string verdict = r.reason == reason::kNoGpu ? "NOT RUN" : upper(to_string(r.status));
  s += fmt::format("verdict   {}{}  {}\n", verdict, r.reason.empty() ? "" : " (" + r.reason + ")", r.message);
  s += render_policy_line(r);
  for (const auto& line : notes) s += line + "\n";

  if (r.compile) {
    const auto& c = *r.compile;
    if (c.ok) {
      s += fmt::format("compile   ok in {:.1f} s{}\n", c.seconds, c.cache_hit ? " (cached)" : "");
      for (const auto& k : c.resources)
        s += fmt::format("          {}: {} registers, {} B spill stores, {} B spill loads, {} B static smem, {} B stack\n",
                         k.kernel, k.registers, k.spill_store_bytes, k.spill_load_bytes, k.shared_static_bytes,
                         k.stack_frame_bytes);
      if (c.sass && c.sass->available)
        s += fmt::format("sass      {} {} kernel(s): {}\n", c.sass->arch, c.sass->kernels.size(), c.sass->file);
      else if (c.sass)
        s += "sass      missing: " + c.sass->missing_reason + "\n";
    } else {
      s += "compile   FAILED\n" + indent(c.errors.empty() ? c.log : c.errors);
    }
  }
  for (const auto& e : r.extensions)
    s += e.built_by == kBuiltByKagent
             ? fmt::format("extension {}: kagent's build (nvcc before the worker was ready), loaded in {:.2f} s\n", e.name,
                           e.seconds)
         : e.built_by == kBuiltByNobody
             ? fmt::format("extension {}: not built, torch's build error raised to the answer: {}\n", e.name, e.reason)
             : fmt::format("extension {}: torch's load_inline built it in {:.1f} s; kagent did not because {}\n", e.name,
                           e.seconds, e.reason);
  if (!r.runtime_error.empty() && r.status != Status::Correct) s += "error\n" + indent(r.runtime_error, 20);

  if (r.correctness && r.correctness->first_failure) {
    const auto& c = *r.correctness;
    const auto& f = *c.first_failure;
    s += fmt::format("correct   {}/{} trials passed; failed in trial {} ({}), output {}\n", c.trials_passed, c.trials,
                     c.first_failure_trial + 1, c.first_failure_run, f.output);
    if (f.numel > 0)
      s += fmt::format("          {} of {} elements outside atol={:g} rtol={:g}; max abs error {:.4g}, max rel error "
                       "{:.4g} at {}\n",
                       f.mismatched, f.numel, f.atol, f.rtol, f.max_abs_error, f.max_rel_error,
                       format_index(f.worst_index));
    for (const auto& m : f.samples)
      s += fmt::format("          at {}: got {:.6g}, expected {:.6g}\n", format_index(m.index), m.got, m.expected);
  } else if (r.correctness) {
    s += fmt::format("correct   {}/{} trials, max abs error {:.3g}, max rel error {:.3g}\n",
                     r.correctness->trials_passed, r.correctness->trials, r.correctness->max_abs_error,
                     r.correctness->max_rel_error);
  }

  if (r.timing && r.timing->candidate) {
    const auto& t = *r.timing;
    s += timing_line("timing    candidate", *t.candidate) + "\n";
    if (t.eager) s += timing_line("          eager    ", *t.eager) + "\n";
    if (t.compiled) s += timing_line("          compile  ", *t.compiled) + "\n";
    std::string sp;
    if (t.speedup_eager) sp += fmt::format("{:.2f}x over eager", *t.speedup_eager);
    if (t.speedup_compiled) sp += fmt::format("{}{:.2f}x over torch.compile", sp.empty() ? "" : ", ", *t.speedup_compiled);
    if (!sp.empty()) s += "speedup   " + sp + (t.baseline_cache_hit ? "  (baselines cached)" : "") + "\n";
    if (t.rounds)
      s += fmt::format("rounds    {:.2f}x over eager (median {:.2f}x), between {:.2f}x and {:.2f}x over {} paired "
                       "rounds ({:.0f}% interval): {}\n",
                       t.rounds->mean, t.rounds->median, t.rounds->low, t.rounds->high, t.rounds->ratios.size(),
                       100 * t.rounds->coverage,
                       t.rounds->resolved ? fmt::format("known within {:.0f}%", 100 * kSpeedupResolution)
                                          : fmt::format("NOT known within {:.0f}%: the timer cannot pin this kernel's speedup",
                                                        100 * kSpeedupResolution));
    if (t.baseline_recheck && t.baseline_recheck->replaced)
      s += fmt::format("baselines the cached eager time ({}) was {:+.0f}% off a fresh look ({}): measured again and "
                       "replaced\n",
                       format_ms(t.baseline_recheck->cached_ms),
                       (t.baseline_recheck->cached_ms / t.baseline_recheck->measured_ms - 1) * 100,
                       format_ms(t.baseline_recheck->measured_ms));
    if (t.contention && t.contention->known) {
      const auto& c = *t.contention;
      const std::string clocks =
          c.sm_clock_mhz_before && c.sm_clock_mhz_after
              ? fmt::format(", SM clock {} -> {} MHz", *c.sm_clock_mhz_before, *c.sm_clock_mhz_after)
              : "";
      const std::string lock =
          c.timing_lock ? fmt::format(", timed under the GPU's timing lock{}",
                                      c.siblings.empty() ? "" : fmt::format(" ({} other worker(s) waited)", c.siblings.size()))
                        : "";
      s += c.shared ? "gpu       SHARED: " + shared_gpu_warning(r) + clocks + lock + "\n"
                    : "gpu       no other process used it" + clocks + lock + "\n";
    }
  }
  s += render_guard_lines(r);
  s += render_isolation(r.isolation);
  if (r.profile.is_object() && r.profile.contains("text") && r.profile["text"].is_string())
    s += fmt::format("profile   ({:.2f} s)\n", get_or(r.profile, "seconds", 0.0)) +
         indent(r.profile["text"].get<std::string>(), 30);
  if (!r.worker_log_tail.empty() && (r.status == Status::Crash || r.status == Status::Timeout ||
                                     r.reason == reason::kCudaFatal))
    s += "worker output (tail)\n" + indent(r.worker_log_tail, 15);
  if (verbose) s += render_phases(r);
  s += fmt::format("time      evaluation {:.2f} s, total {:.2f} s\n", r.eval_seconds, r.total_seconds);
  return s;
}

}  // namespace kagent
