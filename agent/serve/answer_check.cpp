#include "serve/answer_check.h"

#include "common/files.h"

namespace kagent::serve {

Checked check_answer(ProblemSessions& sessions, const std::string& problem, prompt::AnswerFormat format,
                     const std::string& text, bool text_is_code, const std::filesystem::path& file_stem,
                     const rollout::RewardPreset& preset) {
  Checked c;
  std::string code = text;
  if (!text_is_code) {
    auto extraction = prompt::extract_code(text, format);
    if (!extraction.ok()) {
      c.format_error = std::move(extraction.error);
      return c;
    }
    code = extraction.code->code;
  }
  std::filesystem::path file = file_stem;
  file += format == prompt::AnswerFormat::Cuda ? ".cu" : ".py";
  std::filesystem::create_directories(file.parent_path());
  write_file_atomic(file, code);
  c.result = sessions.evaluate(problem, file.string(), format);
  c.reward = rollout::reward(*c.result, preset);
  return c;
}

}  // namespace kagent::serve
