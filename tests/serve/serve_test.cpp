// `kagent serve --compile-only` on loopback, as a trainer uses it: episodes of several turns,
// idempotent retries, stateless and async evaluation, the remote reward, metrics and schema;
// every bad request gets its status and a JSON error while the server keeps serving; and a
// kill -9 mid-step followed by a restart keeps every finished step and reports the cut one.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <thread>

#include "collect_fixtures.h"
#include "serve_process.h"
#include "temp_dir.h"

using namespace kagent::testing;
using nlohmann::json;

namespace {

const std::string kToken = "s3cret-token";

struct Served {
  TempDir dir{"kagent-serve"};
  std::string suite, cache;
  Served() {
    write_tiny_suite(dir, "suite");
    suite = dir.str() + "/suite";
    cache = dir.str() + "/cache";
    // A suite folder of links to problems kept elsewhere (how one serves a subset of KernelBench).
    std::filesystem::create_directories(suite + "/level3");
    std::filesystem::create_symlink(suite + "/level1/1_relu.py", suite + "/level3/9_linked.py");
  }
  std::vector<std::string> env() const { return {"KAGENT_CACHE_DIR=" + cache}; }
};

const std::string kGood = tiny_kernel_answer("v > 0.f ? v : 0.f");
const std::string kBroken = tiny_kernel_answer("v", /*compiles=*/false);
const std::string kNoCode = "I would rather explain it.";

httplib::Result post(httplib::Client& c, const std::string& path, const json& body) {
  return c.Post(path.c_str(), body.dump(), "application/json");
}

json step_body(const std::string& text, const std::string& request_id) {
  return {{"action", {{"text", text}}}, {"request_id", request_id}, {"timeout_s", 600}};
}

double metric(httplib::Client& c, const std::string& name) {
  auto r = c.Get("/metrics");
  REQUIRE(r);
  const auto pos = r->body.find("\n" + name + " ");
  REQUIRE(pos != std::string::npos);
  return std::stod(r->body.substr(pos + name.size() + 2));
}

void check_error(const httplib::Result& r, int status, const std::string& code) {
  REQUIRE(r);
  CHECK(r->status == status);
  const json b = body_of(r);
  REQUIRE(b.is_object());
  CHECK(b["error"]["code"] == code);
  CHECK(b["error"]["message"].is_string());
}

}  // namespace

