// The two answer formats a model can be asked for (README "Candidates"; `--format cuda|kernelbench`).
#pragma once

#include <stdexcept>
#include <string>

namespace kagent::prompt {

enum class AnswerFormat {
  Cuda,         // one ```cuda block: the whole .cu file defining `forward`
  KernelBench,  // one ```python block: a module with `class ModelNew` built with load_inline
};

inline std::string to_string(AnswerFormat f) { return f == AnswerFormat::Cuda ? "cuda" : "kernelbench"; }

// "cuda" | "kernelbench"; std::invalid_argument otherwise.
inline AnswerFormat answer_format_from_string(const std::string& s) {
  if (s == "cuda") return AnswerFormat::Cuda;
  if (s == "kernelbench") return AnswerFormat::KernelBench;
  throw std::invalid_argument("unknown answer format \"" + s + "\" (expected cuda or kernelbench)");
}

}  // namespace kagent::prompt
