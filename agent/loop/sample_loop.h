// One sample of `kagent solve`: the refinement loop, turn by turn. Each turn renders the
// request from the message list (history policy), asks the model, extracts the code, has it
// evaluated, renders the feedback and saves the trajectory. Plain on purpose: the
// trajectory's turns are the state, and everything a turn needs comes in SampleContext.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "llm/cancel.h"
#include "llm/llm_client.h"
#include "loop/candidate_evaluator.h"
#include "loop/history.h"
#include "prompt/prompt_builder.h"
#include "trajectory/run_store.h"

namespace kagent::loop {

struct LoopLimits {
  int max_turns = 4;
  std::optional<double> target_speedup;     // over eager: a correct turn at or above it ends the sample
  std::optional<int64_t> max_tokens;        // per sample, prompt + completion
  std::optional<double> max_seconds;        // per sample, model + evaluation time of its turns
};

// What the live view hears. `turn` points at the recorded turn for Done, else null.
struct LoopEvent {
  enum class Phase { Asking, Evaluating, Done, Ended } phase;
  int sample = 0;
  int turn = 0;                             // 0-based index of the turn concerned
  const traj::Turn* record = nullptr;
  const traj::Trajectory* trajectory = nullptr;  // for Ended
  std::string note;                         // Ended: why the sample stopped
};
using EventSink = std::function<void(const LoopEvent&)>;

// An LLM failure that ends every sample (no key, key rejected, unknown model, bad config,
// Ctrl-C, replay exhausted): recorded turns stay, the run can be resumed.
struct RunAborted : std::runtime_error {
  RunAborted(llm::ErrorKind k, const std::string& m) : std::runtime_error(m), kind(k) {}
  llm::ErrorKind kind;
};

struct SampleContext {
  llm::LlmClient& llm;
  CandidateEvaluator& evaluator;
  const prompt::PromptBuilder& prompts;
  traj::RunStore& store;
  const ProblemSpec& spec;
  prompt::AnswerFormat format = prompt::AnswerFormat::Cuda;
  std::string system_prompt{}, task_prompt{};
  HistoryOptions history{};
  LoopLimits limits{};
  std::optional<llm::Sampling> sampling{};  // unset: the client's
  EventSink on_event{};                     // may be empty; called from the sample's thread
  nlohmann::json request_tag = nlohmann::json::object();  // merged into every request's tag (e.g. "problem")
  // Cancelled by a stop from outside (SIGINT, SIGTERM): a turn whose evaluation ends after it is
  // not saved, and resume runs it again. Workers and compilers ignore those signals
  // (common/stop_signals.h), so the evaluation was most likely sound; dropping it is the backstop
  // for a stop that reached it some other way.
  const llm::CancelToken* stop = nullptr;
};

// How one sample's run ended.
struct SampleRun {
  traj::Trajectory trajectory;
  bool recorded = false;                    // finished and written to trajectories.jsonl
  std::string interrupted;                  // why it stopped without finishing (resumable), else empty
};

// Runs the sample from where `t` stands (turns already recorded are kept, never repeated).
// Throws RunAborted for failures that end the whole run; a recoverable LLM failure that
// outlasted its retries stops only this sample (interrupted, resumable).
SampleRun run_sample(const SampleContext& ctx, traj::Trajectory t);

// Where a turn's code is saved in the run folder: candidates/s<sample>-t<turn>.cu|.py (1-based turn).
std::filesystem::path candidate_file(const traj::RunStore& store, int sample, int turn, prompt::AnswerFormat format);

}  // namespace kagent::loop
