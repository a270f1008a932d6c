// EvalResult -> the variables of prompts/feedback.txt (docs/evaluation.md, "Feedback to the model").
// Numbers arrive pre-formatted as strings; long texts are cut with a stated marker.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "problem/problem_spec.h"
#include "prompt/sass_feedback.h"
#include "result/eval_result.h"

namespace kagent::prompt {

struct FeedbackLimits {
  size_t compile_error_lines = 40;     // of CompileInfo::errors (or the log when errors is empty)
  size_t compile_error_bytes = 6000;
  size_t runtime_error_lines = 30;
  size_t runtime_error_bytes = 3000;
  size_t worker_log_lines = 15;        // crash/timeout: the worker's last lines
  size_t worker_log_bytes = 2000;
  size_t mismatch_positions = 5;       // at most this many mismatching positions shown
  size_t profile_bytes = 4000;
  size_t kernels = 16;                 // resource rows
  SassFeedbackLimits sass;             // the machine-code section (sass_feedback.h)
};

// Keeps at most `max_lines` lines and `max_bytes` bytes of `text` (never splitting a UTF-8
// character) and appends "[... N more lines cut]" or "[... N more bytes cut]" when it cut.
// `from_end` keeps the tail instead (worker logs), with the marker first.
std::string cut_text(const std::string& text, size_t max_lines, size_t max_bytes, bool from_end = false);

// The variables feedback.txt reads (all always present unless marked "section"):
//   status ("WRONG"), status_<name> bools (status_correct, status_wrong, status_compile_error,
//   status_runtime_error, status_timeout, status_crash, status_invalid, status_problem_error,
//   status_internal_error, status_rejected), reason, message;
//   status_not_run (bool: no GPU, so compiled and checked at most, never run; status is then
//   COMPILED_NOT_RUN or NOT_RUN and no other status_<name> is true), compiled (bool: the
//   answer's code compiled);
//   guards (list of {name, action, rejected (bool), message}): the reward-hack guards' findings;
//   compile_errors (cut; "" unless the compile failed), compile_seconds, compile_cached;
//   runtime_error (cut), worker_log (cut, crash/timeout only);
//   correctness (section object): trials, trials_passed, max_abs_error, max_rel_error,
//     failure (section object): output, output_dtype, output_shape (from the spec, may be ""),
//       trial (1-based), run, reason, message, mismatched, numel, has_values (bool), atol, rtol,
//       max_abs_error, max_rel_error, worst_index,
//       mismatches (list of {index, got, expected}), mismatches_more (count not listed; false when none);
//   timing (section object): candidate_ms, candidate_iterations, candidate_noise, eager_ms,
//     compile_ms ("" when unknown), speedup_eager, speedup_compiled ("" when unknown),
//     faster_than_eager, slower_than_eager (bools);
//   profile (string, "" when absent);
//   has_kernels (bool), kernels (list of {kernel, registers, spill_store_bytes, spill_load_bytes, spills (bool),
//     shared_static_bytes, stack_frame_bytes}), kernels_more (count not listed; false when none);
//   sass (section object or false): arch, missing ("" or why the SASS is missing), kernels (list of
//     {line}), kernels_more, findings (list of {text}); see sass_feedback.h.
// max_lines == 0 in cut_text means no line limit.
nlohmann::json feedback_variables(const EvalResult& result, const ProblemSpec* spec = nullptr,
                                  const FeedbackLimits& limits = {});

}  // namespace kagent::prompt
