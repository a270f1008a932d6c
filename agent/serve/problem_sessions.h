// The evaluation side of `kagent serve`: one shared EvaluationPool (a worker per GPU, the
// compile pool) and one open EvaluationSession per problem, opened on first use and kept, with
// the problem's rendered prompts. Thread-safe; the HTTP threads call it at once.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "evaluation/evaluation_session.h"
#include "loop/problem_run.h"
#include "prompt/prompt_builder.h"

namespace kagent::serve {

struct OpenProblem {
  std::unique_ptr<EvaluationSession> session;
  loop::ProblemPrompts prompts[2];  // by AnswerFormat (cuda, kernelbench), rendered on first use
  bool rendered[2] = {false, false};
  std::mutex mu;
};

class ProblemSessions {
 public:
  // `compile_only`: the workers see no GPU on purpose (kagent serve --compile-only).
  ProblemSessions(std::shared_ptr<EvaluationPool> pool, const prompt::PromptBuilder& prompts, bool compile_only = false)
      : pool_(std::move(pool)), prompts_(prompts), compile_only_(compile_only) {}

  // The system and task prompts of a problem file (absolute path). Throws ApiError 422 when
  // the problem cannot be loaded or its prompts cannot be written.
  loop::ProblemPrompts prompts_for(const std::string& problem, prompt::AnswerFormat format);
  // Compiles and evaluates `code_file` against `problem`. Always a verdict. With a remote set
  // (kagent serve --queue), any node of the cluster does it: `job_key` is the job's idempotency
  // key there (a request_id's; empty: a fresh job), unused here.
  EvalResult evaluate(const std::string& problem, const std::string& code_file, prompt::AnswerFormat format,
                      const std::string& job_key = {});
  // On this node's own pool, always: what the cluster queue's workers call.
  EvalResult evaluate_here(const std::string& problem, const std::string& code_file, prompt::AnswerFormat format);
  // Where evaluate() sends its work instead of this node's pool: the cluster queue. Set before
  // serving.
  using Remote = std::function<EvalResult(const std::string& problem, const std::string& code_file,
                                          prompt::AnswerFormat format, const std::string& job_key)>;
  void send_to(Remote remote) { remote_ = std::move(remote); }
  const ProblemSpec& spec(const std::string& problem);

  EvaluationPool& pool() { return *pool_; }
  bool compile_only() const { return compile_only_; }
  const prompt::PromptBuilder& prompts() const { return prompts_; }

 private:
  OpenProblem& open(const std::string& problem);
  std::shared_ptr<EvaluationPool> pool_;
  const prompt::PromptBuilder& prompts_;
  bool compile_only_;
  Remote remote_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<OpenProblem>> open_;
};

}  // namespace kagent::serve
