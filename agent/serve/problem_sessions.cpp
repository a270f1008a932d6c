#include "serve/problem_sessions.h"

#include <chrono>

#include "serve/api_error.h"

namespace kagent::serve {

OpenProblem& ProblemSessions::open(const std::string& problem) {
  OpenProblem* p = nullptr;
  {
    std::lock_guard lock(mu_);
    auto& slot = open_[problem];
    if (!slot) slot = std::make_unique<OpenProblem>();
    p = slot.get();
  }
  std::lock_guard lock(p->mu);  // one opening per problem; others of the same problem wait for it
  if (!p->session) {
    auto session = std::make_unique<EvaluationSession>(pool_);
    if (auto err = session->open(problem)) throw ApiError(422, "problem_error", err->line);
    p->session = std::move(session);
  }
  return *p;
}

const ProblemSpec& ProblemSessions::spec(const std::string& problem) { return open(problem).session->spec(); }

loop::ProblemPrompts ProblemSessions::prompts_for(const std::string& problem, prompt::AnswerFormat format) {
  OpenProblem& p = open(problem);
  const int f = format == prompt::AnswerFormat::Cuda ? 0 : 1;
  std::lock_guard lock(p.mu);
  if (!p.rendered[f]) {
    try {
      p.prompts[f] = loop::render_problem_prompts(*p.session, pool_->device(), prompts_, format);
    } catch (const std::exception& e) {
      throw ApiError(422, "problem_error", e.what());
    }
    p.rendered[f] = true;
  }
  return p.prompts[f];
}

EvalResult ProblemSessions::evaluate(const std::string& problem, const std::string& code_file, prompt::AnswerFormat format,
                                     const std::string& job_key) {
  if (remote_) return remote_(problem, code_file, format, job_key);
  return evaluate_here(problem, code_file, format);
}

EvalResult ProblemSessions::evaluate_here(const std::string& problem, const std::string& code_file,
                                          prompt::AnswerFormat format) {
  const auto start = std::chrono::steady_clock::now();
  // One display name for every candidate: it is part of the compile cache's key (errors name
  // it), so the same code in any episode or turn compiles once.
  const std::string display = format == prompt::AnswerFormat::Cuda ? "kernel.cu" : "kernel.py";
  // A KernelBench answer's build needs no problem: it starts now, beside the opening of a problem
  // this server has not seen (a worker's load of the file, behind the other openings), not after
  // it. When a batch of new problems comes at once, its first verdicts came after every opening
  // and then every compile.
  auto prebuilt = EvaluationSession::start_build(pool_, code_file, prompt::to_string(format), display);
  OpenProblem& p = open(problem);
  EvalResult r = p.session->evaluate_file(code_file, prompt::to_string(format), display, std::nullopt, std::move(prebuilt));
  r.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace kagent::serve
