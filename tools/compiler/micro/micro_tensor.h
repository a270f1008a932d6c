// kagent's micro <torch/extension.h> (ShimTier::Micro, tools/compiler/micro/README.md): at::Tensor
// and the few things load_inline answers' CUDA code uses of torch (a Tensor's sizes and data,
// its options, empty/zeros/ones and their _like forms, TORCH_CHECK), declared without one torch
// header. nvcc's two front ends spend 70% of a slim compile in c10's headers; here they parse
// only the standard library.
//
// The Tensor is torch's own object: one pointer (c10::intrusive_ptr<TensorImpl>), passed and
// returned exactly as at::Tensor is, so the shared binding (compiled against real torch) calls
// an answer's functions as it always did. Every member and function calls kagent_micro::*,
// defined in micro_support.cpp, which kagent compiles once against the real headers and links
// into the answer's library: each does what torch's own member does, with torch's checks and
// messages. Whatever an answer uses beyond this file fails to compile here, and the answer is
// built again with the slim header, as before this tier existed.
#pragma once
// A system header, as torch's are (-isystem): warnings inside it are not the answer's.
#pragma GCC system_header

// What the header needs, and what answers take for granted after torch's headers (std::min,
// printf, std::vector): cheap to parse. The rest of what it included before (streams, <functional>,
// <memory>, containers) doubled cudafe++'s and cicc's time on every answer; an answer whose code
// names any of it gets the shim that defines KAGENT_MICRO_FULL_STD first (micro_header.h,
// micro_needs_full_std), and with it what the header included before.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iosfwd>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>
#ifdef KAGENT_MICRO_FULL_STD
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#endif

namespace c10 {

// Values are c10's (micro_support.cpp checks each against the real enum when it is built).
enum class ScalarType : int8_t {
  Byte = 0,
  Char = 1,
  Short = 2,
  Int = 3,
  Long = 4,
  Half = 5,
  Float = 6,
  Double = 7,
  Bool = 11,
  BFloat16 = 15,
  UInt16 = 27,
  UInt32 = 28,
  UInt64 = 29,
};
constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kUInt16 = ScalarType::UInt16;
constexpr ScalarType kUInt32 = ScalarType::UInt32;
constexpr ScalarType kUInt64 = ScalarType::UInt64;

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
using DeviceIndex = int8_t;

enum class Layout : int8_t { Strided = 0 };
constexpr Layout kStrided = Layout::Strided;

}  // namespace c10

namespace kagent_micro {
// A TensorOptions as it crosses to micro_support.cpp: which fields are set, and their values.
struct Options {
  bool has_dtype = false, has_device = false, has_layout = false, has_requires_grad = false;
  int8_t dtype = 0, device_type = 0, device_index = -1, layout = 0;
  bool requires_grad = false;
};
std::string scalar_type_name(c10::ScalarType t);
std::string type_meta_name(c10::ScalarType t);  // caffe2::TypeMeta's name: "double", not "Double"
std::size_t scalar_type_size(c10::ScalarType t);
c10::DeviceType parse_device(const std::string& s, c10::DeviceIndex* index);
std::string device_string(c10::DeviceType t, c10::DeviceIndex index);
[[noreturn]] void check_failed(const char* func, const char* file, uint32_t line, const std::string& message);
}  // namespace kagent_micro

