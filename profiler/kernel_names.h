// Kernel names as people read them: demangling, the qualified name without return type and
// parameters, and a short form for tables. Pure C++ (part of kagent_profile_text).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kagent::profiler {

// Itanium demangling; the input unchanged when it is not a mangled name (extern "C" kernels).
std::string demangle(const std::string& mangled);

// "void ns::kern<float, 4>(float const*, int)" -> "ns::kern<float, 4>": no return type, no
// parameter list. "(anonymous namespace)::" stays (it is part of the name); names that are
// not function signatures come back unchanged.
std::string qualified_name(std::string_view demangled);

// A qualified name cut to at most max_chars for a table: "(anonymous namespace)::" dropped,
// then template arguments collapsed to "<...>", then leading scopes dropped ("...::kern<...>"),
// then the tail cut. The full name stays in the profile JSON.
std::string short_kernel_name(std::string_view demangled, size_t max_chars);

// The name a kernel's instantiations share: the qualified name with "(anonymous namespace)::"
// dropped and every template argument list collapsed to "<...>"
// ("at::native::vectorized_elementwise_kernel<...>"). Profiles of whole models group by it.
std::string kernel_family(std::string_view demangled);

}  // namespace kagent::profiler
