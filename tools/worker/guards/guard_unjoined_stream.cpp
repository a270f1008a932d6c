#include "worker/guards/guard_unjoined_stream.h"

#include <limits>
#include <memory>
#include <string>

#include <c10/cuda/CUDAStream.h>
#include <fmt/format.h>

#include "checker/compare.h"
#include "cuda/cuda_error.h"
#include "timer/launch_hold.h"
#include "worker/protocol/guard_options.h"
#include "worker/service/calls.h"

namespace kagent::worker {

std::optional<GuardFinding> check_unjoined_stream(Runner& candidate, const Values& inputs,
                                                  const std::vector<at::Tensor>& expected,
                                                  const ToleranceConfig& tolerance) {
  std::string why;
  const std::unique_ptr<LaunchHold> hold = LaunchHold::make(LaunchHold::kDefaultTimeout, why);
  if (!hold) return GuardFinding{guard::kUnjoinedStream, kGuardFlag, "unavailable: " + why};
  Values held = clone_values(inputs);
  for (auto& v : held) {
    if (!v.isTensor()) continue;
    at::Tensor t = v.toTensor();
    if (at::isFloatingType(t.scalar_type()) || at::isComplexType(t.scalar_type()))
      t.fill_(std::numeric_limits<double>::quiet_NaN());
    else
      t.zero_();  // an index or a mask: 0 is in range, so a racing read computes garbage, not a fault
  }
  // The poison is written before the hold: a racing read sees it, never what was there before.
  cuda::check(cudaDeviceSynchronize(), "synchronizing after poisoning the unjoined_stream guard's inputs");
  hold->hold(c10::cuda::getCurrentCUDAStream().stream());
  for (size_t i = 0; i < held.size(); ++i)
    if (held[i].isTensor()) held[i].toTensor().copy_(inputs[i].toTensor());  // behind the hold
  restore_candidate_state(candidate);
  // A forward that throws leaves the hold to its destructor, which lets the stream go.
  const std::vector<at::Tensor> got = call_candidate_unsynchronized(candidate, held);
  const bool held_through = hold->release();
  check_after_forward();
  const auto bad = first_mismatch(got, expected, tolerance);
  if (!bad) return std::nullopt;
  return GuardFinding{
      guard::kUnjoinedStream, kGuardReject,
      fmt::format("with the caller's stream still writing the inputs when forward was called, output {}: {}: forward "
                  "reads its inputs on a stream that does not wait for the caller's (right only when the inputs were "
                  "complete before the call, as KernelBench's harness makes them){}",
                  bad->output, bad->message,
                  held_through ? ""
                               : fmt::format("; forward waited for the GPU inside, and the hold let it go after {} ms",
                                             LaunchHold::kDefaultTimeout.count()))};
}

}  // namespace kagent::worker
