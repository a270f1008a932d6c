// `kagent rollout RUNS... --out DIR --reward kevin --gamma 0.4`: per-turn RL samples with
// rewards and discounted returns (DIR/samples.jsonl) and verl/SkyRL prompt rows
// (DIR/prompts.jsonl), with DIR/rollout.json naming the preset. Exit statuses: cli/dataset_exit.h.
#pragma once

#include "cli/command.h"

namespace kagent::cli {

Command add_rollout_command(CLI::App& app);

}  // namespace kagent::cli
