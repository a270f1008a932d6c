// The command-line flags of every command that talks to a model (`kagent llm`, `kagent solve`,
// `kagent collect`): they fill an llm::LlmFlags, which llm::resolve_llm_config layers over the
// environment, the config file and the defaults.
#pragma once

#include <CLI/CLI.hpp>

#include "llm/llm_config.h"

namespace kagent::cli {

// Registers --provider, --model, --base-url, --api-key, --config, sampling, timeout and retry
// flags on `app` (a subcommand), writing into `flags`, which must outlive parsing.
void add_llm_flags(CLI::App& app, llm::LlmFlags& flags);

}  // namespace kagent::cli
