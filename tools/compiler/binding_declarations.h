// Whether a load_inline extension's C++ part (main.cpp) can be served by a binding shared with
// other answers (shared_binding.h): nearly every real answer's cpp_sources only declares the
// functions that cuda_sources defines, so main.cpp is the same code under other names. This
// reads cpp_sources as tokens, without a compiler: when the text is declarations only and each
// listed function is declared once at global scope, it gives the text with the functions'
// names replaced by slots (kagent_f0, kagent_f1, ... in the order of `functions`) and the
// parameters' names by kagent_p0, ...; answers whose texts come out the same share a binding.
//
// Nothing here decides a verdict: a rename that changed a type would only make the binding's
// mangled names differ from what cuda.cu defines, which the build checks (the symbol test in
// shared_binding.h) before it uses the binding, and then builds main.cpp as before.
#pragma once

#include <string>
#include <vector>

namespace kagent {

struct SharedDeclarations {
  std::string text;     // the normalised declarations (preprocessor lines kept, in order); empty: not shareable
  std::string why_not;  // when text is empty: why main.cpp stays the answer's own
};

// `cpp_sources` as load_inline joins them; `functions` as the call lists them ("name" or
// "op=function").
SharedDeclarations shared_declarations(const std::vector<std::string>& cpp_sources,
                                       const std::vector<std::string>& functions);

// A slot's name in the normalised text.
std::string binding_slot_name(size_t slot);

}  // namespace kagent
