#include "loop/solve_runner.h"

#include <mutex>
#include <thread>

namespace kagent::loop {

traj::Trajectory sample_start(const traj::ResumeState& resume, const traj::Trajectory& fresh, int sample) {
  traj::Trajectory t = resume.partial_for(sample).value_or(fresh);
  t.sample = sample;
  if (t.started_at.empty()) t.started_at = traj::now_iso8601();
  return t;
}

SolveOutcome run_samples(const SampleContext& ctx, const traj::Trajectory& fresh, int samples,
                         llm::CancelToken& cancel) {
  SolveOutcome out;
  out.samples.resize(static_cast<size_t>(samples));
  traj::ResumeState resume = ctx.store.resume();
  std::mutex mu;
  std::vector<std::jthread> threads;
  for (int i = 0; i < samples; ++i) {
    SampleRun& slot = out.samples[static_cast<size_t>(i)];
    if (auto it = resume.finished.find(i); it != resume.finished.end()) {
      slot.trajectory = it->second;  // recorded before: never run again
      slot.recorded = true;
      if (ctx.on_event) ctx.on_event({LoopEvent::Phase::Ended, i, slot.trajectory.next_turn(), nullptr,
                                      &slot.trajectory, "finished before"});
      continue;
    }
    traj::Trajectory t = sample_start(resume, fresh, i);
    threads.emplace_back([&, i, t = std::move(t)]() mutable {
      try {
        out.samples[static_cast<size_t>(i)] = run_sample(ctx, std::move(t));
      } catch (const RunAborted& e) {
        std::lock_guard lock(mu);
        // The first failure is the cause; the others are its cancellation.
        if (!out.aborted) out.aborted = e;
        cancel.cancel();
        out.samples[static_cast<size_t>(i)].interrupted = e.what();
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        if (!out.aborted) out.aborted = RunAborted(llm::ErrorKind::Config, std::string("internal error: ") + e.what());
        cancel.cancel();
        out.samples[static_cast<size_t>(i)].interrupted = e.what();
      }
    });
  }
  threads.clear();  // joins
  // Interrupted samples keep their last saved state for the summary.
  traj::ResumeState after = traj::RunStore::scan(ctx.store.dir());  // what is on disk now
  for (int i = 0; i < samples; ++i) {
    auto& s = out.samples[static_cast<size_t>(i)];
    if (s.recorded) continue;
    if (auto p = after.partial_for(i)) s.trajectory = *p;
    s.trajectory.sample = i;
  }
  return out;
}

}  // namespace kagent::loop
