// nvcc runs its host front end (cudafe++) and its device front end (cicc) one after the other,
// although each reads only the preprocessed source and a module id. On a file that includes
// torch's headers, as every KernelBench-format answer does, each takes 5-7 s, so running the
// two side by side takes about a third off a .cu compile. The steps are nvcc's own, read from
// `nvcc -dryrun` and run as nvcc runs them; kagent only writes the module id first (cudafe++
// would generate it) so that neither waits for the other. A build of any other shape (-rdc,
// nvlink, a host-only file, ...) or an nvcc that says something unexpected runs nvcc itself.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/subprocess.h"
#include "compiler/build_steps.h"

namespace kagent {

struct NvccSteps {
  std::vector<std::string> environment;  // nvcc's variables ("NAME=VALUE"), set for each step
  std::vector<std::string> host;    // host preprocessor, then cudafe++ (reads the module id)
  std::vector<std::string> device;  // per target: device preprocessor, cicc, ptxas; then fatbinary
  std::string host_compile;         // the host compiler on cudafe++'s output (embeds the fatbinary)
  std::filesystem::path host_source;  // cudafe++'s output, which host_compile compiles
  std::filesystem::path module_id_file;
  std::filesystem::path source;     // the .cu file (its name goes into the module id)
};

// The steps of `nvcc ... -dryrun` output (its stderr), or nullopt when they are not the one
// shape kagent splits: host preprocess, cudafe++, device steps, fatbinary, host compile.
std::optional<NvccSteps> parse_nvcc_dryrun(std::string_view dryrun);

// A module id in nvcc's form (_<hash>_<length>_<name>_<hash>), from the file's path and text:
// the same source gives the same object.
std::string module_id_for(const std::filesystem::path& source);

// The host compile as it will run: cudafe++'s output and nvcc's command for it.
struct HostCompile {
  std::filesystem::path source;
  std::string command;                   // a shell line, as nvcc printed it
  std::vector<std::string> environment;  // nvcc's variables
};

struct SplitOptions {
  std::string module_id;  // written for both front ends; empty: module_id_for(source)
  // Called once both front ends succeeded, before the host compile, which then runs
  // `command` as this left it (host_pch.h rewrites the source to start from a precompiled
  // header, or keeps it to build one).
  std::function<void(HostCompile&)> before_host_compile;
  // Given each preprocessor step (its shell line and nvcc's variables) first: a result when it
  // did the step's work itself (prefix_preprocess.h), nullopt to run the step as it is. The
  // processes it ran besides (a prefix's build) go to its last argument, recorded with the rest.
  std::function<std::optional<RunResult>(const std::string& command, const std::vector<std::string>& environment,
                                         std::vector<CompileStep>& ran)>
      preprocess;
  std::vector<CompileStep>* steps = nullptr;  // each process run is appended ("<label> cicc", ...)
  std::string label;
};

// Runs the nvcc command of `so` (one -c of one .cu) with its two front ends in parallel, under
// `limits`; nvcc's intermediate files go to `keep_dir`. The output is what nvcc would have
// printed: the steps' outputs in nvcc's order, up to the first that failed.
RunResult run_nvcc_split(const SpawnOptions& so, const CompileLimits& limits, const std::filesystem::path& keep_dir,
                         const SplitOptions& options = {});

// `command` (a host compile of `source` by nvcc's host compiler) made to build a precompiled
// header from `header` into `gch` instead; nullopt when the command is not of that shape.
std::optional<std::string> host_compile_to_pch(const std::string& command, const std::filesystem::path& source,
                                               const std::filesystem::path& header, const std::filesystem::path& gch);

// The argv words of a line as nvcc's -dryrun prints it (double quotes, no escapes).
std::vector<std::string> dryrun_words(std::string_view line);

}  // namespace kagent
