// What micro_tensor.h's declarations do, against torch's real headers (tools/compiler/micro/
// README.md). kagent compiles this once per toolchain into its compile cache and links it into
// every answer built with the micro header; each function casts the micro Tensor (the same single
// pointer) to the real at::Tensor and calls torch's own member, so checks, errors and results are
// torch's. Only the kagent_micro:: functions stay global in the object kagent links (objcopy -G);
// the torch inline functions compiled here become local, apart from the answer's own.
#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <new>
#include <sstream>
#include <string>

// The micro header's enum values, checked against torch's.
static_assert(static_cast<int>(c10::ScalarType::Byte) == 0 && static_cast<int>(c10::ScalarType::Char) == 1 &&
              static_cast<int>(c10::ScalarType::Short) == 2 && static_cast<int>(c10::ScalarType::Int) == 3 &&
              static_cast<int>(c10::ScalarType::Long) == 4 && static_cast<int>(c10::ScalarType::Half) == 5 &&
              static_cast<int>(c10::ScalarType::Float) == 6 && static_cast<int>(c10::ScalarType::Double) == 7 &&
              static_cast<int>(c10::ScalarType::Bool) == 11 && static_cast<int>(c10::ScalarType::BFloat16) == 15 &&
              static_cast<int>(c10::ScalarType::UInt16) == 27 && static_cast<int>(c10::ScalarType::UInt32) == 28 &&
              static_cast<int>(c10::ScalarType::UInt64) == 29,
              "micro_tensor.h's ScalarType values differ from this torch's");
static_assert(static_cast<int>(c10::DeviceType::CPU) == 0 && static_cast<int>(c10::DeviceType::CUDA) == 1,
              "micro_tensor.h's DeviceType values differ from this torch's");
static_assert(static_cast<int>(c10::Layout::Strided) == 0, "micro_tensor.h's Layout values differ from this torch's");
static_assert(sizeof(at::Tensor) == sizeof(void*) && alignof(at::Tensor) == alignof(void*),
              "at::Tensor is no longer one pointer: micro_tensor.h's Tensor would not match it");

