// A verdict in the server's two shapes: a step's metadata (status, reason, compiled, correct,
// speedups, runtimes in microseconds, time_coverage, guards, turn; the policy the verdict
// follows, both policies' verdicts and the own-kernel share) and the stateless
// evaluation result, with KernelGYM's field names where they mean the same (compiled,
// correctness, speedup, reference_runtime, kernel_runtime, decoy_kernel, time_coverage).
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "prompt/code_extractor.h"
#include "result/eval_result.h"
#include "result/policy.h"

namespace kagent::serve {

// `result` absent: the answer had no usable code (`format_error` says why). A result the workers
// could not run (reason no_gpu, which reaches here only under --compile-only) is status
// "compiled_not_run" (or "not_run" when it did not compile), reason "compile_only", correct null.
// status, reason, message and correct are under `policy` (the reward's, result/policy.h).
nlohmann::json step_metadata(const EvalResult* result, const prompt::FormatError* format_error, int turn,
                             Policy policy);
// `reward` absent: null (nothing was run to score).
nlohmann::json evaluation_json(const EvalResult* result, const prompt::FormatError* format_error,
                               std::optional<double> reward, Policy policy);
// A reward as the routes answer it: a number, or null when nothing was run.
nlohmann::json reward_json(std::optional<double> reward);

}  // namespace kagent::serve
