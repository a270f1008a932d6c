// Runs the samples of one `kagent solve` run in parallel: one thread per sample, so while one
// waits on the model another is compiled or evaluated (the EvaluationSession queues
// evaluations onto the GPU workers). Resumes what the run folder already holds.
#pragma once

#include <optional>
#include <vector>

#include "llm/cancel.h"
#include "loop/sample_loop.h"

namespace kagent::loop {

struct SolveOutcome {
  std::vector<SampleRun> samples;           // in sample order; finished-before-resume ones included
  std::optional<RunAborted> aborted;        // the failure that ended the run early, if any
};

// `ctx` is shared by all samples (its members are thread-safe). `fresh` is the trajectory a
// new sample starts from (problem, model, versions filled; sample index set here).
// `cancel` is the token the LLM client was built with: the first RunAborted cancels it so the
// other samples stop at their next model call.
SolveOutcome run_samples(const SampleContext& ctx, const traj::Trajectory& fresh, int samples,
                         llm::CancelToken& cancel);

// Where an unfinished sample starts: its saved partial state, else `fresh`; sample index and
// start time set.
traj::Trajectory sample_start(const traj::ResumeState& resume, const traj::Trajectory& fresh, int sample);

}  // namespace kagent::loop