// The micro header's declarations, spelled with its types: the micro Tensor is an opaque class
// `at::Tensor` there, the real one here, and both are one pointer. The functions below take the
// real types where the micro ones have the same layout (IntArrayRef, Device) and are declared
// with the signatures the header's mangled names need.
namespace kagent_micro {

struct Options {
  bool has_dtype = false, has_device = false, has_layout = false, has_requires_grad = false;
  int8_t dtype = 0, device_type = 0, device_index = -1, layout = 0;
  bool requires_grad = false;
};
enum class Get : int { Numel, Dim, ElementSize, IsContiguous, IsCuda, IsCpu, Defined, ScalarType, GetDevice };
enum class Make : int { Contiguous, Clone, Cuda, Cpu, Zero, Detach };
enum class Shape : int { View, Reshape, Expand, Permute };
enum class Factory : int { Empty, Zeros, Ones };
enum class Like : int { Empty, Zeros, Ones };
enum class Ptr : int { Data, Mutable, Const };

#define KAGENT_MICRO_API __attribute__((visibility("default")))

namespace {
c10::TensorOptions real(const Options& o) {
  c10::TensorOptions t;
  if (o.has_dtype) t = t.dtype(static_cast<c10::ScalarType>(o.dtype));
  if (o.has_device) t = t.device(static_cast<c10::DeviceType>(o.device_type), o.device_index);
  if (o.has_layout) t = t.layout(static_cast<c10::Layout>(o.layout));
  if (o.has_requires_grad) t = t.requires_grad(o.requires_grad);
  return t;
}
Options micro_options(const c10::TensorOptions& t) {
  Options o;
  if (t.has_dtype()) o.has_dtype = true, o.dtype = static_cast<int8_t>(t.dtype().toScalarType());
  if (t.has_device()) o.has_device = true, o.device_type = static_cast<int8_t>(t.device().type()), o.device_index = t.device().index();
  if (t.has_layout()) o.has_layout = true, o.layout = static_cast<int8_t>(t.layout());
  if (t.has_requires_grad()) o.has_requires_grad = true, o.requires_grad = t.requires_grad();
  return o;
}
}  // namespace

KAGENT_MICRO_API std::string scalar_type_name(c10::ScalarType t) { return c10::toString(t); }
KAGENT_MICRO_API std::string type_meta_name(c10::ScalarType t) {
  return std::string(caffe2::TypeMeta::fromScalarType(t).name());
}
KAGENT_MICRO_API std::size_t scalar_type_size(c10::ScalarType t) { return c10::elementSize(t); }
KAGENT_MICRO_API c10::DeviceType parse_device(const std::string& s, c10::DeviceIndex* index) {
  const c10::Device d(s);
  *index = d.index();
  return d.type();
}
KAGENT_MICRO_API std::string device_string(c10::DeviceType t, c10::DeviceIndex index) { return c10::Device(t, index).str(); }
[[noreturn]] KAGENT_MICRO_API void check_failed(const char* func, const char* file, uint32_t line,
                                                const std::string& message) {
  c10::detail::torchCheckFail(func, file, line, message);
}

// TORCH_CHECK's parts under the lean header (no <sstream> there): each one through a stream
// here, so it prints as torch's own message would print it. A null C string prints nothing, as a
// stream does (which then prints nothing more; rare enough not to copy).
namespace {
template <typename T>
void append_streamed(std::string& s, const T& v) {
  std::ostringstream os;
  os << v;
  s += os.str();
}
}  // namespace
KAGENT_MICRO_API void append(std::string& s, const char* p) {
  if (p) s += p;
}
KAGENT_MICRO_API void append(std::string& s, long long v) { append_streamed(s, v); }
KAGENT_MICRO_API void append(std::string& s, unsigned long long v) { append_streamed(s, v); }
KAGENT_MICRO_API void append(std::string& s, double v) { append_streamed(s, v); }
KAGENT_MICRO_API void append(std::string& s, long double v) { append_streamed(s, v); }

KAGENT_MICRO_API void init(at::Tensor* self) noexcept { new (self) at::Tensor(); }
KAGENT_MICRO_API void copy(at::Tensor* self, const at::Tensor& other) noexcept { new (self) at::Tensor(other); }
KAGENT_MICRO_API void move(at::Tensor* self, at::Tensor& other) noexcept { new (self) at::Tensor(std::move(other)); }
KAGENT_MICRO_API void destroy(at::Tensor* self) noexcept { self->~Tensor(); }
KAGENT_MICRO_API void assign(at::Tensor* self, const at::Tensor& other) { *self = other; }
KAGENT_MICRO_API void move_assign(at::Tensor* self, at::Tensor& other) noexcept { *self = std::move(other); }

KAGENT_MICRO_API void* data_ptr(const at::Tensor& self, Ptr kind, int scalar_type) {
  if (scalar_type < 0) {
    switch (kind) {
      case Ptr::Data: return self.data_ptr();
      case Ptr::Mutable: return self.mutable_data_ptr();
      case Ptr::Const: return const_cast<void*>(self.const_data_ptr());
    }
  }
  // torch's typed accessor for the type the answer named: its dtype check and message.
  switch (static_cast<c10::ScalarType>(scalar_type)) {
#define KAGENT_MICRO_TYPED(T, NAME)                                                   \
  case c10::ScalarType::NAME:                                                         \
    switch (kind) {                                                                   \
      case Ptr::Data: return self.data_ptr<T>();                                      \
      case Ptr::Mutable: return self.mutable_data_ptr<T>();                           \
      case Ptr::Const: return const_cast<T*>(self.const_data_ptr<T>());               \
    }                                                                                 \
    break;
    KAGENT_MICRO_TYPED(uint8_t, Byte)
    KAGENT_MICRO_TYPED(int8_t, Char)
    KAGENT_MICRO_TYPED(int16_t, Short)
    KAGENT_MICRO_TYPED(int32_t, Int)
    KAGENT_MICRO_TYPED(int64_t, Long)
    KAGENT_MICRO_TYPED(float, Float)
    KAGENT_MICRO_TYPED(double, Double)
    KAGENT_MICRO_TYPED(bool, Bool)
    KAGENT_MICRO_TYPED(uint16_t, UInt16)
    KAGENT_MICRO_TYPED(uint32_t, UInt32)
    KAGENT_MICRO_TYPED(uint64_t, UInt64)
#undef KAGENT_MICRO_TYPED
    default: break;
  }
  TORCH_CHECK(false, "kagent micro header: data_ptr for scalar type ", scalar_type);
  return nullptr;
}

KAGENT_MICRO_API int64_t get(const at::Tensor& self, Get what) {
  switch (what) {
    case Get::Numel: return self.numel();
    case Get::Dim: return self.dim();
    case Get::ElementSize: return self.element_size();
    case Get::IsContiguous: return self.is_contiguous();
    case Get::IsCuda: return self.is_cuda();
    case Get::IsCpu: return self.is_cpu();
    case Get::Defined: return self.defined();
    case Get::ScalarType: return static_cast<int64_t>(self.scalar_type());
    case Get::GetDevice: return self.get_device();
  }
  TORCH_CHECK(false, "kagent micro header: unknown query");
  return 0;
}
KAGENT_MICRO_API int64_t size(const at::Tensor& self, int64_t dim) { return self.size(dim); }
KAGENT_MICRO_API int64_t stride(const at::Tensor& self, int64_t dim) { return self.stride(dim); }
KAGENT_MICRO_API c10::IntArrayRef sizes(const at::Tensor& self) { return self.sizes(); }
KAGENT_MICRO_API c10::IntArrayRef strides(const at::Tensor& self) { return self.strides(); }
KAGENT_MICRO_API c10::Device device(const at::Tensor& self) { return self.device(); }
KAGENT_MICRO_API Options options(const at::Tensor& self) { return micro_options(self.options()); }

KAGENT_MICRO_API void make(at::Tensor* out, const at::Tensor& self, Make what) {
  switch (what) {
    case Make::Contiguous: *out = self.contiguous(); return;
    case Make::Clone: *out = self.clone(); return;
    case Make::Cuda: *out = self.cuda(); return;
    case Make::Cpu: *out = self.cpu(); return;
    case Make::Zero: self.zero_(); return;
    case Make::Detach: *out = self.detach(); return;
  }
}
KAGENT_MICRO_API void shape(at::Tensor* out, const at::Tensor& self, Shape what, c10::IntArrayRef dims) {
  switch (what) {
    case Shape::View: *out = self.view(dims); return;
    case Shape::Reshape: *out = self.reshape(dims); return;
    case Shape::Expand: *out = self.expand(dims); return;
    case Shape::Permute: *out = self.permute(dims); return;
  }
}
KAGENT_MICRO_API void to(at::Tensor* out, const at::Tensor& self, const Options& options, bool non_blocking, bool copy) {
  *out = self.to(real(options), non_blocking, copy);
}
KAGENT_MICRO_API void copy_(const at::Tensor& self, const at::Tensor& src, bool non_blocking) { self.copy_(src, non_blocking); }
KAGENT_MICRO_API void fill_(const at::Tensor& self, double value) { self.fill_(value); }
KAGENT_MICRO_API void factory(at::Tensor* out, Factory what, c10::IntArrayRef sizes, const Options& options) {
  switch (what) {
    case Factory::Empty: *out = at::empty(sizes, real(options)); return;
    case Factory::Zeros: *out = at::zeros(sizes, real(options)); return;
    case Factory::Ones: *out = at::ones(sizes, real(options)); return;
  }
}
KAGENT_MICRO_API void like(at::Tensor* out, Like what, const at::Tensor& self, const Options& options) {
  switch (what) {
    case Like::Empty: *out = at::empty_like(self, real(options)); return;
    case Like::Zeros: *out = at::zeros_like(self, real(options)); return;
    case Like::Ones: *out = at::ones_like(self, real(options)); return;
  }
}

}  // namespace kagent_micro
