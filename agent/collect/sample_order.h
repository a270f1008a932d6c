// Where the problems whose spec is not on disk go in a collection's order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kagent::collect {

// A permutation of [0, sizes.size()): the problems with a large file (over 1.5 times the
// median size; before a problem opens, its file is all that is known of it) evenly spaced over the
// first 85% of the order, the largest first; every other problem keeps its place in the suite's
// order around them, so the run starts and ends with small ones.
//
// Why: a large file is a large model (KernelBench level 3), slow to open and to evaluate, while
// every answer's compile costs about the same CPU. In suite order they all come last and the
// run ends on the GPU workers with idle cores (bench/realworld, twelfth session: the last tenth
// on 4 of 16 cores); put first, each sample's compile waits for its slow problem to open and
// the run starts on 3-4 cores (run 4 there). Spread, their GPU work overlaps the others' compiles.
std::vector<std::size_t> spread_large(const std::vector<std::uintmax_t>& sizes);

}  // namespace kagent::collect
