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
#include "run/sweep.hpp"

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
  bool list_cases = false, merge = false, allow_missing = false, retime = false;
  std::string case_arg, partials_dir;
  int jobs = 1;
  double min_time = 0.3, timeout = 0.0;
  int min_samples = 7;
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
  app.add_option("--min-samples", min_samples,
                 "timed samples of each case at least, whatever --min-time (default 7; the regression tests take 1: "
                 "a case of seconds a run then costs 2 runs, not 8)")
      ->check(CLI::Range(1, 1000));
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
  app.add_flag("--list-cases", list_cases,
               "print one self-contained command per case of --problem (and --formulation), for GNU parallel or a "
               "Slurm array; computes a missing converged reference first and stores it with the partials");
  app.add_option("--case", case_arg,
                 "run one case, PROBLEM:FORMULATION/INTEGRATOR, and write its partial summary to "
                 "<partials>/<problem>/ instead of results (combine them with --merge)");
  app.add_flag("--merge", merge,
               "combine the partial summaries of --problem's cases (--formulation's selection) into the results "
               "folder, written whole as by a serial run; a missing or incompatible partial is an error (exit 2)");
  app.add_flag("--allow-missing", allow_missing, "with --merge: merge the cases whose partial exists, list the others");
  app.add_flag("--retime", retime,
               "with --merge: time every row again serially in this process (the calibration kernel first), for "
               "timings as honest as a serial run's");
  app.add_option("--partials", partials_dir, "folder of partial summaries (default: <results>/.partials)");
  app.add_option("-j,--jobs", jobs,
                 "run the cases in N processes at once on this machine (tuning and verification), then time them "
                 "serially in this process (default 1: all in this process)")
      ->check(CLI::PositiveNumber);
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
  // Sweeps: one of --list-cases, --case, --merge, --jobs N (> 1).
  const int sweep_modes = list_cases + !case_arg.empty() + merge + (jobs > 1);
  if (sweep_modes > 1) {
    std::cerr << "bench: --list-cases, --case, --merge and --jobs are different ways to run; give one of them\n";
    return kExitBadInput;
  }
  if ((allow_missing || retime) && !merge) {
    std::cerr << "bench: --allow-missing and --retime go with --merge\n";
    return kExitBadInput;
  }
  if (sweep_modes && at_baseline_settings) {
    std::cerr << "bench: --baseline-settings runs in one process; not with --list-cases, --case, --merge or --jobs\n";
    return kExitBadInput;
  }
  if ((list_cases || !case_arg.empty()) && !compare.empty()) {
    std::cerr << "bench: --compare needs the whole run; use it with --merge\n";
    return kExitBadInput;
  }
  if (!case_arg.empty()) {
    try {
      const CaseSpec spec = parse_case_spec(case_arg);
      if (!problem_arg.empty() && problem_arg != spec.problem)
        throw SweepError(fmt::format("--case '{}' is for problem '{}', but --problem is '{}'", case_arg, spec.problem, problem_arg));
      if (formulation_arg != "all" && formulation_arg != spec.case_name)
        throw SweepError(fmt::format("--case '{}' names its case; --formulation '{}' cannot select another", case_arg, formulation_arg));
      if (spec.problem == "all") throw SweepError(fmt::format("--case '{}': one problem, not 'all'", case_arg));
      problem_arg = spec.problem;
      formulation_arg = spec.case_name;
    } catch (const SweepError& e) {
      std::cerr << "bench: " << e.what() << "\n";
      return kExitBadInput;
    }
  }
  if (partials_dir.empty()) partials_dir = (fs::path(results_dir) / ".partials").string();
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
  // A sweep's cases look in the partials folder first, where --list-cases (or the first case) stores a
  // reference it had to compute, so that the cases do not each compute it.
  std::vector<ReferenceSetup> references;
  try {
    for (Problem& p : problems) {
      const bool stored_with_partials = fs::exists(converged_reference_path(partials_dir, p.name));
      const bool sweep = sweep_modes > 0;
      references.push_back(attach_reference(
          p, ReferenceOptions{sweep && stored_with_partials && !rebuild_reference ? partials_dir : results_dir,
                              rebuild_reference}));
      if (sweep && !merge && references.back().computed) store_reference(p, partials_dir);
    }
  } catch (const std::exception& e) {
    std::cerr << "bench: " << e.what() << "\n";
    return kExitBadInput;
  }

  // The command a case runs as: the same options that change results, paths made absolute.
  const auto case_argv = [&](const Problem& p, const std::string& case_name, const std::string& partials, bool timed) {
    std::error_code ec;
    const fs::path exe = fs::canonical("/proc/self/exe", ec);
    const bool by_path = problem_arg != "all" && (problem_arg.find('/') != std::string::npos ||
                                                  fs::path(problem_arg).extension() == ".yaml");
    std::vector<std::string> a{exe.string(), "--case",
                               (by_path ? fs::absolute(p.file).lexically_normal().string() : p.name) + ":" + case_name};
    if (!by_path) a.insert(a.end(), {"--problems-dir", fs::absolute(problems_dir).lexically_normal().string()});
    a.insert(a.end(), {"--results", fs::absolute(results_dir).lexically_normal().string(), "--partials",
                       fs::absolute(partials).lexically_normal().string()});
    if (timed) a.insert(a.end(), {"--min-time", fmt::format("{:g}", min_time), "--min-samples", std::to_string(min_samples)});
    else a.push_back("--no-timing");
    if (timeout > 0) a.insert(a.end(), {"--timeout", fmt::format("{:g}", timeout)});
    if (step) a.insert(a.end(), {"--step", fmt::format("{}", *step)});
    if (tol) a.insert(a.end(), {"--tol", fmt::format("{}", *tol)});
    if (project_initial_state) a.push_back("--project-initial-state");
    a.push_back("-q");
    return a;
  };
  if (list_cases) {
    for (const Problem& p : problems)
      for (const auto& [f, info] : sweep_cases(p, cases))
        fmt::print("{}\n", shell_join(case_argv(p, f->name() + "/" + info.name, partials_dir, !no_timing)));
    return kExitOk;
  }
  // What a partial records, and a merge requires of every partial (the options: of each other).
  const auto fingerprint = [&](const Problem& p, bool timed) {
    SweepFingerprint f;
    f.problem_hash = problem_key(p);
    f.build = fmt::format("{} {}, Eigen {}.{}.{}", MBS_COMPILER, MBS_BUILD_TYPE, EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
                          EIGEN_MINOR_VERSION);
    f.build_id = executable_id();
    f.options = fmt::format("{}; timeout {}; step {}; tol {}; project initial state {}",
                            timed ? fmt::format("timed for {:g} s, {} samples at least", min_time, min_samples) : std::string("not timed"),
                            timeout > 0 ? fmt::format("{:g} s", timeout) : std::string("none"),
                            step ? fmt::format("{}", *step) : std::string("tuned"),
                            tol ? fmt::format("{}", *tol) : std::string("tuned"), project_initial_state ? "yes" : "no");
    f.reference = reference_fingerprint(p);
    f.host = host_description();
    return f;
  };

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
  options.min_samples = min_samples;
  options.timeout_s = timeout;
  options.timed = !no_timing;
  std::signal(SIGINT, on_interrupt);
  int total_cases = 0;
  for (const Problem& p : problems) {
    total_cases += static_cast<int>(cases.size());
    if (p.published_step && !step && !p.analysis)
      for (const auto& c : cases) total_cases += c.second.kind == SettingKind::kFixedStep;
  }
  // Sweeps: --jobs shows its children as one step; the serial timing (--jobs, --merge --retime) re-runs every case.
  const bool retimed = (jobs > 1 && !no_timing) || (merge && retime);
  if (jobs > 1 || merge) total_cases = static_cast<int>(problems.size()) * (jobs > 1) + total_cases * retimed;
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
    if (merge || jobs > 1) {
      // The rows come from partial summaries: --merge reads them, --jobs first runs them as children.
      MergeOptions mo;
      mo.partials_dir = partials_dir;
      mo.allow_missing = allow_missing;
      mo.expected = fingerprint(problem, false);
      std::string private_dir;
      try {
        if (jobs > 1) {
          private_dir = (fs::path(partials_dir) / fmt::format(".jobs-{}", ::getpid())).string();
          fs::create_directories(fs::path(private_dir) / problem.name);
          store_reference(problem, private_dir);
          std::vector<ChildCase> children;
          for (const auto& [f, info] : sweep_cases(problem, cases)) {
            const std::string c = f->name() + "/" + info.name;
            children.push_back(ChildCase{c, case_argv(problem, c, private_dir, false),
                                         partial_path(private_dir, problem.name, c) + ".log"});
          }
          progress.begin_case(problem.name, fmt::format("{} cases in {} processes", children.size(), jobs));
          const std::vector<std::string> bad = run_children(children, jobs, [] { return g_interrupted != 0; });
          progress.end_case();
          if (g_interrupted) {
            std::cerr << fmt::format("bench: interrupted; no results written (the cases' logs: {})\n", private_dir);
            return kExitInterrupted;
          }
          if (!bad.empty())
            throw SweepError(fmt::format("{} case(s) did not complete: {} (their logs: {}/{}/*.log)", bad.size(),
                                         fmt::join(bad, ", "), private_dir, problem.name));
          mo.partials_dir = private_dir;
        }
        const MergeResult merged = merge_partials(problem, cases, mo, report);
        const bool timed_serially = (jobs > 1 && !no_timing) || (merge && retime);
        if (timed_serially) retime_serially(problem, cases, options, progress, report);
        if (jobs > 1) {
          report.sweep = fmt::format("cases tuned and verified in {} processes at once (--jobs {}); {}", jobs, jobs,
                                     no_timing ? "not timed" : "timed afterwards one after another in one process, "
                                                               "the calibration kernel first, as a serial run");
        } else {
          report.sweep = fmt::format("merged from {} partial summaries (bench --merge) run on {}; ", merged.partials,
                                     fmt::join(merged.hosts, "; "));
          report.sweep += timed_serially ? "timed again one after another in one process (--retime), the calibration kernel first"
                          : merged.timed ? "each row timed in its own process and normalized by the calibration kernel "
                                           "timed in that process; timings taken while other cases ran in parallel are "
                                           "noisier than a serial run's (--retime times them serially)"
                                         : "not timed";
          if (!merged.missing.empty()) report.sweep += fmt::format("; cases missing: {}", fmt::join(merged.missing, ", "));
        }
        if (!private_dir.empty()) fs::remove_all(private_dir);
      } catch (const std::exception& e) {
        progress.clear();
        std::cerr << "bench: " << e.what() << "\n";
        return kExitBadInput;
      }
      if (has_failed_rows(report)) exit_code = kExitCaseFailed;
    } else if (bench_problem(problem, cases, bench_options, progress, report)) {
      exit_code = kExitCaseFailed;
    }
    progress.clear();
    fmt::print("{}\n", format_table(report));
    if (!report.sweep.empty()) fmt::print("sweep: {}\n\n", report.sweep);
    if (!case_arg.empty() && !g_interrupted) {  // one case: its partial summary, no results folder
      const std::string path = partial_path(partials_dir, problem.name, formulation_arg);
      try {
        write_partial(report, formulation_arg, fingerprint(problem, !no_timing), path);
        fmt::print("partial summary written to {}\n", path);
      } catch (const std::exception& e) {
        std::cerr << "bench: " << e.what() << "\n";
        return kExitBadInput;
      }
      continue;
    }
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
