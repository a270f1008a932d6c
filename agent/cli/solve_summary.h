// The end of a `kagent solve` run: the human summary and the --json document.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "loop/solve_runner.h"
#include "trajectory/run_store.h"

namespace kagent::cli {

std::string render_solve_summary(const traj::RunStore& store, const loop::SolveOutcome& out, double seconds);
nlohmann::json solve_summary_json(const traj::RunStore& store, const loop::SolveOutcome& out, double seconds,
                                  int exit_status);

}  // namespace kagent::cli
