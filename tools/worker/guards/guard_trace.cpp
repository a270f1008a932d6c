#include "worker/guards/guard_trace.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "cuda/cuda_error.h"
#include "profiler/kernel_names.h"

#include "timer/cuda_event.h"
#include "worker/service/calls.h"

namespace kagent::worker {

namespace {

// A copy of `t` as its memory holds it now, made with a stream-ordered memcpy on `stream`:
// a copy engine transfer, not a kernel, so it leaves no record among the candidate's kernels
// and does not wait for other streams.
at::Tensor copy_as_is(const at::Tensor& t, cudaStream_t stream) {
  if (!t.defined()) return t;
  if (!t.is_cuda() || !t.has_storage()) return t.clone();
  const size_t item = t.element_size();
  const size_t nbytes = t.storage().nbytes() / item * item;  // every element lies in whole items
  at::Tensor bytes = at::empty({static_cast<int64_t>(nbytes)}, t.options().dtype(at::kByte));
  if (nbytes > 0)
    cuda::check(cudaMemcpyAsync(bytes.data_ptr(), t.storage().data(), nbytes, cudaMemcpyDeviceToDevice, stream),
               "cudaMemcpyAsync (copying outputs when forward returned)");
  return bytes.view(t.scalar_type()).as_strided(t.sizes(), t.strides(), t.storage_offset());
}

// The marker: a memset of this size and value, told apart from a candidate's own by both.
constexpr size_t kMarkerBytes = 4;
constexpr int kMarkerValue = 0x6b;
constexpr int kFenceValue = 0x5a;  // the fence between the warm-up call and the traced one

// The latest memset of the marker's size with this value.
const profiler::CopyRecord* find_memset(const std::vector<profiler::CopyRecord>& ops, int value) {
  const profiler::CopyRecord* found = nullptr;
  for (const auto& m : ops)
    if (!m.memcpy && m.bytes == kMarkerBytes && m.value == static_cast<uint32_t>(value) &&
        (!found || m.correlation_id > found->correlation_id))
      found = &m;
  return found;
}

// Everything of the call relative to the host's call of forward, in microseconds.
std::string timeline(const TracedCall& call) {
  const auto& ks = *call.kernels;
  bool off_stream = !call.marker_start_ns;
  for (const auto& k : ks) off_stream = off_stream || k.stream_id != call.marker_stream;
  const char* forced = std::getenv("KAGENT_GUARD_TIMELINE");
  if (!off_stream && !(forced && std::strcmp(forced, "1") == 0)) return {};
  const uint64_t t0 = call.host_call_ns;
  auto rel = [&](uint64_t t) { return (static_cast<double>(t) - static_cast<double>(t0)) * 1e-3; };
  std::string out = fmt::format("traced call (us from forward's call on the host): host return {:+.1f}, host saw the "
                                "current stream done {:+.1f}, marker {}",
                                rel(call.host_return_ns), rel(call.stream_done_ns),
                                call.marker_start_ns ? fmt::format("{:+.1f} on stream {}", rel(*call.marker_start_ns), call.marker_stream)
                                                     : std::string("not recorded"));
  for (size_t i = 0; i < ks.size() && i < 12; ++i)
    out += fmt::format("\n  kernel stream {:>4} {:+10.1f} .. {:+10.1f}  {}", ks[i].stream_id, rel(ks[i].start_ns),
                       rel(ks[i].end_ns), profiler::short_kernel_name(ks[i].name, 60));
  for (const auto& c : call.copies)
    out += fmt::format("\n  {} stream {:>4} {:+10.1f} .. {:+10.1f}  {} bytes", c.memcpy ? "memcpy" : "memset", c.stream_id,
                       rel(c.start_ns), rel(c.end_ns), c.bytes);
  return out;
}

}  // namespace

TracedCall traced_call(Runner& candidate, const Values& inputs, bool trace, const std::vector<int64_t>& expected_bytes) {
  TracedCall call;
  std::optional<profiler::KernelActivity> activity;
  if (trace) {
    try {
      activity.emplace(/*copies=*/true);
      activity->start();
    } catch (const cuda::ContextLost&) {
      throw;
    } catch (const std::runtime_error& e) {
      activity.reset();
      call.trace_error = e.what();
    }
  }
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  // The snapshot of the outputs at return is taken on a stream of its own that waits for the
  // current stream's work and nothing else, enqueued the moment forward returns: work hidden on
  // a side stream is then still running while the copy reads (a host-side wait first would give
  // it a head start). Its buffers are cached beforehand (two per expected output: the candidate
  // may take one), so that no cudaMalloc, which can wait for the device, runs in between.
  {
    std::vector<at::Tensor> reserve;
    for (int64_t bytes : expected_bytes)
      for (int i = 0; i < 2; ++i) reserve.push_back(at::empty({bytes}, at::TensorOptions().dtype(at::kByte).device(at::kCUDA)));
  }
  const c10::cuda::CUDAStream snapshot = c10::cuda::getStreamFromPool();
  const at::Tensor marker = at::empty({static_cast<int64_t>(kMarkerBytes)}, at::TensorOptions().dtype(at::kByte).device(at::kCUDA));
  // A call under tracing first, its outputs dropped: CUPTI makes the first traced call return
  // slowly on the host (1.6 ms on an H200, while the kernel itself took 0.14 ms), long enough for
  // work left on a side stream to finish before forward returns and pass unseen.
  // Its records are told apart by the fence, a memset enqueued between the two calls: CUDA
  // numbers every API call in order (CUPTI's correlation id), so whatever has a lower number than
  // the fence's belongs to the first call. Not by timestamps: the records' GPU clock and the host's
  // can be apart by more than the microseconds between forward's call and its first kernel
  // (an H100 once lost every kernel of fast honest calls that way: no_kernel "and no kernel at
  // all"), and not by a new CUPTI window: its forced flush makes the next call pay the slow first
  // return again, time in which a side stream's work finishes unseen.
  const at::Tensor fence = at::empty({static_cast<int64_t>(kMarkerBytes)}, at::TensorOptions().dtype(at::kByte).device(at::kCUDA));
  if (activity) (void)call_candidate(candidate, clone_values(inputs));
  // The traced call starts from the state at construction on a stateful problem, as every
  // compared call does; put back before the fence, so that its copies count as the first call's.
  restore_candidate_state(candidate);
  if (activity) {
    cuda::check(cudaMemsetAsync(fence.data_ptr(), kFenceValue, kMarkerBytes, stream), "CUDA error after forward (fence)");
    call.host_call_ns = profiler::KernelActivity::now_ns();
  }
  call.outputs = call_candidate_unsynchronized(candidate, inputs);
  if (activity) call.host_return_ns = profiler::KernelActivity::now_ns();
  // First thing after forward returns: the marker on the current stream. It runs on the GPU as
  // soon as the stream's own work is done, whatever the host does next.
  cuda::check(cudaMemsetAsync(marker.data_ptr(), kMarkerValue, kMarkerBytes, stream),
             "CUDA error after forward (marker)");
  CudaEvent returned(cudaEventDisableTiming);
  cuda::check(cudaEventRecord(returned.get(), stream), "CUDA error after forward (event record)");
  cuda::check(cudaStreamWaitEvent(snapshot.stream(), returned.get(), 0), "CUDA error after forward (stream wait)");
  call.at_return.reserve(call.outputs.size());
  for (const auto& out : call.outputs) call.at_return.push_back(copy_as_is(out, snapshot.stream()));
  // What a caller does next: wait for its current stream. An event, as the timer's end event.
  CudaEvent done(cudaEventDisableTiming);
  cuda::check(cudaEventRecord(done.get(), stream), "CUDA error after forward (event record)");
  cuda::check(cudaEventSynchronize(done.get()), "CUDA error after forward");
  if (activity) {
    try {
      call.stream_done_ns = profiler::KernelActivity::now_ns();
    } catch (const cuda::ContextLost&) {
      throw;
    } catch (const std::runtime_error& e) {
      activity.reset();
      call.trace_error = e.what();
    }
  }
  cuda::check(cudaDeviceSynchronize(), "CUDA error after forward");
  if (activity) {
    try {
      call.kernels = activity->stop();
      call.copies = activity->take_copies();
      if (const auto* f = find_memset(call.copies, kFenceValue)) {  // none (CUPTI dropped it): both calls' records stay
        const uint32_t first_call_end = f->correlation_id;
        std::erase_if(*call.kernels, [&](const profiler::KernelRecord& k) { return k.correlation_id <= first_call_end; });
        std::erase_if(call.copies, [&](const profiler::CopyRecord& m) { return m.correlation_id <= first_call_end; });
      }
      const auto untimed = std::count_if(call.kernels->begin(), call.kernels->end(),
                                         [](const profiler::KernelRecord& k) { return k.start_ns == 0 && k.end_ns == 0; });
      const auto early = std::count_if(call.kernels->begin(), call.kernels->end(), [&](const profiler::KernelRecord& k) {
        return k.start_ns != 0 && k.start_ns < call.host_call_ns;
      });
      if (untimed > 0 || early > 0)  // for the worker's log: what CUPTI's clock did on this machine
        std::fprintf(stderr, "kagent guards: %zu kernel record(s) without timestamps, %zu starting before the host's call\n",
                     static_cast<size_t>(untimed), static_cast<size_t>(early));
      if (const auto* m = find_memset(call.copies, kMarkerValue)) {
        call.marker_start_ns = m->start_ns;
        call.marker_stream = m->stream_id;
      }
      if (activity->dropped() > 0) {
        call.kernels.reset();
        call.trace_error = "CUPTI dropped " + std::to_string(activity->dropped()) + " kernel records";
      } else {
        call.timeline = timeline(call);
      }
    } catch (const cuda::ContextLost&) {
      throw;
    } catch (const std::runtime_error& e) {
      call.trace_error = e.what();
    }
  }
  return call;
}

}  // namespace kagent::worker
