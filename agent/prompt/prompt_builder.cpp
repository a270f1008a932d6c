#include "prompt/prompt_builder.h"

#include <cmath>

#include <fmt/format.h>

#include "common/units.h"
#include "compiler/nvcc_command.h"
#include "problem/forward_signature.h"
#include "problem/param_listing.h"
#include "result/eval_report.h"

namespace kagent::prompt {

namespace {

using nlohmann::json;

std::string number_or_empty(int64_t n) { return n > 0 ? std::to_string(n) : ""; }

std::string bytes_or_empty(int64_t n) { return n > 0 ? format_bytes(static_cast<double>(n)) : ""; }

json arg_json(const TensorArg& a) {
  bool tensor = a.kind == ArgKind::Tensor;
  return {{"name", a.name},
          {"cpp_name", a.cpp_name},
          {"renamed", a.cpp_name != a.name},
          {"kind", to_string(a.kind)},
          {"is_tensor", tensor},
          {"dtype", a.dtype},
          {"shape", tensor ? format_index(a.shape) : ""},
          {"buffer", a.is_buffer}};
}

}  // namespace

Baselines Baselines::from(const EvalResult& r) {
  Baselines b;
  if (r.timing && r.timing->eager) b.eager_ms = r.timing->eager->median_ms;
  if (r.timing && r.timing->compiled) b.compile_ms = r.timing->compiled->median_ms;
  return b;
}

json system_variables(AnswerFormat format, const DeviceInfo& device) {
  json v = {{"format", to_string(format)},
            {"gpu", false},
            {"gpu_name", ""},
            {"gpu_sms", ""},
            {"gpu_memory", ""},
            {"gpu_l2", ""},
            {"gpu_cc", ""},
            {"gpu_arch", ""},
            {"gpu_bandwidth", ""},
            {"gpu_smem_block", ""},
            {"gpu_smem_sm", ""},
            {"gpu_regs_sm", ""},
            {"gpu_threads_sm", ""}};
  if (!device.available) return v;
  v["gpu"] = true;
  v["gpu_name"] = device.name;
  v["gpu_sms"] = number_or_empty(device.sms);
  v["gpu_memory"] = bytes_or_empty(device.memory_bytes);
  v["gpu_l2"] = bytes_or_empty(device.l2_bytes);
  if (device.measured_dram_gbps && *device.measured_dram_gbps > 0)
    v["gpu_bandwidth"] = fmt::format("{:.0f} GB/s", *device.measured_dram_gbps);
  v["gpu_smem_block"] = bytes_or_empty(device.shared_memory_per_block_optin);
  v["gpu_smem_sm"] = bytes_or_empty(device.shared_memory_per_sm);
  v["gpu_regs_sm"] = number_or_empty(device.registers_per_sm);
  v["gpu_threads_sm"] = number_or_empty(device.max_threads_per_sm);
  if (device.cc_major > 0) {
    v["gpu_cc"] = fmt::format("{}.{}", device.cc_major, device.cc_minor);
    v["gpu_arch"] = arch_for_compute_capability(device.cc_major, device.cc_minor);  // what kagent compiles for
  }
  return v;
}

json task_variables(const ProblemSpec& spec, AnswerFormat format, const Baselines& baselines) {
  json v = {{"name", spec.name},
            {"level", spec.level ? json(*spec.level) : json(false)},
            {"source", spec.source},
            {"format_cuda", format == AnswerFormat::Cuda},
            {"format_kernelbench", format == AnswerFormat::KernelBench},
            {"signature", ""},
            {"return_type", ""},
            {"output_is_tuple", spec.output_is_tuple},
            {"torch_version", spec.torch_version}};
  if (format == AnswerFormat::Cuda) {
    v["signature"] = forward_signature(spec);
    v["return_type"] = forward_return_type(spec);
  }
  // Many parameters (a whole model): grouped by module, alike blocks folded, one line each,
  // in place of one line per tensor; a native forward then takes them as one kagent::Params.
  const bool grouped = param_passing(spec) == ParamPassing::Collection;
  v["params_grouped"] = grouped;
  v["params_collection"] = format == AnswerFormat::Cuda && grouped;
  v["params_arg"] = params_arg_name(spec);
  v["param_count"] = spec.params.size();
  size_t buffers = 0;
  for (const auto& a : spec.params) buffers += a.is_buffer;
  v["param_buffers"] = buffers;
  v["param_parameters"] = spec.params.size() - buffers;
  v["param_dtype"] = common_dtype(spec.params);
  v["param_example"] = spec.params.empty() ? "" : spec.params.front().name;
  v["param_lines"] = grouped ? json(param_listing(spec.params)) : json::array();
  json in = json::array(), params = json::array(), outs = json::array();
  for (const auto& a : spec.inputs) in.push_back(arg_json(a));
  if (!grouped)
    for (const auto& a : spec.params) params.push_back(arg_json(a));
  for (size_t i = 0; i < spec.outputs.size(); ++i)
    outs.push_back({{"index", i}, {"dtype", spec.outputs[i].dtype}, {"shape", format_index(spec.outputs[i].shape)}});
  v["inputs"] = in;
  v["has_params"] = !spec.params.empty();
  v["params"] = params;
  v["outputs"] = outs;
  v["baseline_eager_ms"] = baselines.eager_ms ? format_ms(*baselines.eager_ms) : "";
  v["baseline_compile_ms"] = baselines.compile_ms ? format_ms(*baselines.compile_ms) : "";
  v["baselines"] = baselines.eager_ms.has_value() || baselines.compile_ms.has_value();
  return v;
}

json format_error_variables(const FormatError& e, AnswerFormat format) {
  std::string others;
  for (const auto& l : e.other_languages) others += (others.empty() ? "" : ", ") + (l.empty() ? "untagged" : l);
  return {{"kind", e.kind},
          {"no_code", e.kind == format_error::kNoCode},
          {"several_blocks", e.kind == format_error::kSeveralBlocks},
          {"count", e.count},
          {"truncated", e.truncated},
          {"other_languages", others},
          {"language", format == AnswerFormat::Cuda ? "cuda" : "python"},
          {"format_cuda", format == AnswerFormat::Cuda},
          {"format_kernelbench", format == AnswerFormat::KernelBench}};
}

std::string PromptBuilder::system_prompt(AnswerFormat format, const DeviceInfo& device) const {
  return templates_.render(format == AnswerFormat::Cuda ? "system_cuda" : "system_kernelbench",
                           system_variables(format, device));
}

std::string PromptBuilder::task_prompt(const ProblemSpec& spec, AnswerFormat format, const Baselines& b) const {
  return templates_.render("task", task_variables(spec, format, b));
}

std::string PromptBuilder::feedback_prompt(const EvalResult& r, const ProblemSpec* spec,
                                           const FeedbackLimits& limits) const {
  return templates_.render("feedback", feedback_variables(r, spec, limits));
}

std::string PromptBuilder::format_error_prompt(const FormatError& e, AnswerFormat format) const {
  return templates_.render("format_error", format_error_variables(e, format));
}

}  // namespace kagent::prompt
