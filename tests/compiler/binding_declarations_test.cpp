// Which cpp_sources a shared binding can serve, and the normalised text answers share it by:
// names of the listed functions and of their parameters replaced, everything else kept.
#include <doctest/doctest.h>

#include "compiler/binding_declarations.h"

using namespace kagent;

TEST_CASE("two answers that declare the same function under other names share one text") {
  const auto a = shared_declarations({"torch::Tensor diag_matmul_cuda(torch::Tensor A, torch::Tensor B);"},
                                     {"diag_matmul_cuda"});
  const auto b = shared_declarations({"// the launcher\ntorch::Tensor  matmul_symmetric_cuda(\n  torch::Tensor a,"
                                      " torch::Tensor b); /* defined in cuda.cu */"},
                                     {"matmul_symmetric_cuda"});
  REQUIRE(a.why_not.empty());
  REQUIRE(b.why_not.empty());
  CHECK(a.text == "torch :: Tensor kagent_f0 ( torch :: Tensor kagent_p0 , torch :: Tensor kagent_p1 );\n");
  CHECK(a.text == b.text);
}

TEST_CASE("types stay exact: at:: and torch:: differ, modifiers and unnamed parameters are kept") {
  const auto torch_ns = shared_declarations({"torch::Tensor f(torch::Tensor x);"}, {"f"});
  const auto at_ns = shared_declarations({"at::Tensor f(at::Tensor x);"}, {"f"});
  CHECK(torch_ns.text != at_ns.text);
  // `const Tensor` (no name), `unsigned long`, `const std::vector<int64_t>& sizes`, a default.
  const auto d = shared_declarations(
      {"#include <vector>\nusing torch::Tensor;\nTensor g(const Tensor, unsigned long, const std::vector<int64_t>& "
       "sizes, std::tuple<int, int> stride, float eps = 1e-5f, int64_t n = (1 << 3));"},
      {"g"});
  REQUIRE(d.why_not.empty());
  CHECK(d.text ==
        "#include <vector>\nusing torch :: Tensor;\nTensor kagent_f0 ( const Tensor , unsigned long , const std :: "
        "vector < int64_t > & kagent_p0 , std :: tuple < int , int > kagent_p1 , float kagent_p2 = 1e-5f , int64_t "
        "kagent_p3 = ( 1 < < 3 ) );\n");
}

TEST_CASE("slots follow the order of `functions`; an op=function entry names the function") {
  const auto d = shared_declarations({"torch::Tensor fwd(torch::Tensor x);\nvoid bwd(torch::Tensor g, double s);"},
                                     {"backward=bwd", "fwd"});
  REQUIRE(d.why_not.empty());
  CHECK(d.text == "torch :: Tensor kagent_f1 ( torch :: Tensor kagent_p0 );\nvoid kagent_f0 ( torch :: Tensor "
                  "kagent_p0 , double kagent_p1 );\n");
}

TEST_CASE("what a shared binding does not serve, with the reason") {
  auto why = [](std::vector<std::string> cpp, std::vector<std::string> fns) {
    const auto d = shared_declarations(cpp, fns);
    CHECK(d.text.empty());
    return d.why_not;
  };
  CHECK(why({"torch::Tensor f(torch::Tensor x) { return x; }"}, {"f"}).find("body") != std::string::npos);
  CHECK(why({"namespace ops { torch::Tensor f(torch::Tensor x); }"}, {"f"}).find("block") != std::string::npos);
  CHECK(why({"torch::Tensor f(torch::Tensor x);\ntorch::Tensor f(torch::Tensor x, double s);"}, {"f"})
            .find("2 times") != std::string::npos);
  CHECK(why({"torch::Tensor g(torch::Tensor x);"}, {"f"}).find("0 times") != std::string::npos);
  CHECK(why({"static torch::Tensor f(torch::Tensor x);"}, {"f"}).find("static") != std::string::npos);
  CHECK(why({"torch::Tensor f(torch::Tensor (*g)(torch::Tensor));"}, {"f"}).find("function pointer") !=
        std::string::npos);
  CHECK(why({"#define f other\ntorch::Tensor f(torch::Tensor x);"}, {"f"}).find("preprocessor") != std::string::npos);
  CHECK(why({"auto f(torch::Tensor x) -> torch::Tensor;"}, {"f"}) != "");
  CHECK(why({"torch::Tensor f(torch::Tensor x);\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m)"}, {"f"}) != "");
  CHECK(why({"const char* s = R\"(x)\";\ntorch::Tensor f(torch::Tensor x);"}, {"f"}).find("raw string") !=
        std::string::npos);
  CHECK(why({"torch::Tensor ops::f(torch::Tensor x);"}, {"f"}).find("global scope") != std::string::npos);
  CHECK(why({"torch::Tensor f(torch::Tensor x)"}, {"f"}).find("ends inside") != std::string::npos);
  CHECK(why({"torch::Tensor f(torch::Tensor x);"}, {}).find("no functions") != std::string::npos);
}
