#include "serve/answer_check.h"

#include "common/files.h"
#include "compiler/inline_call_reader.h"
#include "serve/api_error.h"

namespace kagent::serve {

namespace {

// A KernelBench answer that is not Python never gets as far as a compile: kagent's reader of its
// load_inline calls stops at the syntax error, and on a GPU the worker's import of the file
// fails with it, a runtime_error scoring 0. Without a GPU the worker answers no_gpu before any
// import, which would leave the answer unscored (null); the same syntax error is found here, on
// the CPU, and gets the verdict a GPU would give. True when it did.
bool judge_syntax_without_gpu(EvalResult& r, const std::filesystem::path& file) {
  if (r.compile && r.compile->ok) return false;  // it compiled: it parsed
  const InlineCallScan scan = read_inline_calls(file);
  if (scan.error.rfind("SyntaxError", 0) != 0) return false;  // the reader failed for another reason
  r.status = Status::RuntimeError;
  r.reason.clear();
  r.message = scan.error;
  r.runtime_error = scan.error;
  return true;
}

}  // namespace

Checked check_answer(ProblemSessions& sessions, const std::string& problem, prompt::AnswerFormat format,
                     const std::string& text, AnswerText kind, const std::filesystem::path& file_stem,
                     const rollout::RewardPreset& preset, const std::string& job_key) {
  Checked c;
  std::string code = text;
  auto extraction = prompt::extract_code(text, format);
  if (extraction.ok()) {
    code = extraction.code->code;
  } else if (kind == AnswerText::Answer || extraction.error->kind != prompt::format_error::kNoCode ||
             extraction.error->truncated || !extraction.error->other_languages.empty()) {
    // Text without any fence is a kernel as given; several blocks, a cut one or one in another
    // language are as wrong there as in an answer.
    c.format_error = std::move(extraction.error);
    return c;
  }
  std::filesystem::path file = file_stem;
  file += format == prompt::AnswerFormat::Cuda ? ".cu" : ".py";
  std::filesystem::create_directories(file.parent_path());
  write_file_atomic(file, code);
  c.result = sessions.evaluate(problem, file.string(), format, job_key);
  if (c.result->reason == reason::kNoGpu) {
    if (!sessions.compile_only()) throw no_gpu_error();
    if (!(format == prompt::AnswerFormat::KernelBench && judge_syntax_without_gpu(*c.result, file))) {
      c.reward = std::nullopt;
      return c;
    }
  }
  c.reward = rollout::reward(*c.result, preset);
  return c;
}

}  // namespace kagent::serve
