#include "prompt/feedback.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <fmt/format.h>

#include "result/eval_report.h"
#include "result/eval_result.h"
#include "result/policy.h"

namespace kagent::prompt {

namespace {

using nlohmann::json;

// Largest n' <= n such that text[0, n') does not end in the middle of a UTF-8 character.
size_t utf8_floor(const std::string& s, size_t n) {
  if (n >= s.size()) return s.size();
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

// Smallest n' >= n such that text[n', end) starts on a character boundary.
size_t utf8_ceil(const std::string& s, size_t n) {
  while (n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) ++n;
  return n;
}

std::string rtrim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

std::string g4(double v) { return fmt::format("{:.4g}", v); }

std::string shape_str(const std::vector<int64_t>& shape) { return format_index(shape); }

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

}  // namespace

std::string cut_text(const std::string& input, size_t max_lines, size_t max_bytes, bool from_end) {
  std::string text = rtrim(input);
  if (text.empty()) return text;
  // line starts
  std::vector<size_t> starts{0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts.push_back(i + 1);
  size_t lines = starts.size();

  size_t begin = 0, end = text.size();
  size_t lines_cut = 0;
  if (max_lines > 0 && lines > max_lines) {
    lines_cut = lines - max_lines;
    if (from_end) begin = starts[lines_cut];
    else end = starts[max_lines] - 1;  // before the newline that ends the last kept line
  }
  bool bytes_limited = false;
  if (end - begin > max_bytes) {
    bytes_limited = true;
    if (from_end) begin = utf8_ceil(text, end - max_bytes);
    else end = utf8_floor(text, begin + max_bytes);
  }
  std::string kept = text.substr(begin, end - begin);
  size_t bytes_cut = text.size() - kept.size();
  if (!bytes_limited && lines_cut == 0) return kept;
  std::string marker = bytes_limited ? fmt::format("[... {} more bytes cut]", bytes_cut)
                                     : fmt::format("[... {} more lines cut]", lines_cut);
  if (from_end) return marker + "\n" + kept;
  if (bytes_limited) kept = rtrim(kept);
  return kept + "\n" + marker;
}

json feedback_variables(const EvalResult& r, const ProblemSpec* spec, const FeedbackLimits& limits) {
  json v = json::object();
  std::string status = to_string(r.status);
  // No GPU (kagent serve --compile-only, a collection without one): the answer was compiled and
  // checked, never run. That is no failure inside kagent and nothing for the model to fix, so it
  // gets its own status (serve's metadata says the same: compiled_not_run or not_run).
  const bool not_run = r.reason == reason::kNoGpu;
  const bool compiled = r.compile && r.compile->ok;
  if (not_run) status = compiled ? "compiled_not_run" : "not_run";
  v["status"] = upper(status);
  for (const char* s : {"correct", "wrong", "compile_error", "runtime_error", "timeout", "crash", "invalid",
                        "problem_error", "internal_error", "rejected"})
    v[std::string("status_") + s] = status == s;
  v["status_not_run"] = not_run;
  v["compiled"] = compiled;
  v["reason"] = r.reason;
  v["message"] = r.message;

  // reward-hack guards: what they rejected or flagged under the policy the verdict follows,
  // with the numbers they saw
  const Policy policy = r.policy.empty() ? Policy::Strict : policy_from_string(r.policy);
  json guards = json::array();
  for (const auto& g : r.guards) {
    const std::string action = action_under(g, policy);
    guards.push_back({{"name", g.name}, {"action", action}, {"rejected", action == kGuardReject},
                      {"message", cut_text(g.message, 3, 600)}});
  }
  v["guards"] = guards;
  v["policy"] = to_string(policy);
  v["policy_strict"] = policy == Policy::Strict;

  // compiler
  v["compile_errors"] = "";
  v["compile_seconds"] = "";
  v["compile_cached"] = false;
  if (r.compile) {
    const auto& c = *r.compile;
    v["compile_seconds"] = fmt::format("{:.1f}", c.seconds);
    v["compile_cached"] = c.cache_hit;
    if (!c.ok) {
      const std::string& text = c.errors.empty() ? c.log : c.errors;
      v["compile_errors"] = cut_text(text, limits.compile_error_lines, limits.compile_error_bytes);
    }
  }

  // runtime error, worker tail
  v["runtime_error"] = r.status == Status::Correct
                           ? std::string()
                           : cut_text(r.runtime_error, limits.runtime_error_lines, limits.runtime_error_bytes);
  bool show_log = r.status == Status::Crash || r.status == Status::Timeout || r.reason == reason::kCudaFatal;
  v["worker_log"] =
      show_log ? cut_text(r.worker_log_tail, limits.worker_log_lines, limits.worker_log_bytes, /*from_end=*/true) : "";

  // correctness
  v["correctness"] = false;
  if (r.correctness) {
    const auto& c = *r.correctness;
    json cj = {{"trials", c.trials},
               {"trials_passed", c.trials_passed},
               {"max_abs_error", g4(c.max_abs_error)},
               {"max_rel_error", g4(c.max_rel_error)},
               {"failure", false}};
    if (c.first_failure) {
      const auto& f = *c.first_failure;
      json fj = {{"output", f.output},
                 {"output_dtype", ""},
                 {"output_shape", ""},
                 {"trial", c.first_failure_trial + 1},
                 {"run", c.first_failure_run},
                 {"reason", f.reason},
                 {"message", f.message},
                 {"mismatched", f.mismatched},
                 {"numel", f.numel},
                 {"has_values", f.numel > 0},
                 {"atol", fmt::format("{:g}", f.atol)},
                 {"rtol", fmt::format("{:g}", f.rtol)},
                 {"max_abs_error", g4(f.max_abs_error)},
                 {"max_rel_error", g4(f.max_rel_error)},
                 {"worst_index", format_index(f.worst_index)}};
      if (spec && f.output >= 0 && static_cast<size_t>(f.output) < spec->outputs.size()) {
        fj["output_dtype"] = spec->outputs[f.output].dtype;
        fj["output_shape"] = shape_str(spec->outputs[f.output].shape);
      }
      json ms = json::array();
      size_t shown = std::min(f.samples.size(), limits.mismatch_positions);
      for (size_t i = 0; i < shown; ++i) {
        const auto& m = f.samples[i];
        ms.push_back({{"index", format_index(m.index)},
                      {"got", fmt::format("{:.6g}", m.got)},
                      {"expected", fmt::format("{:.6g}", m.expected)}});
      }
      fj["mismatches"] = ms;
      int64_t known = std::max<int64_t>(f.mismatched, static_cast<int64_t>(f.samples.size()));
      fj["mismatches_more"] = std::max<int64_t>(0, known - static_cast<int64_t>(shown));
      if (fj["mismatches_more"].get<int64_t>() == 0) fj["mismatches_more"] = false;
      cj["failure"] = fj;
    }
    v["correctness"] = cj;
  }

  // performance
  v["timing"] = false;
  if (r.timing && r.timing->candidate) {
    const auto& t = *r.timing;
    json tj = {{"candidate_ms", format_ms(t.candidate->median_ms)},
               {"candidate_iterations", t.candidate->iterations},
               {"candidate_noise", fmt::format("{:.1f}%", t.candidate->rel_stdev * 100)},
               {"eager_ms", t.eager ? format_ms(t.eager->median_ms) : ""},
               {"compile_ms", t.compiled ? format_ms(t.compiled->median_ms) : ""},
               {"speedup_eager", t.speedup_eager ? fmt::format("{:.2f}x", *t.speedup_eager) : ""},
               {"speedup_compiled", t.speedup_compiled ? fmt::format("{:.2f}x", *t.speedup_compiled) : ""},
               {"faster_than_eager", t.speedup_eager && *t.speedup_eager > 1.0},
               {"slower_than_eager", t.speedup_eager && *t.speedup_eager <= 1.0}};
    v["timing"] = tj;
  }

  // profile (the profiler fills EvalResult::profile; a string, or an object with "text")
  std::string profile;
  if (r.profile.is_string()) profile = r.profile.get<std::string>();
  else if (r.profile.is_object() && r.profile.contains("text") && r.profile["text"].is_string())
    profile = r.profile["text"].get<std::string>();
  else if (!r.profile.is_null() && !r.profile.empty()) profile = r.profile.dump(1);
  v["profile"] = cut_text(profile, 0, limits.profile_bytes);

  // resources
  json ks = json::array();
  size_t nk = 0;
  if (r.compile && r.compile->ok) {
    nk = r.compile->resources.size();
    for (size_t i = 0; i < nk && i < limits.kernels; ++i) {
      const auto& k = r.compile->resources[i];
      ks.push_back({{"kernel", k.kernel},
                    {"registers", k.registers},
                    {"spill_store_bytes", k.spill_store_bytes},
                    {"spill_load_bytes", k.spill_load_bytes},
                    {"spills", k.spill_store_bytes > 0 || k.spill_load_bytes > 0},
                    {"shared_static_bytes", k.shared_static_bytes},
                    {"stack_frame_bytes", k.stack_frame_bytes}});
    }
  }
  v["has_kernels"] = !ks.empty();
  v["kernels"] = ks;
  v["kernels_more"] = nk > limits.kernels ? json(nk - limits.kernels) : json(false);
  v["sass"] = sass_variables(r, spec, limits.sass);
  return v;
}

}  // namespace kagent::prompt
