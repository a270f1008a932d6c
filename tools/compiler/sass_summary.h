// The per-kernel instruction summary of `cuobjdump -sass -res-usage` output: loads and stores
// by memory space and width, FP32/FP64/FP16 arithmetic, tensor-core instructions with their
// shapes, branches, loops, barriers and local-memory traffic. A reading of the toolkit's
// disassembly, not a disassembler: it only classifies the opcodes cuobjdump prints.
#pragma once

#include <string_view>
#include <vector>

#include "result/eval_result.h"

namespace kagent {

// One SassKernel per "Function : <name>" block, in the order cuobjdump lists them, with the
// registers, shared, local and stack sizes of the matching "-res-usage" line when present.
std::vector<SassKernel> summarize_sass(std::string_view cuobjdump_output);

}  // namespace kagent
