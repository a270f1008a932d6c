// The SASS of a compiled candidate object, through the toolkit's own disassembler
// (`cuobjdump -sass -res-usage`), stored gzip-compressed and summarised per kernel.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "result/eval_result.h"

namespace kagent {

// `option`, else $KAGENT_CUOBJDUMP, else the cuobjdump the build found.
std::string resolve_cuobjdump(std::string_view option);
// $KAGENT_NVDISASM, else the nvdisasm the build found (looked up on PATH when it found none).
// cuobjdump -sass runs nvdisasm, looking for it on PATH and beside itself only; the toolkit
// and the PyPI wheels may put the two in different folders, so disassemble() puts this one's
// folder first on cuobjdump's PATH.
std::string resolve_nvdisasm();

// Disassembles `object` (a host object with an embedded fatbin, or a cubin) and writes the
// text to `gzip_file`. Never throws for the candidate's sake: a tool that cannot start,
// fails, times out or finds no device code gives available=false and the reason in the
// tool's own words (first line, cut); a missing nvdisasm is named with where to get it.
SassInfo disassemble(const std::filesystem::path& object, const std::filesystem::path& gzip_file,
                     const std::string& cuobjdump, std::string_view arch, std::chrono::milliseconds timeout,
                     const std::vector<int>& cpus = {});

}  // namespace kagent