namespace c10 {

inline std::string toString(ScalarType t) { return kagent_micro::scalar_type_name(t); }
// The stream operators are templates: <iosfwd> declares the streams, and an answer that prints
// includes what defines them.
template <class C, class R>
std::basic_ostream<C, R>& operator<<(std::basic_ostream<C, R>& os, ScalarType t) { return os << kagent_micro::scalar_type_name(t); }
inline std::size_t elementSize(ScalarType t) { return kagent_micro::scalar_type_size(t); }

struct Device {
  /* implicit */ Device(DeviceType type, DeviceIndex index = -1) : type_(type), index_(index) {}
  /* implicit */ Device(const std::string& s) { type_ = kagent_micro::parse_device(s, &index_); }
  DeviceType type() const noexcept { return type_; }
  DeviceIndex index() const noexcept { return index_; }
  bool has_index() const noexcept { return index_ != -1; }
  bool is_cuda() const noexcept { return type_ == DeviceType::CUDA; }
  bool is_cpu() const noexcept { return type_ == DeviceType::CPU; }
  bool operator==(const Device& o) const noexcept { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const noexcept { return !(*this == o); }
  std::string str() const { return kagent_micro::device_string(type_, index_); }

 private:
  DeviceType type_;
  DeviceIndex index_ = -1;
};
template <class C, class R>
std::basic_ostream<C, R>& operator<<(std::basic_ostream<C, R>& os, const Device& d) { return os << d.str(); }

template <typename T>
class ArrayRef {
 public:
  using iterator = const T*;
  using const_iterator = const T*;
  using value_type = T;
  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T& one) : data_(&one), length_(1) {}
  constexpr ArrayRef(const T* data, std::size_t length) : data_(data), length_(length) {}
  constexpr ArrayRef(const T* begin, const T* end) : data_(begin), length_(end - begin) {}
  template <typename A>
  ArrayRef(const std::vector<T, A>& v) : data_(v.data()), length_(v.size()) {}
  template <std::size_t N>
  constexpr ArrayRef(const std::array<T, N>& a) : data_(a.data()), length_(N) {}
  template <std::size_t N>
  constexpr ArrayRef(const T (&a)[N]) : data_(a), length_(N) {}
  constexpr ArrayRef(const std::initializer_list<T>& v)
      : data_(v.begin() == v.end() ? nullptr : v.begin()), length_(v.size()) {}
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + length_; }
  constexpr const T* data() const { return data_; }
  constexpr std::size_t size() const { return length_; }
  constexpr bool empty() const { return length_ == 0; }
  constexpr const T& front() const { return data_[0]; }
  constexpr const T& back() const { return data_[length_ - 1]; }
  constexpr const T& operator[](std::size_t i) const { return data_[i]; }
  const T& at(std::size_t i) const {
    if (i >= length_) kagent_micro::check_failed(__func__, __FILE__, __LINE__, "ArrayRef: invalid index");
    return data_[i];
  }
  std::vector<T> vec() const { return std::vector<T>(data_, data_ + length_); }
  bool equals(ArrayRef o) const { return length_ == o.length_ && std::equal(begin(), end(), o.begin()); }

 private:
  const T* data_ = nullptr;
  std::size_t length_ = 0;
};
template <typename T, class C, class R>
std::basic_ostream<C, R>& operator<<(std::basic_ostream<C, R>& os, ArrayRef<T> list) {
  os << "[";
  for (std::size_t i = 0; i < list.size(); ++i) os << (i ? ", " : "") << list[i];
  return os << "]";
}
template <typename T>
bool operator==(ArrayRef<T> a, ArrayRef<T> b) { return a.equals(b); }
template <typename T>
bool operator!=(ArrayRef<T> a, ArrayRef<T> b) { return !a.equals(b); }
using IntArrayRef = ArrayRef<int64_t>;

}  // namespace c10

namespace caffe2 {
// What Tensor::dtype() returns: here only its scalar type.
class TypeMeta {
 public:
  static TypeMeta fromScalarType(c10::ScalarType t) { return TypeMeta(t); }
  c10::ScalarType toScalarType() const noexcept { return type_; }
  std::size_t itemsize() const { return kagent_micro::scalar_type_size(type_); }
  std::string name() const { return kagent_micro::type_meta_name(type_); }
  friend bool operator==(TypeMeta a, TypeMeta b) noexcept { return a.type_ == b.type_; }
  friend bool operator!=(TypeMeta a, TypeMeta b) noexcept { return a.type_ != b.type_; }

 private:
  explicit TypeMeta(c10::ScalarType t) : type_(t) {}
  c10::ScalarType type_;
};
template <class C, class R>
std::basic_ostream<C, R>& operator<<(std::basic_ostream<C, R>& os, TypeMeta m) { return os << m.name(); }
}  // namespace caffe2

