#pragma once

#include "cli/command.h"

namespace kagent::cli {

// kagent eval PROBLEM CANDIDATE: compile, check, time one candidate; no LLM.
Command add_eval_command(CLI::App& app);

}  // namespace kagent::cli
