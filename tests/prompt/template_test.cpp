// The prompt template renderer: substitution, sections, lists, errors, loading from a folder.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>


#include "prompt/template.h"
#include "temp_dir.h"

using kagent::prompt::render_template;
using kagent::prompt::TemplateSet;
using nlohmann::json;

TEST_CASE("template: substitution of strings, numbers, bools, null") {
  json v = {{"name", "relu"}, {"n", 42}, {"x", 1.5}, {"ok", true}, {"nothing", nullptr}};
  CHECK(render_template("{{name}} {{ n }} {{x}} {{ok}} [{{nothing}}]", v) == "relu 42 1.5 true []");
  CHECK(render_template("no tags at all", v) == "no tags at all");
  CHECK(render_template("", v) == "");
}

TEST_CASE("template: values are not re-scanned") {
  json v = {{"src", "dim3 g{{n}}; {{#x}}"}};
  CHECK(render_template("<{{src}}>", v) == "<dim3 g{{n}}; {{#x}}>");
}

TEST_CASE("template: sections and inverted sections") {
  json v = {{"yes", true}, {"no", false}, {"empty", ""}, {"text", "t"}, {"zero", 0}};
  CHECK(render_template("{{#yes}}A{{/yes}}{{#no}}B{{/no}}{{#empty}}C{{/empty}}{{#text}}D{{/text}}{{#zero}}E{{/zero}}",
                        v) == "ADE");
  CHECK(render_template("{{^yes}}A{{/yes}}{{^no}}B{{/no}}{{^empty}}C{{/empty}}{{^absent}}D{{/absent}}", v) == "BCD");
  // an absent variable is simply false for a section
  CHECK(render_template("[{{#absent}}{{whatever}}{{/absent}}]", v) == "[]");
  // nested
  CHECK(render_template("{{#yes}}1{{#text}}2{{^no}}3{{/no}}{{/text}}{{/yes}}", v) == "123");
}

TEST_CASE("template: standalone section lines leave no blank lines") {
  json v = {{"a", true}, {"b", false}};
  std::string t = "start\n{{#a}}\nin a\n{{/a}}\n{{#b}}\nin b\n{{/b}}\n  {{! a comment }}\nend\n";
  CHECK(render_template(t, v) == "start\nin a\nend\n");
  // inline tags keep their line
  CHECK(render_template("x {{#a}}y{{/a}} z\n", v) == "x y z\n");
}

TEST_CASE("template: lists and objects") {
  json v = {{"items", json::array({{{"i", 1}, {"s", "a"}}, {{"i", 2}, {"s", "b"}}})},
            {"words", json::array({"x", "y"})},
            {"obj", {{"k", "v"}}},
            {"outer", "O"},
            {"none", json::array()}};
  CHECK(render_template("{{#items}}- {{i}}{{s}}{{outer}}\n{{/items}}", v) == "- 1aO\n- 2bO\n");
  CHECK(render_template("{{#words}}[{{.}}]{{/words}}", v) == "[x][y]");
  CHECK(render_template("{{#obj}}{{k}}{{/obj}}", v) == "v");
  CHECK(render_template("{{#none}}X{{/none}}{{^none}}empty{{/none}}", v) == "empty");
}

TEST_CASE("template: errors name the problem") {
  json v = {{"a", "x"}, {"list", json::array({1})}};
  try {
    (void)render_template("line one\n{{a}} {{missing_var}}", v, "feedback.txt");
    FAIL("expected an error");
  } catch (const std::runtime_error& e) {
    std::string m = e.what();
    CHECK(m.find("missing_var") != std::string::npos);
    CHECK(m.find("feedback.txt") != std::string::npos);
    CHECK(m.find("line 2") != std::string::npos);
  }
  CHECK_THROWS_AS((void)render_template("{{#a}}never closed", v), std::runtime_error);
  CHECK_THROWS_AS((void)render_template("{{#a}}x{{/b}}", v), std::runtime_error);
  CHECK_THROWS_AS((void)render_template("{{/a}}", v), std::runtime_error);
  CHECK_THROWS_AS((void)render_template("{{a", v), std::runtime_error);
  CHECK_THROWS_AS((void)render_template("{{}}", v), std::runtime_error);
  CHECK_THROWS_AS((void)render_template("{{list}}", v), std::runtime_error);
}

TEST_CASE("template: a folder of templates, default and overridden") {
  TemplateSet repo;
  CHECK(repo.dir() == kagent::prompt::default_prompts_dir());
  CHECK(std::filesystem::exists(repo.dir() / "feedback.txt"));

  const kagent::testing::TempDir dir("kagent-prompt-test");
  dir.write("hello.txt", "Hello {{who}}!\n");
  TemplateSet mine(dir.path());
  CHECK(mine.render("hello", {{"who", "GPU"}}) == "Hello GPU!\n");
  CHECK_THROWS_AS((void)mine.text("nope"), std::runtime_error);
  try {
    (void)mine.render("hello", json::object());
    FAIL("expected an error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("who") != std::string::npos);
  }
}
