// The engine of `kagent collect`: the problems of a suite x samples x turns through the
// refinement loop, on one shared EvaluationPool (one long-lived worker per GPU, the compile
// pool over the CPU cores). Up to `concurrency` samples are in progress at once, each on its
// own thread: while some wait on the model (at most the client's in-flight limit), others
// compile or wait for a free GPU worker, so the GPUs are fed as long as work remains and the
// model is never held up by a full GPU queue. Problems whose spec is not on disk are loaded on the
// workers in the background, in the order their samples run, while the others' samples already
// compile and evaluate. Work is ordered largest problem first (among problems whose spec is
// known; so a slow problem does not hold up a shard's tail) or interleaved (sample 0 of every
// problem, then 1, ...).
// Every finished sample lands in its problem's run folder, then in the collection's index:
// a rerun over the same folder skips finished (problem, sample) pairs and continues the others.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collect/collection_store.h"
#include "collect/suite.h"
#include "evaluation/evaluation_pool.h"
#include "llm/cancel.h"
#include "loop/problem_run.h"

namespace kagent::collect {

enum class Order { Largest, Interleaved };
Order order_from_string(const std::string& s);  // "largest" | "interleaved"; throws std::invalid_argument
std::string to_string(Order o);

// What the progress view hears (from any thread).
struct CollectEvent {
  enum class Kind {
    Plan,            // the totals: before the problems are opened, then again before any sample (replacing them)
    ProblemFailed,   // a problem cannot run (note: why)
    SampleStarted,
    Turn,            // a turn was recorded (turn set)
    SampleRecorded,  // a sample finished and is in the index (trajectory set)
    SampleStopped,   // a sample stopped without finishing (model failure; note: why); resumable
    SampleFailed,    // kagent could not run or record a sample (note: why); the others go on; resumable
    ProblemDone,     // every sample of the problem is recorded
  } kind;
  std::string problem;
  int sample = -1;
  const traj::Turn* turn = nullptr;
  const traj::Trajectory* trajectory = nullptr;
  std::string note;
  // Plan: the work of this run.
  int problems = 0, samples = 0, samples_per_problem = 0, samples_done_before = 0, problems_done_before = 0,
      problems_failed_before = 0;  // samples: of the problems that can run
};
using CollectSink = std::function<void(const CollectEvent&)>;

struct RunnerConfig {
  std::shared_ptr<EvaluationPool> pool;     // started by the caller
  llm::LlmClient* llm = nullptr;
  const prompt::PromptBuilder* prompts = nullptr;
  traj::ModelInfo model;
  loop::ProblemRunOptions options;          // format, history, limits (on_event and the tag are set per problem)
  int samples = 1;
  int concurrency = 8;                      // samples in progress at once
  Order order = Order::Largest;
  std::function<nlohmann::json(const SuiteProblem&)> problem_config;  // a problem folder's config.json
  CollectSink on_event;
  // The task prompts name the reference's times, measured before a problem's first sample.
  // False for a replay, whose answers were written already: nothing reads its prompts' times,
  // and measuring them first holds a worker and the GPU alone for every problem, whether or not
  // any of its answers is ever timed. Its evaluations measure them where they time a candidate
  // (inside that timing's exclusive hold), and the baseline rows come from those evaluations.
  bool prompt_baselines = true;
};

struct CollectOutcome {
  std::optional<loop::RunAborted> aborted;  // the model failure (or Ctrl-C) that ended the run early
  std::string internal_error;               // kagent failed (a worker could not start, a folder unwritable)
  int samples_recorded = 0;                 // by this run
  int samples_stopped = 0;                  // by this run, resumable
  // Samples kagent could not run or record (an exception: a record it cannot write or read
  // back): one sample's defect each, logged with its name; the collection went on without them
  // and --resume runs them again.
  struct SampleFailure {
    std::string problem;
    int sample = -1;
    std::string what;
  };
  std::vector<SampleFailure> sample_failures;
  std::vector<std::pair<std::string, std::string>> problem_errors;  // every problem that cannot run, with why
  std::vector<nlohmann::json> baseline_rows;  // of the problems this run prepared or timed (baselines_table.h)
  double wall_seconds = 0;
};

// Runs `problems` (the manifest's, after filters and shard) into `store`. `cancel` is the token
// the LLM client was built with: the first RunAborted cancels it.
CollectOutcome run_collection(CollectionStore& store, const std::vector<SuiteProblem>& problems, const RunnerConfig& cfg,
                              llm::CancelToken& cancel);

}  // namespace kagent::collect
