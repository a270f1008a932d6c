// The human-readable report of one evaluation (`kagent eval` without --json).
#pragma once

#include <string>
#include <vector>

#include "result/eval_result.h"

namespace kagent {

// `title` names the problem and candidate, e.g. "19_ReLU <- relu.cu". `notes`: lines printed
// right after the verdict (e.g. the mode the model ran in). `verbose` adds the evaluation's
// phases: seconds, peak GPU memory (also against the problem's footprint) and whose failure
// ended one.
std::string render_eval_report(const EvalResult& r, const std::string& title,
                               const std::vector<std::string>& notes = {}, bool verbose = false);

// The one line a command prints when timings were taken while another process used the GPU
// ("timings were taken on a shared GPU: pid 4242 (python3) used it too; ..."); empty otherwise.
std::string shared_gpu_warning(const EvalResult& r);

// The report's lines on isolation (docs/evaluation.md): a wait for GPU memory, a verdict from a
// fresh worker after a first try failed, what the candidate left in the worker; "" when none.
std::string render_isolation(const Isolation& isolation);

// Fixed-width summaries reused by other reports.
std::string format_ms(double ms);
std::string format_index(const std::vector<int64_t>& index);

}  // namespace kagent
