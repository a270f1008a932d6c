// `kagent curate RUNS... --out DIR`: ConCuR's selection of supervised data from solve runs and
// collections: DIR/train.jsonl (a `messages` column), DIR/README.md (the dataset card),
// DIR/stats.json (reasoning length statistics), DIR/curate.json (criteria and counts).
// Exit statuses: cli/dataset_exit.h.
#pragma once

#include "cli/command.h"

namespace kagent::cli {

Command add_curate_command(CLI::App& app);

}  // namespace kagent::cli
