// Small helpers shared by the LLM tests: a fake environment (temp folders: tests/support).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "llm/llm_config.h"
#include "temp_dir.h"

namespace kagent::testing {

inline kagent::llm::EnvLookup fake_env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& k) -> std::optional<std::string> {
    auto it = vars.find(k);
    if (it == vars.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };
}

}  // namespace kagent::testing
