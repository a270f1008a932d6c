#include "loop/sample_loop.h"

#include <chrono>

#include <fmt/format.h>

#include "prompt/code_extractor.h"
#include "trajectory/sass_file.h"

namespace kagent::loop {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A budget the sample has used up before its next turn, if any.
std::optional<std::string> over_budget(const traj::Trajectory& t, const LoopLimits& l) {
  if (l.max_tokens && t.total_tokens().total() >= *l.max_tokens)
    return fmt::format("token budget of {} used ({})", *l.max_tokens, t.total_tokens().total());
  double used = 0;
  for (const auto& turn : t.turns) used += turn.llm_seconds + turn.eval_seconds;
  if (l.max_seconds && used >= *l.max_seconds) return fmt::format("time budget of {:.0f} s used", *l.max_seconds);
  return std::nullopt;
}

void emit(const SampleContext& ctx, LoopEvent e) {
  if (ctx.on_event) ctx.on_event(e);
}

}  // namespace

std::filesystem::path candidate_file(const traj::RunStore& store, int sample, int turn, prompt::AnswerFormat format) {
  return store.dir() / "candidates" /
         fmt::format("s{}-t{}.{}", sample, turn + 1, format == prompt::AnswerFormat::Cuda ? "cu" : "py");
}

SampleRun run_sample(const SampleContext& ctx, traj::Trajectory t) {
  SampleRun run;
  auto end = [&](traj::StopReason why, const std::string& note) {
    t.status = traj::SampleStatus::Finished;
    t.stop_reason = why;
    t.finished_at = traj::now_iso8601();
    ctx.store.finish_sample(t);
    run.recorded = true;
    emit(ctx, {LoopEvent::Phase::Ended, t.sample, t.next_turn(), nullptr, &t, note});
  };

  while (t.next_turn() < ctx.limits.max_turns) {
    if (auto why = over_budget(t, ctx.limits)) {
      end(traj::StopReason::Budget, *why);
      break;
    }
    traj::Turn turn;
    turn.index = t.next_turn();
    turn.started_at = traj::now_iso8601();

    // 1. The request: system prompt, task, and the earlier turns as the history policy keeps them.
    History history = build_history(ctx.system_prompt, ctx.task_prompt, t.turns, ctx.format, ctx.history,
                                     ctx.prompts.templates());
    llm::ChatRequest req;
    req.system = ctx.system_prompt;
    req.messages = history.messages;
    req.sampling = ctx.sampling;
    req.tag = ctx.request_tag.is_object() ? ctx.request_tag : nlohmann::json::object();
    req.tag["sample"] = t.sample;
    req.tag["turn"] = turn.index;
    turn.messages.push_back({"system", ctx.system_prompt});
    for (const auto& m : req.messages) turn.messages.push_back({m.role, m.content});

    // 2. The model's answer.
    emit(ctx, {LoopEvent::Phase::Asking, t.sample, turn.index, nullptr, nullptr, ""});
    auto asked = std::chrono::steady_clock::now();
    llm::ChatResponse resp;
    try {
      resp = ctx.llm.chat(req);
    } catch (const llm::RecoverableError& e) {
      run.interrupted = fmt::format("model failed on turn {}: {}", turn.index + 1, e.what());
      emit(ctx, {LoopEvent::Phase::Ended, t.sample, turn.index, nullptr, &t, run.interrupted});
      run.trajectory = t;
      return run;
    } catch (const llm::TerminalError& e) {
      throw RunAborted(e.kind(), e.what());
    }
    turn.llm_seconds = seconds_since(asked);
    turn.reasoning = resp.reasoning;
    turn.answer = resp.text;
    turn.tokens = {resp.usage.prompt_tokens, resp.usage.completion_tokens, resp.usage.reasoning_tokens};
    if (!resp.token_ids.empty() || !resp.logprobs.empty())
      turn.extra = {{"token_ids", resp.token_ids}, {"logprobs", resp.logprobs}};
    if (!resp.finish_reason.empty()) turn.extra["finish_reason"] = resp.finish_reason;

    // 3. The code, its verdict and the feedback the next turn carries.
    prompt::Extraction code = prompt::extract_code(resp.text, ctx.format);
    if (!code.ok()) {
      turn.error = traj::TurnError{traj::turn_error::kFormat, code.error->message};
      turn.feedback = ctx.prompts.format_error_prompt(*code.error, ctx.format);
    } else {
      turn.code = code.code->code;
      emit(ctx, {LoopEvent::Phase::Evaluating, t.sample, turn.index, nullptr, nullptr, ""});
      auto evaluated = std::chrono::steady_clock::now();
      const auto file = candidate_file(ctx.store, t.sample, turn.index, ctx.format);
      turn.eval = ctx.evaluator.evaluate(turn.code, file);
      traj::keep_sass_beside(*turn.eval, file, ctx.store.dir());
      turn.eval_seconds = seconds_since(evaluated);
      if (ctx.stop && ctx.stop->cancelled()) {  // SampleContext::stop: not this candidate's verdict, maybe
        run.interrupted = fmt::format("stopped during turn {}'s evaluation (resume runs that turn again)", turn.index + 1);
        emit(ctx, {LoopEvent::Phase::Ended, t.sample, turn.index, nullptr, &t, run.interrupted});
        run.trajectory = t;
        return run;
      }
      turn.feedback = ctx.prompts.feedback_prompt(*turn.eval, &ctx.spec);
    }
    turn.finished_at = traj::now_iso8601();

    // 4. Saved before anything else happens: a kill from here on loses nothing.
    t.turns.push_back(std::move(turn));
    t.updated_at = traj::now_iso8601();
    ctx.store.save_partial(t);
    emit(ctx, {LoopEvent::Phase::Done, t.sample, t.turns.back().index, &t.turns.back(), &t, ""});

    const traj::Turn& last = t.turns.back();
    if (ctx.limits.target_speedup && last.correct() && last.speedup_eager().value_or(0) >= *ctx.limits.target_speedup) {
      end(traj::StopReason::TargetSpeedup,
          fmt::format("reached {:.2f}x over eager (target {:.2f}x)", *last.speedup_eager(), *ctx.limits.target_speedup));
      break;
    }
  }
  if (!run.recorded) end(traj::StopReason::TurnLimit, fmt::format("{} turns", t.next_turn()));
  run.trajectory = t;
  return run;
}

}  // namespace kagent::loop
