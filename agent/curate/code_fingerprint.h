// Near-duplicate kernels: the SHA-256 of the code with comments removed and whitespace runs
// dropped, so that kernels differing only in comments, indentation or blank lines match.
#pragma once

#include <string>
#include <string_view>

namespace kagent::curate {

// Drops // and /* */ comments (C++/CUDA) and # comments (Python lines), outside string
// literals, and whitespace: a run between two words becomes one space, any other goes.
std::string normalise_code(std::string_view code);
std::string code_fingerprint(std::string_view code);

}  // namespace kagent::curate
