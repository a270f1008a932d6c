// Per-phase budgets of one candidate's evaluation (docs/evaluation.md, "Phase budgets"): for
// each phase of an evaluate request, a wall budget (seconds in the phase, waits for the GPU's
// timing lock not counted) and a GPU budget (seconds the phase holds the GPU's timing lock,
// exclusively or shared: what a sibling's timing waits for). The orchestrator enforces them from the
// worker's phase and lock lines (worker/client/phase_watch.h); a phase past one is killed with
// a timeout whose reason is phase_budget. Plain C++: the CLI, the client and the worker use it.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kagent {

// The phases of an evaluate request in the order the worker runs them: its own steps around
// the evaluation (worker_service.cpp: prefetch, state_check) and the evaluation's
// (worker/service/evaluation.h). A phase may be left out (options, an early verdict), never
// run out of this order.
inline constexpr std::array<std::string_view, 9> kEvaluatePhases = {
    "prefetch", "load", "correctness", "guards_before_timing", "timing", "guards_after_timing", "baselines", "profile",
    "state_check"};
// Its place in kEvaluatePhases; nullopt for a name that is not a phase.
std::optional<size_t> phase_index(std::string_view phase);
// "prefetch, load, ..., state_check", for messages.
std::string phase_list();

// The flags that set them (agent/cli/eval_flags.cpp), named in a verdict's message.
inline constexpr const char* kPhaseBudgetFlag = "--phase-budget";
inline constexpr const char* kPhaseGpuBudgetFlag = "--phase-gpu-budget";

struct PhaseBudget {
  std::optional<double> wall_s;  // nullopt: none (the request's timeout alone)
  std::optional<double> gpu_s;
  bool operator==(const PhaseBudget&) const = default;
};

struct PhaseBudgets {
  std::map<std::string, PhaseBudget, std::less<>> phases;  // phase -> budget; a phase not here has none

  // GPU budgets for the phases that hold the GPU alone and run the candidate (timing 30 s,
  // guards_after_timing 30 s, profile 60 s) and for the shared ones that run it most
  // (correctness 60 s, guards_before_timing 60 s); no wall budgets (docs/evaluation.md says why).
  static PhaseBudgets defaults();
  PhaseBudget of(std::string_view phase) const;
  // "correctness=60,guards_before_timing=60,..." in the phases' order, of the GPU budgets or the
  // wall ones; "none" where there are none (the flags' help says the defaults from here).
  std::string listed(bool gpu) const;
  // Sets one (nullopt lifts it); a phase left with neither is dropped.
  void set(const std::string& phase, bool gpu, std::optional<double> seconds);
  bool operator==(const PhaseBudgets&) const = default;
};

// One flag value "PHASE=SECONDS": the phase and the seconds, more than 0, or "none" (nullopt:
// lifts a default). Throws std::invalid_argument with the reason in plain words ("'abc' is not
// a number", "no phase 'timng' (the phases are ...)").
std::pair<std::string, std::optional<double>> parse_phase_budget(const std::string& spec);

// {"timing": {"gpu": 30}, ...}: seconds; a phase with no budget is absent.
void to_json(nlohmann::json& j, const PhaseBudgets& b);
// Throws std::invalid_argument for an unknown phase or a budget that is not a positive number.
void from_json(const nlohmann::json& j, PhaseBudgets& b);

}  // namespace kagent
