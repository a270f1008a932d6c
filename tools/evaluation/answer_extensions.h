// A KernelBench answer's load_inline extensions, built by kagent before the worker loads the
// answer: the calls are read statically (compiler/inline_call_reader.h), each one kagent can
// build is compiled with its nvcc pipeline (all at once), and what the worker needs to use
// them goes into the CandidateRef. What kagent leaves to torch's load_inline keeps a reason.
#pragma once

#include <optional>
#include <string>

#include "compiler/native_compiler.h"
#include "result/eval_result.h"
#include "worker/protocol/protocol.h"

namespace kagent {

struct AnswerExtensions {
  std::optional<CompileInfo> compile;  // set when kagent compiled at least one call: ok, or the answer's errors
  double seconds = 0;                  // reading and compiling, wall time
};

// Fills cand.extensions and cand.extension_reasons. `options`: arch, cache, nvcc, timeout.
AnswerExtensions build_answer_extensions(const std::string& path, const CompileOptions& options, CandidateRef& cand);

}  // namespace kagent
