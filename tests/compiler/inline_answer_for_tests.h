// A KernelBench-style answer file with one load_inline call, and a run of it through the worker's
// own load_inline (kagent_worker.inline_patch) with a build of kagent's: what the shared-binding and
// micro-header tests share.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "build_info.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "compiler/inline_extension_compiler.h"

namespace kagent::testing {

// `<dir>/<name>.py`, whose one load_inline call has these sources; its path.
inline std::string inline_answer_file(const std::string& dir, const std::string& name, const std::string& cpp,
                                      const std::string& cuda, const std::string& function) {
  const std::filesystem::path p = std::filesystem::path(dir) / (name + ".py");
  write_file_atomic(p, fmt::format(R"py(import torch
from torch.utils.cpp_extension import load_inline

cpp_src = r"""{}"""
cuda_src = r"""{}"""
ext = load_inline(name="{}", cpp_sources=cpp_src, cuda_sources=cuda_src, functions=["{}"], verbose=False)
)py",
                                   cpp, cuda, name, function));
  return p.string();
}

// Runs `file` with the worker's load_inline given `b`, then `check` (Python, `m` the module,
// `ext` its extension), then prints the loader's records as JSON; the output.
inline RunResult run_inline_answer(const std::string& file, const InlineCall& call, const InlineBuild& b,
                                   const std::string& check) {
  const std::string script = fmt::format(R"py(
import json, sys
sys.path.insert(0, sys.argv[1])
import torch
from kagent_worker.inline_patch import InlineExtensions
from kagent_worker.loading import exec_file
prebuilt = [{{"key": sys.argv[3], "library": sys.argv[4], "op_namespace": sys.argv[5], "binding": sys.argv[6],
             "functions": [sys.argv[7]]}}]
with InlineExtensions(prebuilt) as p:
    m = exec_file(sys.argv[2], "candidate_load_error")
ext = m.ext
{}
print(json.dumps(p.records))
)py",
                                         check);
  SpawnOptions so;
  so.argv = {build::kPythonExecutable, "-c", script, std::string(KAGENT_SOURCE_DIR) + "/tools/worker/python", file,
             call.key, b.info.artifact, b.info.op_name, b.binding, call.functions.at(0)};
  return run_command(so, std::chrono::seconds(120));
}

}  // namespace kagent::testing
