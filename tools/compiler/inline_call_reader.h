// read_inline_calls: the load_inline/load calls of a KernelBench answer, read without running
// it. The reading is Python's own parser plus constant folding
// (tools/worker/python/kagent_worker/inline_calls.py, compiled into kagent): run in a child
// Python (-I -S, no torch; a time limit here, a memory limit in the script), given the file.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "compiler/inline_extension_compiler.h"

namespace kagent {

struct InlineCallRecord {
  std::string kind;            // "load_inline" | "load"
  int line = 0;
  std::string name;            // the extension's name, when it is a constant
  bool ok = false;             // kagent can build it: `call` holds it
  std::string reason;          // !ok: why kagent leaves it to torch
  std::string unknown_option;  // an option torch's function does not take
  InlineCall call;
};

struct InlineCallScan {
  std::vector<InlineCallRecord> calls;
  std::string error;  // the file could not be read (a syntax error, the reader failed)
};

InlineCallScan read_inline_calls(const std::filesystem::path& answer,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace kagent
