// Code extraction from model answers: one block, none, several, truncated, aliases, size.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "prompt/code_extractor.h"

using namespace kagent::prompt;

TEST_CASE("extract: exactly one cuda block") {
  std::string answer =
      "Here is my kernel.\n\n```cuda\n#include <torch/extension.h>\n__global__ void k() {}\n```\n\nThat's it.\n";
  auto e = extract_code(answer, AnswerFormat::Cuda);
  REQUIRE(e.ok());
  CHECK(e.code->code == "#include <torch/extension.h>\n__global__ void k() {}\n");
  CHECK(e.code->language == "cuda");
  CHECK(e.code->line == 3);
}

TEST_CASE("extract: language aliases, case, info strings, other-language blocks ignored") {
  for (const char* tag : {"cuda", "cu", "cpp", "c++", "CUDA", "Cpp", "cuda:kernel.cu", "cuda {.numberLines}"}) {
    std::string a = std::string("```bash\nnvcc x.cu\n```\n```") + tag + "\nint x;\n```\n";
    auto e = extract_code(a, AnswerFormat::Cuda);
    CAPTURE(tag);
    REQUIRE(e.ok());
    CHECK(e.code->code == "int x;\n");
  }
  for (const char* tag : {"python", "py", "Python"}) {
    std::string a = std::string("```") + tag + "\nclass ModelNew: pass\n```";
    auto e = extract_code(a, AnswerFormat::KernelBench);
    REQUIRE(e.ok());
    CHECK(e.code->code == "class ModelNew: pass\n");
  }
  // a python block is not a cuda answer
  auto e = extract_code("```python\nx = 1\n```\n", AnswerFormat::Cuda);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error->kind == format_error::kNoCode);
  REQUIRE(e.error->other_languages.size() == 1);
  CHECK(e.error->other_languages[0] == "python");
}

TEST_CASE("extract: no block") {
  auto e = extract_code("I think the kernel should use shared memory.", AnswerFormat::Cuda);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error->kind == "no_code");
  CHECK(e.error->count == 0);
  CHECK_FALSE(e.error->truncated);
  CHECK_FALSE(extract_code("", AnswerFormat::KernelBench).ok());
}

TEST_CASE("extract: several blocks") {
  std::string a = "```cuda\nint a;\n```\ntext\n```cu\nint b;\n```\n```cpp\nint c;\n```\n";
  auto e = extract_code(a, AnswerFormat::Cuda);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error->kind == "several_blocks");
  CHECK(e.error->count == 3);
}

TEST_CASE("extract: unterminated fence at the end is no_code, truncated") {
  auto e = extract_code("Let me write it.\n```cuda\n__global__ void k() {\n  int i = thr", AnswerFormat::Cuda);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error->kind == "no_code");
  CHECK(e.error->truncated);
  CHECK(e.error->message.find("truncated") != std::string::npos);
  CHECK(e.error->message.find("line 2") != std::string::npos);
}

TEST_CASE("extract: fences inside a block, longer fences, CRLF, tildes") {
  // a 4-backtick fence holds a 3-backtick line
  auto e = extract_code("````cuda\n// ```\nint x;\n````\n", AnswerFormat::Cuda);
  REQUIRE(e.ok());
  CHECK(e.code->code == "// ```\nint x;\n");
  auto crlf = extract_code("intro\r\n```cuda\r\nint y;\r\n```\r\n", AnswerFormat::Cuda);
  REQUIRE(crlf.ok());
  CHECK(crlf.code->code == "int y;\n");
  auto tilde = extract_code("~~~python\nimport torch\n~~~\n", AnswerFormat::KernelBench);
  REQUIRE(tilde.ok());
  CHECK(tilde.code->code == "import torch\n");
  // inline ``` in prose is not a fence
  auto inl = extract_code("Use ```cuda``` blocks.\n```cuda\nint z;\n```", AnswerFormat::Cuda);
  REQUIRE(inl.ok());
  CHECK(inl.code->code == "int z;\n");
}

TEST_CASE("extract: a 1 MB answer in linear time") {
  std::string prose;
  while (prose.size() < (1u << 20)) prose += "Thinking about tiles, warps and shared memory bank conflicts.\n";
  std::string code;
  while (code.size() < (1u << 20)) code += "  acc += a[i] * b[i];\n";
  std::string answer = prose + "```cuda\n" + code + "```\n" + prose;
  auto t0 = std::chrono::steady_clock::now();
  auto e = extract_code(answer, AnswerFormat::Cuda);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(e.ok());
  CHECK(e.code->code == code);
  CHECK(s < 0.5);
  // one huge line without any newline, and many fences
  std::string fences;
  for (int i = 0; i < 20000; ++i) fences += "```bash\nls\n```\n";
  t0 = std::chrono::steady_clock::now();
  auto f = extract_code(std::string(2u << 20, 'x') + "\n" + fences, AnswerFormat::Cuda);
  s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK_FALSE(f.ok());
  CHECK(f.error->other_languages.size() == 1);  // distinct tags
  CHECK(s < 0.5);
}
