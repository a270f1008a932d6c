// How often the calling thread was taken off its core against its will (the kernel's
// nonvoluntary_ctxt_switches of /proc/thread-self/status). measure_cold reads it around the
// timed loop: the event time includes the host's launch latency, so a timing thread that is
// preempted between its start event and its launch shows as a slow sample.
#pragma once

#include <cstdint>
#include <optional>

namespace kagent {

// nullopt where /proc does not say (not Linux, /proc not mounted).
std::optional<int64_t> involuntary_switches_of_this_thread();

}  // namespace kagent