TEST_CASE("episodes, retries, evaluation, reward, and every bad request answered in JSON") {
  Served s;
  ServeProcess server(s.dir.str(), s.dir.str() + "/data", s.suite, kToken, {"--max-turns", "3"}, s.env());
  REQUIRE_MESSAGE(server.wait_ready(), server.stderr_text());
  auto c = server.client(kToken);

  SUBCASE("a three-turn episode: no code, a kernel that compiles, one that does not; then done") {
    auto r = post(*c, "/v1/episodes", {{"task_id", "1_relu"}, {"seed", 7}});
    REQUIRE(r);
    REQUIRE(r->status == 200);
    const json start = body_of(r);
    const std::string id = start["episode_id"];
    CHECK(start["done"] == false);
    REQUIRE(start["observation"]["messages"].size() == 2);
    CHECK(start["observation"]["messages"][0]["role"] == "system");
    CHECK(start["observation"]["messages"][1]["content"].get<std::string>().find("relu") != std::string::npos);

    const json s1 = body_of(post(*c, "/v1/episodes/" + id + "/step", step_body(kNoCode, "a")));
    CHECK(s1["metadata"]["status"] == "format_error");
    CHECK(s1["reward"] == 0.0);
    CHECK(s1["done"] == false);
    CHECK(s1["observation"]["messages"][0]["role"] == "user");
    const json s2 = body_of(post(*c, "/v1/episodes/" + id + "/step", step_body(kGood, "b")));
    CHECK(s2["metadata"]["compiled"] == true);
    // Compile only: checked, never run; no reward (null), which a trainer tells from a failure's 0.
    CHECK(s2["metadata"]["status"] == "compiled_not_run");
    CHECK(s2["metadata"]["reason"] == "compile_only");
    CHECK(s2["metadata"]["correct"].is_null());
    CHECK(s2["reward"].is_null());
    CHECK(s2["metadata"]["turn"] == 1);
    // The feedback the model reads says the same: compiled, not run (no GPU); no failure to fix.
    const std::string said = s2["observation"]["messages"][0]["content"];
    INFO(said);
    CHECK(said.rfind("# Result: COMPILED_NOT_RUN", 0) == 0);
    CHECK(said.find("Your code compiled, but it was not run") != std::string::npos);
    CHECK(said.find("INTERNAL_ERROR") == std::string::npos);
    CHECK(said.find("failed inside kagent") == std::string::npos);
    CHECK(said.find("Fix the problem") == std::string::npos);
    const json s3 = body_of(post(*c, "/v1/episodes/" + id + "/step", step_body(kBroken, "c")));
    CHECK(s3["metadata"]["status"] == "compile_error");
    CHECK(s3["metadata"]["compiled"] == false);
    CHECK(s3["reward"] == 0.0);  // a failure scores 0
    CHECK(s3["done"] == true);
    CHECK(s3["observation"]["messages"][0]["content"].get<std::string>().find("undeclared_thing") != std::string::npos);

    check_error(post(*c, "/v1/episodes/" + id + "/step", step_body(kGood, "d")), 409, "episode_done");
    const json got = body_of(c->Get(("/v1/episodes/" + id).c_str()));
    CHECK(got["steps"].size() == 3);
    CHECK(got["done"] == true);
    CHECK(got["unfinished"].empty());
    auto del = c->Delete(("/v1/episodes/" + id).c_str());
    REQUIRE(del);
    CHECK(del->status == 200);
    check_error(c->Get(("/v1/episodes/" + id).c_str()), 404, "unknown_episode");
  }

  SUBCASE("a problem linked into the suite is a task under its link's name and folder") {
    for (const char* task : {"level3/9_linked", "9_linked"}) {
      auto r = post(*c, "/v1/episodes", {{"task_id", task}});
      REQUIRE(r);
      CHECK_MESSAGE(r->status == 200, task, ": ", r->body);
    }
  }

  SUBCASE("a retried request_id answers the recorded step without evaluating again") {
    const std::string id = body_of(post(*c, "/v1/episodes", {{"task_id", "level1/2_double"}, {"episode_id", "retry-1"}}))["episode_id"];
    CHECK(id == "retry-1");
    const json first = body_of(post(*c, "/v1/episodes/" + id + "/step", step_body(kGood, "same")));
    const double evaluations = metric(*c, "kagent_serve_evaluations_total");
    const json again = body_of(post(*c, "/v1/episodes/" + id + "/step", step_body(kGood, "same")));
    CHECK(again == first);
    CHECK(metric(*c, "kagent_serve_evaluations_total") == evaluations);
    check_error(post(*c, "/v1/episodes/" + id + "/step", step_body(kNoCode, "same")), 409, "request_id_conflict");
    CHECK(body_of(c->Get(("/v1/episodes/" + id).c_str()))["steps"].size() == 1);
    check_error(post(*c, "/v1/episodes", {{"task_id", "1_relu"}, {"episode_id", "retry-1"}}), 409, "episode_exists");
  }

  SUBCASE("bad requests: each its status and a JSON error, and the server keeps serving") {
    check_error(post(*c, "/v1/episodes/nope/step", step_body(kGood, "x")), 404, "unknown_episode");
    check_error(c->Post("/v1/episodes", std::string("{\"task_id\": "), "application/json"), 400, "malformed_json");
    check_error(post(*c, "/v1/episodes", {{"task_id", "no_such_task"}}), 404, "unknown_task");
    check_error(post(*c, "/v1/episodes", {{"task_id", "1_relu"}, {"max_turns", 0}}), 400, "bad_request");
    check_error(post(*c, "/v1/episodes", {{"task_id", "1_relu"}, {"problem", "/x.py"}}), 400, "bad_request");
    check_error(post(*c, "/v1/episodes", json::array()), 400, "bad_request");
    // An unknown policy, top-level or in a reward object, is the caller's mistake.
    check_error(post(*c, "/v1/episodes", {{"task_id", "1_relu"}, {"policy", "lenient"}}), 400, "bad_request");
    check_error(post(*c, "/v1/episodes", {{"task_id", "1_relu"}, {"reward", {{"name", "kevin"}, {"policy", 3}}}}), 400,
                "bad_request");
    check_error(post(*c, "/v1/evaluate", {{"task_id", "1_relu"}, {"kernel_code", kGood}, {"policy", "lenient"}}), 400,
                "bad_request");
    const std::string big(10u << 20, 'x');
    check_error(c->Post("/v1/episodes", big, "application/json"), 413, "body_too_large");
    auto anonymous = server.client();
    check_error(post(*anonymous, "/v1/episodes", {{"task_id", "1_relu"}}), 401, "missing_token");
    auto wrong = server.client("not-the-token");
    check_error(post(*wrong, "/v1/episodes", {{"task_id", "1_relu"}}), 403, "wrong_token");
    check_error(c->Get("/v1/nothing"), 404, "not_found");
    check_error(c->Get("/v1/results/res-0"), 404, "unknown_result");
    const std::string id = body_of(post(*c, "/v1/episodes", {{"task_id", "1_relu"}, {"max_turns", 1}}))["episode_id"];
    check_error(post(*c, "/v1/episodes/" + id + "/step", {{"action", "text"}}), 400, "bad_request");
    CHECK(body_of(post(*c, "/v1/episodes/" + id + "/step", step_body(kNoCode, "1")))["done"] == true);
    check_error(post(*c, "/v1/episodes/" + id + "/step", step_body(kNoCode, "2")), 409, "episode_done");
    // Still serving.
    auto health = anonymous->Get("/health");
    REQUIRE(health);
    CHECK(health->status == 200);
    auto again = post(*c, "/v1/episodes", {{"task_id", "1_relu"}});
    REQUIRE(again);
    CHECK(again->status == 200);
  }

  SUBCASE("stateless, batch and async evaluation; OpenRLHF's reward; metrics and schema") {
    const std::string code = kGood.substr(kGood.find("#include"), kGood.rfind("```") - kGood.find("#include"));
    const json one = body_of(post(*c, "/v1/evaluate", {{"task_id", "1_relu"}, {"kernel_code", code}}));
    CHECK(one["compiled"] == true);
    CHECK(one["correctness"].is_null());
    CHECK(one["status"] == "compiled_not_run");
    CHECK(one["reward"].is_null());
    // Where the time went: the build's seconds, and the evaluation's phases (none without a GPU).
    CHECK(one["compile_seconds"].is_number());
    CHECK(one["job_seconds"].get<double>() >= 0.0);
    CHECK(one["phase_seconds"].is_object());
    CHECK(one["lock_wait_seconds"] == 0.0);
    // The same answer text the other routes take: a fenced answer's code is evaluated.
    const json fenced = body_of(post(*c, "/v1/evaluate", {{"task_id", "1_relu"}, {"kernel_code", kGood}}));
    INFO(fenced.dump());
    CHECK(fenced["compiled"] == true);
    CHECK(fenced["status"] == "compiled_not_run");
    const json two = body_of(post(*c, "/v1/evaluate", {{"task_id", "1_relu"}, {"kernel_code", kGood + kGood}}));
    CHECK(two["status"] == "format_error");
    CHECK(two["reason"] == "several_blocks");
    const std::string reference = kagent::read_file(s.suite + "/level1/1_relu.py");
    const json batch = body_of(post(*c, "/v1/evaluate/batch",
                                    {{"requests", {{{"reference_code", reference}, {"kernel_code", code}},
                                                   {{"task_id", "1_relu"}, {"kernel_code", "int main("}},
                                                   {{"task_id", "1_relu"}}}}}));
    REQUIRE(batch["results"].size() == 3);
    CHECK(batch["results"][0]["compiled"] == true);
    CHECK(batch["results"][1]["status"] == "compile_error");
    CHECK(batch["results"][2]["error"]["code"] == "bad_request");
    auto queued = post(*c, "/v1/evaluate", {{"task_id", "1_relu"}, {"kernel_code", code}, {"async", true}});
    REQUIRE(queued);
    CHECK(queued->status == 202);
    const std::string rid = body_of(queued)["id"];
    json polled;
    for (int i = 0; i < 600; ++i) {
      polled = body_of(c->Get(("/v1/results/" + rid).c_str()));
      if (polled["status"] == "done") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    CHECK(polled["status"] == "done");
    CHECK(polled["result"]["compiled"] == true);
    const json reward = body_of(post(*c, "/v1/reward", {{"query", {"P:" + kGood, "P:" + kNoCode}}, {"prompts", {"P:", "P:"}},
                                                       {"labels", {"1_relu", "1_relu"}}}));
    REQUIRE(reward["rewards"].size() == 2);
    CHECK(reward["rewards"][0].is_null());  // compile only: compiled, not run, no reward
    CHECK(reward["extra_logs"]["status"][0] == "compiled_not_run");
    CHECK(reward["rewards"][1] == 0.0);     // no code: a failure
    CHECK(reward["extra_logs"]["status"][1] == "format_error");
    check_error(post(*c, "/v1/reward", {{"query", {"a"}}, {"labels", json::array()}}), 400, "bad_request");
    // A mismatch between queries and prompts, and an unknown task: the caller's mistakes, 4xx, never reward 0.
    check_error(post(*c, "/v1/reward", {{"query", {"P:" + kNoCode}}, {"prompts", json::array()}, {"labels", {"1_relu"}}}),
                400, "bad_request");
    check_error(post(*c, "/v1/reward", {{"query", {"P:" + kNoCode, "P:" + kNoCode}}, {"prompts", {"P:"}},
                                        {"labels", {"1_relu", "1_relu"}}}),
                400, "bad_request");
    check_error(post(*c, "/v1/reward", {{"query", {kNoCode, kNoCode}}, {"labels", {"1_relu", "no_such_task"}}}), 404,
                "unknown_task");
    check_error(post(*c, "/v1/evaluate", {{"task_id", "no_such_task"}, {"kernel_code", code}}), 404, "unknown_task");
    auto m = c->Get("/metrics");
    REQUIRE(m);
    CHECK(m->body.find("kagent_serve_evaluate_seconds_bucket{le=\"+Inf\"}") != std::string::npos);
    CHECK(m->body.find("kagent_serve_queue_limit 256") != std::string::npos);
    const json schema = body_of(c->Get("/v1/schema"));
    CHECK(schema["routes"].size() == 11);
    CHECK(schema["limits"]["max_body_bytes"] == 8u << 20);
    // Every status a route answers is listed with it: the evaluating routes' 503s (starting,
    // no_gpu, workers_failed), and the statuses seen above.
    const std::string unavailable = schema["errors"]["503"];
    for (const char* code : {"starting", "no_gpu", "workers_failed"}) CHECK(unavailable.find(code) != std::string::npos);
    for (const auto& route : schema["routes"]) {
      CAPTURE(route["path"]);
      REQUIRE(route["statuses"].contains("200"));
      const bool evaluates = route["method"] == "POST";
      CHECK(route["statuses"].contains("503") == (evaluates || route["path"] == "/health"));
      if (route["statuses"].contains("503")) CHECK(route["statuses"]["503"] == unavailable);
      if (evaluates) CHECK(route["statuses"]["400"].get<std::string>().find("malformed_json") != std::string::npos);
    }
    const auto statuses_of = [&](const std::string& path) {
      for (const auto& route : schema["routes"])
        if (route["path"] == path) return route["statuses"];
      return json();
    };
    CHECK(statuses_of("/v1/reward")["404"] == "unknown_task");
    CHECK(statuses_of("/v1/episodes/{id}/step")["409"] == "episode_done | request_id_conflict");
    CHECK(statuses_of("/v1/evaluate")["429"].get<std::string>().find("queue_full") != std::string::npos);
    bool reward_format = false;
    for (const auto& route : schema["routes"])
      if (route["path"] == "/v1/reward")
        for (const auto& field : route["request"]) reward_format |= field.get<std::string>().rfind("format?", 0) == 0;
    CHECK(reward_format);
  }

  SUBCASE("a KernelBench answer that is not Python scores 0 (as the GPU's runtime_error would), not null") {
    const std::string not_python =
        "Here is ModelNew.\n\n```python\nimport torch\nclass ModelNew(torch.nn.Module:\n    pass\n```\n";
    const std::string id = body_of(post(*c, "/v1/episodes", {{"task_id", "1_relu"}, {"format", "kernelbench"}}))["episode_id"];
    const json step = body_of(post(*c, "/v1/episodes/" + id + "/step", step_body(not_python, "py")));
    INFO(step.dump());
    CHECK(step["reward"] == 0.0);
    CHECK(step["metadata"]["status"] == "runtime_error");
    CHECK(step["metadata"]["message"].get<std::string>().rfind("SyntaxError", 0) == 0);
    CHECK(step["observation"]["messages"][0]["content"].get<std::string>().find("SyntaxError") != std::string::npos);
    const json reward = body_of(post(*c, "/v1/reward", {{"query", {not_python}}, {"labels", {"1_relu"}}, {"format", "kernelbench"}}));
    CHECK(reward["rewards"][0] == 0.0);
    CHECK(reward["extra_logs"]["status"][0] == "runtime_error");
  }
}

TEST_CASE("kill -9 mid-step, then a restart: every finished step readable, the cut one reported; 429 and 503") {
  Served s;
  const std::string data = s.dir.str() + "/data";
  json finished[2];
  std::string id;
  {
    ServeProcess server(s.dir.str(), data, s.suite, "", {"--queue", "1"}, s.env());
    REQUIRE_MESSAGE(server.wait_ready(), server.stderr_text());
    auto c = server.client();
    id = body_of(post(*c, "/v1/episodes", {{"task_id", "1_relu"}, {"max_turns", 4}}))["episode_id"];
    finished[0] = body_of(post(*c, "/v1/episodes/" + id + "/step", step_body(kNoCode, "t0")));
    finished[1] = body_of(post(*c, "/v1/episodes/" + id + "/step", step_body(kBroken, "t1")));
    // A kernel nvcc has never seen: the step is in flight for seconds.
    std::thread inflight([&] {
      auto c2 = server.client();
      (void)post(*c2, "/v1/episodes/" + id + "/step", step_body(tiny_kernel_answer("v * 3.f + 1.f"), "t2"));
    });
    const auto pending = std::filesystem::path(data) / "episodes" / id / "pending.json";
    for (int i = 0; i < 3000 && !std::filesystem::exists(pending); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(std::filesystem::exists(pending));
    // The one place in the queue is taken by that step: the next evaluation is refused, not queued.
    const std::string other = body_of(post(*c, "/v1/episodes", {{"task_id", "2_double"}}))["episode_id"];
    auto full = post(*c, "/v1/episodes/" + other + "/step", step_body(kGood, "o1"));
    check_error(full, 429, "queue_full");
    CHECK(full->get_header_value("Retry-After") == "2");
    check_error(post(*c, "/v1/evaluate", {{"task_id", "1_relu"}, {"kernel_code", "x"}}), 429, "queue_full");
    server.kill(SIGKILL);
    inflight.join();
  }
  ServeProcess restarted(s.dir.str(), data, s.suite, "", {}, s.env());
  // Listening at once, serving episodes only once its workers have started: 503 until then.
  REQUIRE(restarted.wait_ready(std::chrono::seconds(60), /*port_only=*/true));
  auto early = restarted.client()->Post("/v1/episodes", json{{"task_id", "1_relu"}}.dump(), "application/json");
  REQUIRE(early);
  if (early->status == 503) {
    CHECK(body_of(early)["error"]["code"] == "starting");
    CHECK(early->get_header_value("Retry-After") == "5");
  } else {
    CHECK(early->status == 200);
    MESSAGE("the workers started before the first request: 503 not seen");
  }
  REQUIRE_MESSAGE(restarted.wait_ready(), restarted.stderr_text());
  auto c = restarted.client();
  const json got = body_of(c->Get(("/v1/episodes/" + id).c_str()));
  REQUIRE(got["steps"].size() == 2);
  CHECK(got["steps"][0]["response"] == finished[0]);
  CHECK(got["steps"][1]["response"] == finished[1]);
  REQUIRE(got["unfinished"].size() == 1);
  CHECK(got["unfinished"][0]["request_id"] == "t2");
  CHECK(got["unfinished"][0]["state"] == "interrupted");
  CHECK(got["done"] == false);
  // The retry runs it: the episode goes on from where it was.
  const json retried = body_of(post(*c, "/v1/episodes/" + id + "/step", step_body(kNoCode, "t2")));
  CHECK(retried["metadata"]["turn"] == 2);
  const json after = body_of(c->Get(("/v1/episodes/" + id).c_str()));
  CHECK(after["steps"].size() == 3);
  CHECK(after["unfinished"].empty());
}