namespace c10 {
inline bool operator==(ScalarType t, caffe2::TypeMeta m) { return m.toScalarType() == t; }
inline bool operator!=(ScalarType t, caffe2::TypeMeta m) { return m.toScalarType() != t; }
inline bool operator==(caffe2::TypeMeta m, ScalarType t) { return m.toScalarType() == t; }
inline bool operator!=(caffe2::TypeMeta m, ScalarType t) { return m.toScalarType() != t; }

struct TensorOptions {
  TensorOptions() = default;
  /* implicit */ TensorOptions(ScalarType t) { set_dtype(t); }
  /* implicit */ TensorOptions(caffe2::TypeMeta m) : TensorOptions(m.toScalarType()) {}
  /* implicit */ TensorOptions(Device d) { set_device(d); }
  /* implicit */ TensorOptions(DeviceType t) : TensorOptions(Device(t)) {}
  /* implicit */ TensorOptions(Layout l) { set_layout(l); }

  TensorOptions dtype(ScalarType t) const noexcept {
    TensorOptions r = *this;
    r.set_dtype(t);
    return r;
  }
  TensorOptions dtype(caffe2::TypeMeta m) const noexcept { return dtype(m.toScalarType()); }
  template <typename... Args>
  TensorOptions device(Args&&... args) const {
    TensorOptions r = *this;
    r.set_device(Device(std::forward<Args>(args)...));
    return r;
  }
  TensorOptions layout(Layout l) const noexcept {
    TensorOptions r = *this;
    r.set_layout(l);
    return r;
  }
  TensorOptions requires_grad(bool b = true) const noexcept {
    TensorOptions r = *this;
    r.o_.has_requires_grad = true;
    r.o_.requires_grad = b;
    return r;
  }
  bool has_dtype() const noexcept { return o_.has_dtype; }
  bool has_device() const noexcept { return o_.has_device; }
  // torch's defaults where a field is unset: float, the CPU, strided.
  caffe2::TypeMeta dtype() const noexcept { return caffe2::TypeMeta::fromScalarType(o_.has_dtype ? static_cast<ScalarType>(o_.dtype) : kFloat); }
  Device device() const noexcept { return o_.has_device ? Device(static_cast<DeviceType>(o_.device_type), o_.device_index) : Device(kCPU); }
  bool requires_grad() const noexcept { return o_.has_requires_grad && o_.requires_grad; }
  const kagent_micro::Options& kagent_fields() const noexcept { return o_; }
  static TensorOptions kagent_from(const kagent_micro::Options& o) {
    TensorOptions r;
    r.o_ = o;
    return r;
  }

