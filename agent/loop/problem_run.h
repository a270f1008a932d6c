// One problem's share of a refinement run, wired once and used by `kagent solve` (all its
// samples at once) and `kagent collect` (samples scheduled one by one across many problems):
// the prompts rendered for the workers' GPU and the reference's baselines, the trajectory a
// new sample starts from, the evaluator and the loop's context. A sample runs from where the
// run folder left it: finished samples are never run again, partial ones continue.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "evaluation/evaluation_session.h"
#include "llm/llm_config.h"
#include "loop/sample_loop.h"
#include "loop/session_evaluator.h"
#include "loop/solve_runner.h"

namespace kagent::loop {

struct ProblemRunOptions {
  prompt::AnswerFormat format = prompt::AnswerFormat::Cuda;
  HistoryOptions history{};
  LoopLimits limits{};
  std::string problem_tag;                  // the requests' "problem" tag (replay entries key on it); empty: the spec's name
  EventSink on_event{};
  const llm::CancelToken* stop = nullptr;   // SampleContext::stop
};

// What a trajectory records of the model: provider ("replay" for a replay file), model, URL, sampling.
traj::ModelInfo model_info(const llm::LlmConfig& cfg);

// Why a problem's run could not be wired (its prompts cannot be written, e.g. an input type
// a native candidate cannot take).
struct ProblemRunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The system prompt (with the GPU's facts) and the task (with the times to beat) of one problem.
struct ProblemPrompts {
  std::string system, task;
  std::optional<Timing> baselines;          // what the workers measured (or had cached); none without a GPU
};

// `session` is open and its workers started (`device` is what they reported). Asks the workers
// for the reference's baselines when there is a GPU and `with_baselines` (without them the task
// prompt names no times, and an evaluation measures them where it times a candidate). Throws
// ProblemRunError when the prompts cannot be written.
ProblemPrompts render_problem_prompts(EvaluationSession& session, const DeviceInfo& device,
                                      const prompt::PromptBuilder& prompts, prompt::AnswerFormat format,
                                      bool with_baselines = true);

class ProblemRun {
 public:
  ProblemRun(EvaluationSession& session, const DeviceInfo& device, traj::RunStore& store, llm::LlmClient& llm,
             const prompt::PromptBuilder& prompts, ProblemPrompts rendered, const traj::ModelInfo& model,
             ProblemRunOptions opts);
  ProblemRun(const ProblemRun&) = delete;
  ProblemRun& operator=(const ProblemRun&) = delete;

  // Sample `i` from where the run folder holds it (a finished one comes back recorded, not run).
  // Throws RunAborted like run_sample. Thread-safe for different samples.
  SampleRun run_sample(int sample);
  // Samples 0..samples-1 in parallel (run_samples).
  SolveOutcome run_samples(int samples, llm::CancelToken& cancel);

  const SampleContext& context() const { return *ctx_; }
  const traj::Trajectory& fresh() const { return fresh_; }
  traj::RunStore& store() { return store_; }

 private:
  traj::RunStore& store_;
  SessionEvaluator evaluator_;
  traj::ResumeState resume_;                // what the run folder held when this run began
  traj::Trajectory fresh_;
  std::optional<SampleContext> ctx_;
};

}  // namespace kagent::loop
