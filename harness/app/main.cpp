// bench: runs every (formulation, integrator) on a problem, tunes each to its cheapest passing
// setting, verifies, times and prints one comparison table; writes results/<problem>/.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>
#include <spdlog/spdlog.h>

#include "core/formulation.hpp"
#include "problem/element_kinds.hpp"
#include "problem/problem.hpp"
#include "problem/reference_kinds.hpp"
#include "report/compare.hpp"
#include "report/report.hpp"
#include "run/bench_case.hpp"
#include "run/bench_problem.hpp"
#include "run/progress.hpp"
#include "run/reference_setup.hpp"

namespace fs = std::filesystem;
using namespace mbs;

namespace {

constexpr int kExitOk = 0, kExitCaseFailed = 1, kExitBadInput = 2, kExitInterrupted = 130;

// Ctrl-C: finish the current case, then stop without writing results; a second Ctrl-C kills.
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) {
  g_interrupted = 1;
  std::signal(SIGINT, SIG_DFL);
}

std::vector<std::string> problem_names(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string known_formulations() {
  std::vector<std::string> names;
  for (const Formulation* f : Registry::instance().all())
    for (const IntegratorInfo& i : f->integrators()) names.push_back(f->name() + "/" + i.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

void print_list(const std::string& problems_dir) {
  fmt::print("problems ({}):\n", problems_dir);
  for (const std::string& n : problem_names(problems_dir)) {
    try {
      const Problem p = load_problem((fs::path(problems_dir) / (n + ".yaml")).string());
      fmt::print("  {:<28} {}\n", n, p.title);
    } catch (const ProblemError& e) {
      fmt::print("  {:<28} (invalid: {})\n", n, e.what());
    }
  }
  fmt::print("element kinds (problem file section: kind):\n");
  for (const ElementKindInfo* k : ElementKinds::instance().all())
    fmt::print("  {:<24} {}\n", fmt::format("{}: {}", section_of(k->role), k->name), k->summary);
  fmt::print("reference kinds (reference: kind):\n");
  for (const ReferenceKindInfo* k : ReferenceKinds::instance().all()) fmt::print("  {:<24} {}\n", k->name, k->summary);
  fmt::print("formulations (case = formulation/integrator):\n");
  for (const Formulation* f : Registry::instance().all()) {
    fmt::print("  {:<14} {}\n", f->name(), f->description());
    for (const IntegratorInfo& i : f->integrators())
      fmt::print("    {:<26} {} [{} from {:g} to {:g}]\n", f->name() + "/" + i.name, i.description,
                 i.kind == SettingKind::kFixedStep ? "step" : "tol", i.loosest, i.tightest);
  }
}

// Cases selected by --formulation: "all", or a comma list of formulation or formulation/integrator names.
CaseList select_cases(const std::string& spec) {
  CaseList cases;
  std::set<std::string> wanted;
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) wanted.insert(item);
  std::set<std::string> matched;
  for (const Formulation* f : Registry::instance().all())
    for (const IntegratorInfo& i : f->integrators()) {
      const std::string c = f->name() + "/" + i.name;
      if (wanted.count("all") || wanted.count(f->name()) || wanted.count(c)) {
        cases.emplace_back(f, i);
        matched.insert(wanted.count(c) ? c : f->name());
      }
    }
  for (const std::string& w : wanted)
    if (w != "all" && !matched.count(w))
      throw std::invalid_argument(fmt::format("unknown formulation '{}'; known: {}", w, known_formulations()));
  return cases;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mbsbench: which multibody formulation reaches the required accuracy in the least CPU time?"};
  std::string problem_arg, formulation_arg = "all", problems_dir = MBS_SOURCE_DIR "/problems", results_dir = "results";
  std::string compare;
  bool list = false, verbose = false, no_write = false, project_initial_state = false, rebuild_reference = false;
  bool at_baseline_settings = false, quiet = false, no_timing = false;
  double min_time = 0.3, timeout = 0.0;
  std::optional<double> step, tol;
  app.add_option("-p,--problem", problem_arg,
                 "problem name from the problems folder, 'all', or a path to a problem YAML file");
  app.add_option("-f,--formulation", formulation_arg,
                 "'all' (default), or a comma list of formulations or formulation/integrator cases");
  app.add_flag("-l,--list", list, "list problems, formulations and their integrators, then exit");
  app.add_option("--step", step, "run fixed-step cases at this step (s) instead of tuning it")->check(CLI::PositiveNumber);
  app.add_option("--tol", tol, "run adaptive cases at this tolerance instead of tuning it")->check(CLI::PositiveNumber);
  app.add_option("--timeout", timeout,
                 "wall-clock seconds allowed per case (tuning, verification and timing); a case over it "
                 "ends with status error (default: no limit)")
      ->check(CLI::PositiveNumber);
  app.add_option("--min-time", min_time, "CPU seconds spent timing each case (default 0.3)")->check(CLI::PositiveNumber);
  app.add_flag("--no-timing", no_timing,
               "run and score each case once, time nothing (CPU times left empty): for instruction counts "
               "under callgrind (scripts/perf-check), whose repeated timing runs would vary in number");
  app.add_option("--problems-dir", problems_dir, "folder of problem files (default: the source tree's problems/)");
  app.add_option("--results", results_dir, "folder the results are written to (default: ./results)");
  app.add_flag("--no-write", no_write, "print the table only, write no results");
  app.add_option("--compare", compare,
                 "baseline summary.json to compare with (single problem): exit 1 if, and only if, a passing "
                 "case no longer passes, needs >1.25x the steps, or its normalized time grew >3x");
  app.add_flag("--baseline-settings", at_baseline_settings,
               "with --compare: run each case at the baseline's tuned setting instead of tuning it again (a cheap "
               "regression check: status, steps and normalized time at the same setting)");
  app.add_flag("--project-initial-state", project_initial_state,
               "project an initial state that violates the constraints onto them instead of rejecting the file");
  app.add_flag("--rebuild-reference", rebuild_reference,
               "recompute converged references even where results/<problem>/reference/ holds one for this problem file");
  app.add_flag("-v,--verbose", verbose, "log progress and every tuner trial");
  app.add_flag("-q,--quiet", quiet, "no progress line on stderr (shown only when stderr is a terminal)");
  CLI11_PARSE(app, argc, argv);

  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  if (list) {
    print_list(problems_dir);
    return kExitOk;
  }
  if (at_baseline_settings && compare.empty()) {
    std::cerr << "bench: --baseline-settings needs --compare (the baseline whose settings are used)\n";
    return kExitBadInput;
  }
  if (problem_arg.empty()) {
    std::cerr << "bench: --problem is required (see --list for the known problems)\n";
    return kExitBadInput;
  }

  // Problems to run, all loaded (and so validated) before anything runs.
  std::vector<Problem> problems;
  CaseList cases;
  try {
    std::vector<std::string> files;
    if (problem_arg == "all") {
      for (const std::string& n : problem_names(problems_dir)) files.push_back((fs::path(problems_dir) / (n + ".yaml")).string());
    } else if (problem_arg.find('/') != std::string::npos || fs::path(problem_arg).extension() == ".yaml") {
      files.push_back(problem_arg);
    } else {
      const fs::path f = fs::path(problems_dir) / (problem_arg + ".yaml");
      if (!fs::exists(f))
        throw std::invalid_argument(fmt::format("unknown problem '{}'; known: {}", problem_arg,
                                                fmt::join(problem_names(problems_dir), ", ")));
      files.push_back(f.string());
    }
    for (const std::string& f : files) problems.push_back(load_problem(f, LoadOptions{project_initial_state}));
    cases = select_cases(formulation_arg);
  } catch (const std::exception& e) {
    std::cerr << "bench: " << e.what() << "\n";
    return kExitBadInput;
  }
  // References that give positions in time, before anything is timed: a converged one is read from
  // the results folder while the problem file is unchanged, else computed (and stored with the results).
  std::vector<ReferenceSetup> references;
  try {
    for (Problem& p : problems) references.push_back(attach_reference(p, ReferenceOptions{results_dir, rebuild_reference}));
  } catch (const std::exception& e) {
    std::cerr << "bench: " << e.what() << "\n";
    return kExitBadInput;
  }

  std::map<std::string, double> given_settings;  // --baseline-settings: case -> setting
  if (at_baseline_settings) {
    try {
      given_settings = baseline_settings(compare);
    } catch (const std::exception& e) {
      std::cerr << "bench: " << e.what() << "\n";
      return kExitBadInput;
    }
  }
  CaseOptions options;
  options.step = step;
  options.tolerance = tol;
  options.min_time_s = min_time;
  options.timeout_s = timeout;
  options.timed = !no_timing;
  std::signal(SIGINT, on_interrupt);
  int total_cases = 0;
  for (const Problem& p : problems) {
    total_cases += static_cast<int>(cases.size());
    if (p.published_step && !step && !p.analysis)
      for (const auto& c : cases) total_cases += c.second.kind == SettingKind::kFixedStep;
  }
  // --verbose logs every step of the way itself; the status line would interleave with it.
  Progress progress(std::cerr, !quiet && !verbose && isatty(STDERR_FILENO), total_cases);
  options.on_progress = [&progress](const std::string& what) { progress.update(what); };
  BenchOptions bench_options{options, at_baseline_settings, given_settings, [] { return g_interrupted != 0; }};

  int exit_code = kExitOk;
  std::vector<BenchReport> reports;
  for (size_t pi = 0; pi < problems.size(); ++pi) {
    const Problem& problem = problems[pi];
    BenchReport report;
    report.problem = &problem;
    report.reference_note = references[pi].note;
    report.created = utc_now();
    const fs::path rel = fs::path(problem.file).lexically_normal().lexically_relative(MBS_SOURCE_DIR);
    report.problem_file = !rel.empty() && *rel.begin() != ".." ? rel.string() : problem.file;
    report.build = fmt::format("{} {}, Eigen {}.{}.{}", MBS_COMPILER, MBS_BUILD_TYPE, EIGEN_WORLD_VERSION,
                               EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
    if (bench_problem(problem, cases, bench_options, progress, report)) exit_code = kExitCaseFailed;
    progress.clear();
    fmt::print("{}\n", format_table(report));
    if (g_interrupted) {
      std::cerr << fmt::format("bench: interrupted after {} of {} cases of {}; no results written\n",
                               report.rows.size(), cases.size(), problem.name);
      return kExitInterrupted;
    }
    if (!compare.empty()) {
      try {
        std::vector<std::string> selected;
        for (const auto& [f, info] : cases) selected.push_back(f->name() + "/" + info.name);
        const std::vector<std::string> regressions = compare_with_baseline(report, compare, selected);
        for (const std::string& r : regressions) fmt::print("REGRESSION {}\n", r);
        // With a baseline, the comparison is the verdict: cases that failed there too are no news.
        if (regressions.empty()) fmt::print("no regression against {}\n", compare);
        exit_code = regressions.empty() ? kExitOk : kExitCaseFailed;
      } catch (const std::exception& e) {
        std::cerr << "bench: " << e.what() << "\n";
        exit_code = kExitBadInput;
      }
    }
    if (!no_write) {
      try {
        write_results(report, results_dir);
        fmt::print("results written to {}/{}/\n\n", results_dir, problem.name);
      } catch (const std::exception& e) {
        std::cerr << "bench: " << e.what() << "\n";
        exit_code = kExitCaseFailed;
      }
    }
    reports.push_back(std::move(report));
  }
  if (reports.size() > 1) fmt::print("{}\n", format_overview(reports));
  return exit_code;
}
