#include "compiler/params_header.h"

namespace kagent {

std::string_view params_header_text() {
  return R"cpp(// kagent: <kagent/params.h>, pre-included into the candidate (no #include needed)
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/Exception.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kagent {

// A model's parameters and buffers in state_dict order, addressed by state_dict name:
//   const torch::Tensor& w = params["layer1.0.conv1.weight"];
// Valid for the forward call it is passed to (copy a tensor, a reference count, to keep it).
// Lookups hash the name; a forward that runs often can keep `index_of` results instead.
class Params {
 public:
  // One model's names and an index over them; kagent's entry point makes one per candidate.
  class Names {
   public:
    template <std::size_t N>
    explicit Names(const char* const (&names)[N]) : names_(names), size_(N) {
      index_.reserve(N);
      for (std::size_t i = 0; i < N; ++i) index_.emplace(names[i], i);
    }
    std::size_t size() const { return size_; }
    std::string_view operator[](std::size_t i) const { return names_[i]; }
    const std::size_t* find(std::string_view name) const {
      auto it = index_.find(name);
      return it == index_.end() ? nullptr : &it->second;
    }

   private:
    const char* const* names_;
    std::size_t size_;
    std::unordered_map<std::string_view, std::size_t> index_;
  };

  Params(c10::ArrayRef<at::Tensor> tensors, const Names& names) : tensors_(tensors), names_(&names) {
    TORCH_CHECK(tensors.size() == names.size(), "kagent::Params: ", tensors.size(), " tensors for ", names.size(),
                " names");
  }

  // The tensor of a state_dict entry, e.g. params["fc.weight"]; an unknown name throws.
  const at::Tensor& operator[](std::string_view name) const { return tensors_[index_of(name)]; }
  // The i-th entry in state_dict order.
  const at::Tensor& at(std::size_t i) const {
    TORCH_CHECK_INDEX(i < tensors_.size(), "kagent::Params: index ", i, " out of range (", tensors_.size(),
                      " entries)");
    return tensors_[i];
  }
  std::size_t index_of(std::string_view name) const {
    const std::size_t* i = names_->find(name);
    TORCH_CHECK_INDEX(i != nullptr, "kagent::Params has no entry \"", name, "\"", suggestion(name));
    return *i;
  }
  bool contains(std::string_view name) const { return names_->find(name) != nullptr; }
  std::size_t size() const { return tensors_.size(); }
  std::string_view name(std::size_t i) const { return (*names_)[i]; }
  const at::Tensor* begin() const { return tensors_.begin(); }
  const at::Tensor* end() const { return tensors_.end(); }

 private:
  // " (did you mean ...?)": the entry spelled with underscores for dots, else the longest
  // shared prefix.
  std::string suggestion(std::string_view wanted) const {
    std::size_t best = names_->size(), best_len = 0;
    for (std::size_t i = 0; i < names_->size(); ++i) {
      std::string_view n = (*names_)[i];
      bool same_but_dots = n.size() == wanted.size();
      std::size_t common = 0;
      for (std::size_t k = 0; k < n.size() && k < wanted.size(); ++k) {
        if (same_but_dots && n[k] != wanted[k] && !(n[k] == '.' && wanted[k] == '_')) same_but_dots = false;
        if (common == k && n[k] == wanted[k]) ++common;
      }
      if (same_but_dots) return std::string(" (did you mean \"") + std::string(n) + "\"? names keep their dots)";
      if (common > best_len) best = i, best_len = common;
    }
    if (names_->size() == 0) return "";
    if (best == names_->size()) return " (names are state_dict keys, e.g. \"" + std::string((*names_)[0]) + "\")";
    return " (did you mean \"" + std::string((*names_)[best]) + "\"?)";
  }

  c10::ArrayRef<at::Tensor> tensors_;
  const Names* names_;
};

}  // namespace kagent
)cpp";
}

}  // namespace kagent
