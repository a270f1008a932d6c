// The real CandidateEvaluator: saves the code under the run folder and hands it to an
// EvaluationSession (nvcc on the calling thread, evaluation on a free GPU worker).
#pragma once

#include "evaluation/evaluation_session.h"
#include "loop/candidate_evaluator.h"
#include "prompt/answer_format.h"

namespace kagent::loop {

class SessionEvaluator : public CandidateEvaluator {
 public:
  SessionEvaluator(EvaluationSession& session, prompt::AnswerFormat format) : session_(session), format_(format) {}
  EvalResult evaluate(const std::string& code, const std::filesystem::path& file) override;

 private:
  EvaluationSession& session_;
  prompt::AnswerFormat format_;
};

}  // namespace kagent::loop
