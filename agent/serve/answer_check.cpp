#include "serve/answer_check.h"

#include "common/files.h"
#include "serve/api_error.h"

namespace kagent::serve {

Checked check_answer(ProblemSessions& sessions, const std::string& problem, prompt::AnswerFormat format,
                     const std::string& text, AnswerText kind, const std::filesystem::path& file_stem,
                     const rollout::RewardPreset& preset) {
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
  c.result = sessions.evaluate(problem, file.string(), format);
  if (c.result->reason == reason::kNoGpu) {
    if (!sessions.compile_only()) throw no_gpu_error();
    c.reward = std::nullopt;
    return c;
  }
  c.reward = rollout::reward(*c.result, preset);
  return c;
}

}  // namespace kagent::serve
