#include "loop/problem_run.h"

#include <fmt/format.h>

namespace kagent::loop {

traj::ModelInfo model_info(const llm::LlmConfig& cfg) {
  traj::ModelInfo m{cfg.is_replay() ? "replay" : cfg.provider, cfg.model, cfg.base_url, {}};
  m.sampling.temperature = cfg.sampling.temperature;
  m.sampling.top_p = cfg.sampling.top_p;
  m.sampling.max_tokens = cfg.sampling.max_tokens;
  m.sampling.reasoning_effort = cfg.sampling.reasoning_effort;
  return m;
}

ProblemPrompts render_problem_prompts(EvaluationSession& session, const DeviceInfo& device,
                                      const prompt::PromptBuilder& prompts, prompt::AnswerFormat format,
                                      bool with_baselines) {
  const ProblemSpec& spec = session.spec();
  ProblemPrompts out;
  if (device.available && with_baselines) out.baselines = session.baselines();
  prompt::Baselines baselines;
  if (out.baselines) {
    if (out.baselines->eager) baselines.eager_ms = out.baselines->eager->median_ms;
    if (out.baselines->compiled) baselines.compile_ms = out.baselines->compiled->median_ms;
  }
  try {
    out.system = prompts.system_prompt(format, device);
    out.task = prompts.task_prompt(spec, format, baselines);
    return out;
  } catch (const std::exception& e) {
    throw ProblemRunError(fmt::format("cannot write the prompts for {}: {}", spec.name, e.what()));
  }
}

ProblemRun::ProblemRun(EvaluationSession& session, const DeviceInfo& device, traj::RunStore& store,
                       llm::LlmClient& llm, const prompt::PromptBuilder& prompts, ProblemPrompts rendered,
                       const traj::ModelInfo& model, ProblemRunOptions opts)
    : store_(store), evaluator_(session, opts.format), resume_(store.resume()) {
  const ProblemSpec& spec = session.spec();
  fresh_.run_id = store.run_id();
  fresh_.problem = traj::problem_info_from_spec(spec);
  fresh_.model = model;
  fresh_.max_turns = opts.limits.max_turns;
  fresh_.versions = traj::Versions::from_build();
  fresh_.versions.gpu = device.available ? device.name : "";

  ctx_.emplace(SampleContext{.llm = llm,
                             .evaluator = evaluator_,
                             .prompts = prompts,
                             .store = store,
                             .spec = spec,
                             .format = opts.format,
                             .system_prompt = std::move(rendered.system),
                             .task_prompt = std::move(rendered.task),
                             .history = opts.history,
                             .limits = opts.limits,
                             .sampling = std::nullopt,
                             .on_event = std::move(opts.on_event),
                             .request_tag = {{"problem", opts.problem_tag.empty() ? spec.name : opts.problem_tag}},
                             .stop = opts.stop});
}

SampleRun ProblemRun::run_sample(int sample) {
  if (store_.is_finished(sample)) {
    SampleRun done;
    if (auto it = resume_.finished.find(sample); it != resume_.finished.end()) done.trajectory = it->second;
    done.trajectory.sample = sample;
    done.recorded = true;
    return done;
  }
  return loop::run_sample(*ctx_, sample_start(resume_, fresh_, sample));
}

SolveOutcome ProblemRun::run_samples(int samples, llm::CancelToken& cancel) {
  return loop::run_samples(*ctx_, fresh_, samples, cancel);
}

}  // namespace kagent::loop
