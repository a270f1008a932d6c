// The one load_inline call of a test answer file, as the orchestrator reads it.
#pragma once

#include <string>

#include <doctest/doctest.h>

#include "compiler/inline_call_reader.h"
#include "compiler/inline_extension_compiler.h"

namespace kagent::testing {

inline InlineCall only_call(const std::string& path) {
  const InlineCallScan scan = read_inline_calls(path);
  REQUIRE(scan.error.empty());
  REQUIRE(scan.calls.size() == 1);
  REQUIRE(scan.calls[0].ok);
  return scan.calls[0].call;
}

}  // namespace kagent::testing