 private:
  void set_dtype(ScalarType t) {
    o_.has_dtype = true;
    o_.dtype = static_cast<int8_t>(t);
  }
  void set_layout(Layout l) {
    o_.has_layout = true;
    o_.layout = static_cast<int8_t>(l);
  }
  void set_device(Device d) {
    o_.has_device = true;
    o_.device_type = static_cast<int8_t>(d.type());
    o_.device_index = d.index();
  }
  kagent_micro::Options o_;
};
inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions dtype(caffe2::TypeMeta m) { return TensorOptions().dtype(m); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions device_index(DeviceIndex i) { return TensorOptions().device(DeviceType::CUDA, i); }
inline TensorOptions layout(Layout l) { return TensorOptions().layout(l); }
inline TensorOptions requires_grad(bool b = true) { return TensorOptions().requires_grad(b); }

}  // namespace c10

namespace at {
using namespace c10;  // NOLINT: at::ScalarType, at::kFloat, at::IntArrayRef, ... as ATen has them
class Tensor;
}  // namespace at

namespace kagent_micro {
// What a Tensor member asks of micro_support.cpp (one function each way keeps the surface small).
enum class Get : int { Numel, Dim, ElementSize, IsContiguous, IsCuda, IsCpu, Defined, ScalarType, GetDevice };
enum class Make : int { Contiguous, Clone, Cuda, Cpu, Zero, Detach };
enum class Shape : int { View, Reshape, Expand, Permute };
enum class Factory : int { Empty, Zeros, Ones };
enum class Like : int { Empty, Zeros, Ones };
enum class Ptr : int { Data, Mutable, Const };

void init(at::Tensor* self) noexcept;
void copy(at::Tensor* self, const at::Tensor& other) noexcept;
void move(at::Tensor* self, at::Tensor& other) noexcept;
void destroy(at::Tensor* self) noexcept;
void assign(at::Tensor* self, const at::Tensor& other);
void move_assign(at::Tensor* self, at::Tensor& other) noexcept;
void* data_ptr(const at::Tensor& self, Ptr kind, int scalar_type);  // scalar_type -1: untyped
int64_t get(const at::Tensor& self, Get what);
int64_t size(const at::Tensor& self, int64_t dim);
int64_t stride(const at::Tensor& self, int64_t dim);
c10::IntArrayRef sizes(const at::Tensor& self);
c10::IntArrayRef strides(const at::Tensor& self);
c10::Device device(const at::Tensor& self);
Options options(const at::Tensor& self);
void make(at::Tensor* out, const at::Tensor& self, Make what);
void shape(at::Tensor* out, const at::Tensor& self, Shape what, c10::IntArrayRef dims);
void to(at::Tensor* out, const at::Tensor& self, const Options& options, bool non_blocking, bool copy);
void copy_(const at::Tensor& self, const at::Tensor& src, bool non_blocking);
void fill_(const at::Tensor& self, double value);
void factory(at::Tensor* out, Factory what, c10::IntArrayRef sizes, const Options& options);
void like(at::Tensor* out, Like what, const at::Tensor& self, const Options& options);

// The scalar type of data_ptr<T>; a T torch has no data_ptr<T> for (const T included: torch's link
// fails there) is left undefined, an error here.
template <typename T>
struct scalar_type_of;
template <> struct scalar_type_of<uint8_t> { static constexpr c10::ScalarType value = c10::kByte; };
template <> struct scalar_type_of<int8_t> { static constexpr c10::ScalarType value = c10::kChar; };
template <> struct scalar_type_of<int16_t> { static constexpr c10::ScalarType value = c10::kShort; };
template <> struct scalar_type_of<int32_t> { static constexpr c10::ScalarType value = c10::kInt; };
template <> struct scalar_type_of<int64_t> { static constexpr c10::ScalarType value = c10::kLong; };
template <> struct scalar_type_of<float> { static constexpr c10::ScalarType value = c10::kFloat; };
template <> struct scalar_type_of<double> { static constexpr c10::ScalarType value = c10::kDouble; };
template <> struct scalar_type_of<bool> { static constexpr c10::ScalarType value = c10::kBool; };
template <> struct scalar_type_of<uint16_t> { static constexpr c10::ScalarType value = c10::kUInt16; };
template <> struct scalar_type_of<uint32_t> { static constexpr c10::ScalarType value = c10::kUInt32; };
template <> struct scalar_type_of<uint64_t> { static constexpr c10::ScalarType value = c10::kUInt64; };

// TORCH_CHECK's message: torch's default when none is given, else its parts streamed in turn.
inline std::string check_message(const char* condition) {
  return std::string("Expected ") + condition +
         " to be true, but got false.  (Could this error message be improved?  If so, please report an "
         "enhancement request to PyTorch.)";
}
#ifdef KAGENT_MICRO_FULL_STD
template <typename... A>
std::string check_message(const char*, const A&... parts) {
  std::ostringstream os;
  (void)std::initializer_list<int>{((void)(os << parts), 0)...};
  return os.str();
}
#else
// Without <sstream>: each part appended as an ostream prints it (micro_support.cpp formats the
// numbers with the stream's defaults). A part of any other type does not compile here, and the
// answer is built with the slim header, whose message is torch's.
void append(std::string& s, const char* p);
void append(std::string& s, long long v);
void append(std::string& s, unsigned long long v);
void append(std::string& s, double v);
void append(std::string& s, long double v);
inline void append(std::string& s, const std::string& v) { s += v; }
inline void append(std::string& s, std::string_view v) { s += v; }
// The character types print as characters, as on a stream.
inline void append(std::string& s, char c) { s += c; }
inline void append(std::string& s, signed char c) { s += static_cast<char>(c); }
inline void append(std::string& s, unsigned char c) { s += static_cast<char>(c); }
inline void append(std::string& s, float v) { append(s, static_cast<double>(v)); }
template <typename T>
constexpr bool kPrintsAsNumber = std::is_integral_v<T> && !std::is_same_v<T, char> && !std::is_same_v<T, signed char> &&
                                 !std::is_same_v<T, unsigned char> && !std::is_same_v<T, wchar_t> &&
                                 !std::is_same_v<T, char16_t> && !std::is_same_v<T, char32_t>;
template <typename T, std::enable_if_t<kPrintsAsNumber<T>, int> = 0>
void append(std::string& s, T v) {
  if constexpr (std::is_signed_v<T>)
    append(s, static_cast<long long>(v));
  else
    append(s, static_cast<unsigned long long>(v));
}
inline void append(std::string& s, c10::ScalarType t) { s += scalar_type_name(t); }
inline void append(std::string& s, const c10::Device& d) { s += d.str(); }
inline void append(std::string& s, caffe2::TypeMeta m) { s += m.name(); }
template <typename T>
void append(std::string& s, c10::ArrayRef<T> list) {
  s += '[';
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i) s += ", ";
    append(s, list[i]);
  }
  s += ']';
}
template <typename... A>
std::string check_message(const char*, const A&... parts) {
  std::string s;
  (void)std::initializer_list<int>{((void)append(s, parts), 0)...};
  return s;
}
#endif
}  // namespace kagent_micro

