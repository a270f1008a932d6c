// ProblemSpec: what kagent knows about a KernelBench problem after the worker loaded it.
// Plain data, JSON in and out; the worker derives it, everyone else reads it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kagent {

// How a forward argument travels to a native candidate.
enum class ArgKind { Tensor, Int, Float, Bool, Unsupported };

struct TensorArg {
  std::string name;        // forward parameter name, or state_dict key ("gemm.weight")
  std::string cpp_name;    // C++ identifier: state_dict key with dots as underscores
  ArgKind kind = ArgKind::Tensor;
  std::string dtype;       // torch dtype without the "torch." prefix, e.g. "float32"; empty for scalars
  std::vector<int64_t> shape;
  bool is_buffer = false;  // params only: a registered buffer rather than a parameter
  std::string python_type; // for Unsupported: the Python type name that could not be mapped
};

struct OutputSpec {
  std::string dtype;
  std::vector<int64_t> shape;
};

// A kind of module whose output depends on training vs eval mode, and how many the model has.
struct ModeModule {
  std::string type;  // "BatchNorm2d", "Dropout(p=0.1)", "LSTM(dropout=0.2)"
  int count = 0;
};

struct ProblemSpec {
  std::string name;              // file stem, e.g. "19_ReLU"
  std::string path;              // absolute path of the problem file
  std::string sha256;            // of the file's bytes
  std::optional<int> level;      // from a "levelN" folder in the path, when there is one
  std::vector<TensorArg> inputs; // forward inputs, in order
  std::vector<TensorArg> params; // parameters and buffers, in state_dict order
  std::vector<OutputSpec> outputs;
  bool output_is_tuple = false;  // forward returns a tuple/list (even of one) rather than a tensor
  // The mode the problem file leaves the model in, which the evaluation keeps (nn.Module's
  // default is training: BatchNorm then normalises with batch statistics). nullopt: not recorded.
  std::optional<bool> training;
  std::vector<ModeModule> mode_modules;  // the modules that mode changes, by type
  std::string source;            // the problem file's text (for prompts and reports)
  std::string torch_version;
};

std::string to_string(ArgKind kind);

// One line for reports: "training mode: 104 BatchNorm2d (batch statistics), 2 Dropout(p=0) (no
// effect)"; "" when the spec does not say.
std::string mode_summary(const ProblemSpec& spec);
ArgKind arg_kind_from_string(const std::string& s);

void to_json(nlohmann::json& j, const TensorArg& a);
void from_json(const nlohmann::json& j, TensorArg& a);
void to_json(nlohmann::json& j, const OutputSpec& o);
void from_json(const nlohmann::json& j, OutputSpec& o);
void to_json(nlohmann::json& j, const ModeModule& m);
void from_json(const nlohmann::json& j, ModeModule& m);
void to_json(nlohmann::json& j, const ProblemSpec& s);
void from_json(const nlohmann::json& j, ProblemSpec& s);

}  // namespace kagent
