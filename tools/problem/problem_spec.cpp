#include "problem/problem_spec.h"

#include <stdexcept>

#include "common/json_optional.h"

namespace kagent {

std::string to_string(ArgKind kind) {
  switch (kind) {
    case ArgKind::Tensor: return "tensor";
    case ArgKind::Int: return "int";
    case ArgKind::Float: return "float";
    case ArgKind::Bool: return "bool";
    case ArgKind::Unsupported: return "unsupported";
  }
  return "unsupported";
}

ArgKind arg_kind_from_string(const std::string& s) {
  if (s == "tensor") return ArgKind::Tensor;
  if (s == "int") return ArgKind::Int;
  if (s == "float") return ArgKind::Float;
  if (s == "bool") return ArgKind::Bool;
  return ArgKind::Unsupported;
}

void to_json(nlohmann::json& j, const TensorArg& a) {
  j = {{"name", a.name}, {"cpp_name", a.cpp_name}, {"kind", to_string(a.kind)},
       {"dtype", a.dtype}, {"shape", a.shape}, {"is_buffer", a.is_buffer}};
  if (!a.python_type.empty()) j["python_type"] = a.python_type;
}

void from_json(const nlohmann::json& j, TensorArg& a) {
  a.name = j.at("name").get<std::string>();
  a.cpp_name = j.value("cpp_name", a.name);
  a.kind = arg_kind_from_string(j.value("kind", "tensor"));
  a.dtype = j.value("dtype", "");
  a.shape = j.value("shape", std::vector<int64_t>{});
  a.is_buffer = j.value("is_buffer", false);
  a.python_type = j.value("python_type", "");
}

void to_json(nlohmann::json& j, const OutputSpec& o) { j = {{"dtype", o.dtype}, {"shape", o.shape}}; }

void from_json(const nlohmann::json& j, OutputSpec& o) {
  o.dtype = j.at("dtype").get<std::string>();
  o.shape = j.at("shape").get<std::vector<int64_t>>();
}

std::string mode_summary(const ProblemSpec& spec) {
  if (!spec.training) return "";
  const bool training = *spec.training;
  std::string s = training ? "training mode" : "eval mode";
  if (spec.mode_modules.empty()) return s + " (no module depends on it)";
  s += ": ";
  for (size_t i = 0; i < spec.mode_modules.size(); ++i) {
    const auto& m = spec.mode_modules[i];
    std::string effect;
    if (m.type.find("Norm") != std::string::npos)
      effect = training ? "batch statistics" : "running statistics";
    else if (m.type.find("p=0)") != std::string::npos)
      effect = "no effect";
    else
      effect = training ? "random in every call" : "off";
    s += (i ? ", " : "") + std::to_string(m.count) + " " + m.type + " (" + effect + ")";
  }
  return s;
}

void to_json(nlohmann::json& j, const ModeModule& m) { j = {{"type", m.type}, {"count", m.count}}; }

void from_json(const nlohmann::json& j, ModeModule& m) {
  m.type = j.at("type").get<std::string>();
  m.count = j.value("count", 0);
}

void to_json(nlohmann::json& j, const ProblemSpec& s) {
  j = {{"name", s.name},       {"path", s.path},     {"sha256", s.sha256},
       {"inputs", s.inputs},   {"params", s.params}, {"outputs", s.outputs},
       {"output_is_tuple", s.output_is_tuple},       {"source", s.source},
       {"torch_version", s.torch_version}};
  j["level"] = json_or_null(s.level);
  if (s.training) j["training"] = *s.training;
  j["mode_modules"] = s.mode_modules;
}

void from_json(const nlohmann::json& j, ProblemSpec& s) {
  s.name = j.at("name").get<std::string>();
  s.path = j.value("path", "");
  s.sha256 = j.value("sha256", "");
  if (j.contains("level") && !j["level"].is_null()) s.level = j["level"].get<int>();
  s.inputs = j.value("inputs", std::vector<TensorArg>{});
  s.params = j.value("params", std::vector<TensorArg>{});
  s.outputs = j.value("outputs", std::vector<OutputSpec>{});
  s.output_is_tuple = j.value("output_is_tuple", false);
  s.source = j.value("source", "");
  s.torch_version = j.value("torch_version", "");
  if (j.contains("training") && j["training"].is_boolean()) s.training = j["training"].get<bool>();
  s.mode_modules = j.value("mode_modules", std::vector<ModeModule>{});
}

}  // namespace kagent
