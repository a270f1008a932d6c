// report_synth: writes a synthetic solve run or collection (synthetic_runs.h) for the report's
// browser test and benchmark.
//   report_synth run DIR [--samples S] [--turns T] [--seed N] [--running R]
//   report_synth collection DIR [--problems N] [--samples S] [--turns T] [--seed N] [--no-metrics] [--running-share X]
//   report_synth verdicts DIR [--policy kernelbench|strict] [--no-metrics]   (verdict_mix_problems)
#include <iostream>

#include <CLI/CLI.hpp>

#include "synthetic_runs.h"

int main(int argc, char** argv) {
  using namespace kagent::report::testing;
  CLI::App app{"synthetic kagent runs and collections for the report's tests and benchmark"};
  app.require_subcommand(1);
  SynthOptions o;
  o.examples_dir = std::string(KAGENT_SOURCE_DIR) + "/examples";
  CollectionOptions c;
  std::string dir, problem = "synthetic_gelu";
  int running = 0;
  bool no_metrics = false;
  for (CLI::App* sub : {app.add_subcommand("run", "one solve run folder"), app.add_subcommand("collection", "a collection folder")}) {
    sub->add_option("dir", dir, "folder to create")->required();
    sub->add_option("--samples", o.samples);
    sub->add_option("--turns", o.turns);
    sub->add_option("--seed", o.seed);
  }
  app.get_subcommand("run")->add_option("--running", running, "samples left in progress");
  app.get_subcommand("run")->add_option("--problem", problem);
  app.get_subcommand("collection")->add_option("--problems", c.problems);
  app.get_subcommand("collection")->add_option("--running-share", c.running);
  app.get_subcommand("collection")->add_flag("--no-metrics", no_metrics);
  std::string policy = "kernelbench";
  CLI::App* verdicts = app.add_subcommand("verdicts", "a small collection whose verdicts differ by policy");
  verdicts->add_option("dir", dir, "folder to create")->required();
  verdicts->add_option("--policy", policy);
  verdicts->add_flag("--no-metrics", no_metrics);
  CLI11_PARSE(app, argc, argv);
  try {
    if (app.got_subcommand("verdicts")) {
      write_collection_of(dir, verdict_mix_problems(), policy, !no_metrics);
    } else if (app.got_subcommand("run")) {
      write_synthetic_run(dir, problem, 1, o, running);
    } else {
      c.metrics = !no_metrics;
      write_synthetic_collection(dir, o, c);
    }
  } catch (const std::exception& e) {
    std::cerr << "report_synth: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