namespace at {

class Tensor {
 public:
  Tensor() noexcept { kagent_micro::init(this); }
  Tensor(const Tensor& other) noexcept { kagent_micro::copy(this, other); }
  Tensor(Tensor&& other) noexcept { kagent_micro::move(this, other); }
  ~Tensor() { kagent_micro::destroy(this); }
  Tensor& operator=(const Tensor& other) & {
    kagent_micro::assign(this, other);
    return *this;
  }
  Tensor& operator=(Tensor&& other) & noexcept {
    kagent_micro::move_assign(this, other);
    return *this;
  }

  template <typename T>
  T* data_ptr() const {
    return static_cast<T*>(kagent_micro::data_ptr(*this, kagent_micro::Ptr::Data, static_cast<int>(kagent_micro::scalar_type_of<T>::value)));
  }
  template <typename T>
  T* mutable_data_ptr() const {
    return static_cast<T*>(kagent_micro::data_ptr(*this, kagent_micro::Ptr::Mutable, static_cast<int>(kagent_micro::scalar_type_of<T>::value)));
  }
  template <typename T>
  const T* const_data_ptr() const {
    return static_cast<const T*>(kagent_micro::data_ptr(*this, kagent_micro::Ptr::Const, static_cast<int>(kagent_micro::scalar_type_of<T>::value)));
  }
  void* data_ptr() const { return kagent_micro::data_ptr(*this, kagent_micro::Ptr::Data, -1); }
  void* mutable_data_ptr() const { return kagent_micro::data_ptr(*this, kagent_micro::Ptr::Mutable, -1); }
  const void* const_data_ptr() const { return kagent_micro::data_ptr(*this, kagent_micro::Ptr::Const, -1); }

  int64_t size(int64_t dim) const { return kagent_micro::size(*this, dim); }
  IntArrayRef sizes() const { return kagent_micro::sizes(*this); }
  int64_t stride(int64_t dim) const { return kagent_micro::stride(*this, dim); }
  IntArrayRef strides() const { return kagent_micro::strides(*this); }
  int64_t numel() const { return kagent_micro::get(*this, kagent_micro::Get::Numel); }
  int64_t dim() const { return kagent_micro::get(*this, kagent_micro::Get::Dim); }
  int64_t ndimension() const { return dim(); }
  int64_t element_size() const { return kagent_micro::get(*this, kagent_micro::Get::ElementSize); }
  bool is_contiguous() const { return kagent_micro::get(*this, kagent_micro::Get::IsContiguous) != 0; }
  bool is_cuda() const { return kagent_micro::get(*this, kagent_micro::Get::IsCuda) != 0; }
  bool is_cpu() const { return kagent_micro::get(*this, kagent_micro::Get::IsCpu) != 0; }
  bool defined() const { return kagent_micro::get(*this, kagent_micro::Get::Defined) != 0; }
  ScalarType scalar_type() const { return static_cast<ScalarType>(kagent_micro::get(*this, kagent_micro::Get::ScalarType)); }
  caffe2::TypeMeta dtype() const { return caffe2::TypeMeta::fromScalarType(scalar_type()); }
  Device device() const { return kagent_micro::device(*this); }
  int64_t get_device() const { return kagent_micro::get(*this, kagent_micro::Get::GetDevice); }
  TensorOptions options() const { return TensorOptions::kagent_from(kagent_micro::options(*this)); }

