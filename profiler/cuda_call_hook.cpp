#include "profiler/cuda_call_hook.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include <cupti.h>

#include "cuda/cuda_error.h"  // cupti_message

namespace kagent::profiler {

struct CudaCallHook::State {
  std::function<void()> on_call;
  std::atomic<bool> enabled{true};
  std::atomic<int> in_flight{0};
  CUpti_SubscriberHandle subscriber = nullptr;
};

namespace {

void CUPTIAPI on_api(void* userdata, CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite != CUPTI_API_ENTER) return;
  auto* state = static_cast<CudaCallHook::State*>(userdata);
  state->in_flight.fetch_add(1);
  if (state->enabled.load()) state->on_call();
  state->in_flight.fetch_sub(1);
}

// A CUPTI call in the destructor: its failure is logged (a destructor does not throw).
void log_failure(CUptiResult r, const char* what) {
  if (r != CUPTI_SUCCESS)
    std::fprintf(stderr, "kagent-worker: %s failed: %s\n", what, cuda::cupti_message(r).c_str());
}

}  // namespace

CudaCallHook::CudaCallHook(std::function<void()> on_call) : state_(std::make_unique<State>()) {
  state_->on_call = std::move(on_call);
  const CUptiResult r = cuptiSubscribe(&state_->subscriber, &on_api, state_.get());
  if (r != CUPTI_SUCCESS) {
    why_ = "CUPTI refused a callback subscriber (" + cuda::cupti_message(r) + ")";
    state_->subscriber = nullptr;
    return;
  }
  for (const CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    const CUptiResult e = cuptiEnableDomain(1, state_->subscriber, domain);
    if (e != CUPTI_SUCCESS) {
      why_ = "CUPTI could not enable the API callbacks (" + cuda::cupti_message(e) + ")";
      log_failure(cuptiUnsubscribe(state_->subscriber), "cuptiUnsubscribe");
      state_->subscriber = nullptr;
      return;
    }
  }
  active_ = true;
}

CudaCallHook::~CudaCallHook() {
  state_->enabled.store(false);
  if (state_->subscriber) {
    log_failure(cuptiEnableDomain(0, state_->subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "cuptiEnableDomain(0, runtime)");
    log_failure(cuptiEnableDomain(0, state_->subscriber, CUPTI_CB_DOMAIN_DRIVER_API), "cuptiEnableDomain(0, driver)");
    log_failure(cuptiUnsubscribe(state_->subscriber), "cuptiUnsubscribe");
  }
  // A callback that began before the domains were turned off may still be running on_call
  // (taking the lock back can wait for a sibling's timing): the state outlives it.
  while (state_->in_flight.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace kagent::profiler