  Tensor contiguous() const { return made(kagent_micro::Make::Contiguous); }
  Tensor clone() const { return made(kagent_micro::Make::Clone); }
  Tensor cuda() const { return made(kagent_micro::Make::Cuda); }
  Tensor cpu() const { return made(kagent_micro::Make::Cpu); }
  Tensor detach() const { return made(kagent_micro::Make::Detach); }
  const Tensor& zero_() const {
    kagent_micro::make(nullptr, *this, kagent_micro::Make::Zero);
    return *this;
  }
  const Tensor& fill_(double value) const {
    kagent_micro::fill_(*this, value);
    return *this;
  }
  const Tensor& copy_(const Tensor& src, bool non_blocking = false) const {
    kagent_micro::copy_(*this, src, non_blocking);
    return *this;
  }
  Tensor view(IntArrayRef dims) const { return shaped(kagent_micro::Shape::View, dims); }
  Tensor reshape(IntArrayRef dims) const { return shaped(kagent_micro::Shape::Reshape, dims); }
  Tensor expand(IntArrayRef dims) const { return shaped(kagent_micro::Shape::Expand, dims); }
  Tensor permute(IntArrayRef dims) const { return shaped(kagent_micro::Shape::Permute, dims); }
  Tensor to(TensorOptions options, bool non_blocking = false, bool copy = false) const {
    Tensor out;
    kagent_micro::to(&out, *this, options.kagent_fields(), non_blocking, copy);
    return out;
  }
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false) const {
    return to(TensorOptions(dtype), non_blocking, copy);
  }

 private:
  Tensor made(kagent_micro::Make what) const {
    Tensor out;
    kagent_micro::make(&out, *this, what);
    return out;
  }
  Tensor shaped(kagent_micro::Shape what, IntArrayRef dims) const {
    Tensor out;
    kagent_micro::shape(&out, *this, what, dims);
    return out;
  }
  void* impl_;  // torch's c10::intrusive_ptr<TensorImpl>: only micro_support.cpp touches it
};

// The factories: each one call of micro_support.cpp's (its kind names torch's function).
inline Tensor kagent_made(kagent_micro::Factory what, IntArrayRef sizes, const TensorOptions& options) {
  Tensor out;
  kagent_micro::factory(&out, what, sizes, options.kagent_fields());
  return out;
}
inline Tensor kagent_made_like(kagent_micro::Like what, const Tensor& self, const TensorOptions& options) {
  Tensor out;
  kagent_micro::like(&out, what, self, options.kagent_fields());
  return out;
}
inline Tensor empty(IntArrayRef sizes, TensorOptions options = {}) { return kagent_made(kagent_micro::Factory::Empty, sizes, options); }
inline Tensor zeros(IntArrayRef sizes, TensorOptions options = {}) { return kagent_made(kagent_micro::Factory::Zeros, sizes, options); }
inline Tensor ones(IntArrayRef sizes, TensorOptions options = {}) { return kagent_made(kagent_micro::Factory::Ones, sizes, options); }
inline Tensor empty_like(const Tensor& self, TensorOptions options = {}) { return kagent_made_like(kagent_micro::Like::Empty, self, options); }
inline Tensor zeros_like(const Tensor& self, TensorOptions options = {}) { return kagent_made_like(kagent_micro::Like::Zeros, self, options); }
inline Tensor ones_like(const Tensor& self, TensorOptions options = {}) { return kagent_made_like(kagent_micro::Like::Ones, self, options); }

}  // namespace at

// torch's TORCH_CHECK: an `if` whose failure throws c10::Error (through torch's own
// torchCheckFail) with the same message.
#define TORCH_CHECK(cond, ...)                                                                           \
  if (!(cond)) {                                                                                         \
    ::kagent_micro::check_failed(__func__, __FILE__, static_cast<uint32_t>(__LINE__),                   \
                                 ::kagent_micro::check_message(#cond, ##__VA_ARGS__));                   \
  }
