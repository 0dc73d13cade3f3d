// bench: runs every (formulation, integrator) on a problem, tunes each to its cheapest passing
// setting, verifies, times and prints one comparison table; writes results/<problem>/.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unistd.h>
#include <spdlog/spdlog.h>

#include "core/cancellation.hpp"
#include "core/formulation.hpp"
#include "problem/element_kinds.hpp"
#include "problem/problem.hpp"
#include "problem/reference_kinds.hpp"
#include "report/report.hpp"
#include "results/compare.hpp"
#include "results/merge.hpp"
#include "results/partial.hpp"
#include "run/bench_case.hpp"
#include "run/bench_problem.hpp"
#include "run/progress.hpp"
#include "run/children.hpp"
#include "run/reference_setup.hpp"
#include "run/sweep.hpp"
#include "run/watchdog.hpp"

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
    fmt::print("  {:<14} {}{}\n", f->name(), f->description(),
               f->origin() == FormulationOrigin::kEngine ? " [an engine's own code, adapted: docs/engines.md]" : "");
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

// The command line, as given.
struct Options {
  std::string problem, formulation = "all", problems_dir = MBS_SOURCE_DIR "/problems", results_dir = "results";
  std::string compare, case_spec, partials_dir;
  bool list = false, verbose = false, no_write = false, project_initial_state = false, rebuild_reference = false;
  bool at_baseline_settings = false, quiet = false, no_timing = false;
  bool list_cases = false, merge = false, allow_missing = false, retime = false;
  int jobs = 1;
  double min_time = 0.3, timeout = 0.0;
  int min_samples = 7;
  std::optional<double> step, tol;

  // The sweep modes: one of --list-cases, --case, --merge, --jobs N (> 1).
  int sweep_modes() const { return list_cases + !case_spec.empty() + merge + (jobs > 1); }
  // The rows come from partial summaries: --merge reads them, --jobs first runs them as children.
  bool from_partials() const { return merge || jobs > 1; }
  // Sweeps time every row again serially, in this process (--jobs, --merge --retime).
  bool retimed() const { return (jobs > 1 && !no_timing) || (merge && retime); }
  bool problem_by_path() const {
    return problem != "all" && (problem.find('/') != std::string::npos || fs::path(problem).extension() == ".yaml");
  }
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("-p,--problem", o.problem, "problem name from the problems folder, 'all', or a path to a problem YAML file");
  app.add_option("-f,--formulation", o.formulation,
                 "'all' (default), or a comma list of formulations or formulation/integrator cases");
  app.add_flag("-l,--list", o.list, "list problems, formulations and their integrators, then exit");
  app.add_option("--step", o.step, "run fixed-step cases at this step (s) instead of tuning it")->check(CLI::PositiveNumber);
  app.add_option("--tol", o.tol, "run adaptive cases at this tolerance instead of tuning it")->check(CLI::PositiveNumber);
  app.add_option("--timeout", o.timeout,
                 "wall-clock seconds allowed per case (set-up, tuning trials, verification and timing); a case "
                 "over it ends with status error, naming the phase; reading each problem file gets the same budget "
                 "(exit 1 when it is spent) (default: no limit)")
      ->check(CLI::PositiveNumber);
  app.add_option("--min-time", o.min_time, "CPU seconds spent timing each case (default 0.3)")->check(CLI::PositiveNumber);
  app.add_option("--min-samples", o.min_samples,
                 "timed samples of each case at least, whatever --min-time (default 7; the regression tests take 1: "
                 "a case of seconds a run then costs 2 runs, not 8)")
      ->check(CLI::Range(1, 1000));
  app.add_flag("--no-timing", o.no_timing,
               "run and score each case once, time nothing (CPU times left empty): for instruction counts "
               "under callgrind (scripts/perf-check), whose repeated timing runs would vary in number");
  app.add_option("--problems-dir", o.problems_dir, "folder of problem files (default: the source tree's problems/)");
  app.add_option("--results", o.results_dir, "folder the results are written to (default: ./results)");
  app.add_flag("--no-write", o.no_write, "print the table only, write no results");
  app.add_option("--compare", o.compare,
                 "baseline summary.json to compare with (one problem), checked before anything runs (exit 2 if "
                 "unreadable, of another problem, or inside the results folder this run would replace); prints each "
                 "row's steps and normalized time as ratios to the baseline's and the rows either side lacks; exit 1 "
                 "if, and only if, a passing case (not a control) no longer passes, needs >1.25x the steps, or its "
                 "normalized time grew >3x");
  app.add_flag("--baseline-settings", o.at_baseline_settings,
               "with --compare: run each case at the baseline's tuned setting instead of tuning it again (a cheap "
               "regression check: status, steps and normalized time at the same setting)");
  app.add_flag("--project-initial-state", o.project_initial_state,
               "project an initial state that violates the constraints onto them instead of rejecting the file");
  app.add_flag("--rebuild-reference", o.rebuild_reference,
               "recompute converged references even where results/<problem>/reference/ holds one for this problem file");
  app.add_flag("-v,--verbose", o.verbose, "log progress and every tuner trial");
  app.add_flag("-q,--quiet", o.quiet, "no progress line on stderr (shown only when stderr is a terminal)");
  app.add_flag("--list-cases", o.list_cases,
               "print one self-contained command per case of --problem (and --formulation), for GNU parallel or a "
               "Slurm array; computes a missing converged reference first and stores it with the partials");
  app.add_option("--case", o.case_spec,
                 "run one case, PROBLEM:FORMULATION/INTEGRATOR, and write its partial summary to "
                 "<partials>/<problem>/ instead of results (combine them with --merge)");
  app.add_flag("--merge", o.merge,
               "combine the partial summaries of --problem's cases (--formulation's selection) into the results "
               "folder, written whole as by a serial run; a missing or incompatible partial is an error (exit 2)");
  app.add_flag("--allow-missing", o.allow_missing, "with --merge: merge the cases whose partial exists, list the others");
  app.add_flag("--retime", o.retime,
               "with --merge: time every row again serially in this process (the calibration kernel first), for "
               "timings as honest as a serial run's");
  app.add_option("--partials", o.partials_dir, "folder of partial summaries (default: <results>/.partials)");
  app.add_option("-j,--jobs", o.jobs,
                 "run the cases in N processes at once on this machine (tuning and verification), then time them "
                 "serially in this process (default 1: all in this process)")
      ->check(CLI::PositiveNumber);
}

// Options that do not go together, and --case resolved into --problem and --formulation. Throws
// std::invalid_argument (exit 2) with the message.
void check_options(Options& o) {
  auto refuse = [](const char* why) { throw std::invalid_argument(why); };
  if (o.at_baseline_settings && o.compare.empty()) refuse("--baseline-settings needs --compare (the baseline whose settings are used)");
  if (o.sweep_modes() > 1) refuse("--list-cases, --case, --merge and --jobs are different ways to run; give one of them");
  if ((o.allow_missing || o.retime) && !o.merge) refuse("--allow-missing and --retime go with --merge");
  if (o.sweep_modes() && o.at_baseline_settings)
    refuse("--baseline-settings runs in one process; not with --list-cases, --case, --merge or --jobs");
  if ((o.list_cases || !o.case_spec.empty()) && !o.compare.empty()) refuse("--compare needs the whole run; use it with --merge");
  if (!o.case_spec.empty()) {
    const CaseSpec spec = parse_case_spec(o.case_spec);
    if (!o.problem.empty() && o.problem != spec.problem)
      throw SweepError(fmt::format("--case '{}' is for problem '{}', but --problem is '{}'", o.case_spec, spec.problem, o.problem));
    if (o.formulation != "all" && o.formulation != spec.case_name)
      throw SweepError(fmt::format("--case '{}' names its case; --formulation '{}' cannot select another", o.case_spec, o.formulation));
    if (spec.problem == "all") throw SweepError(fmt::format("--case '{}': one problem, not 'all'", o.case_spec));
    o.problem = spec.problem;
    o.formulation = spec.case_name;
  }
  if (o.partials_dir.empty()) o.partials_dir = (fs::path(o.results_dir) / ".partials").string();
  if (o.problem.empty()) refuse("--problem is required (see --list for the known problems)");
}

// What a run works on: the problems, all loaded (and so validated) before anything runs, the cases
// selected, and each problem's reference trajectory.
struct Session {
  std::vector<Problem> problems;
  CaseList cases;
  std::vector<ReferenceSetup> references;
  std::optional<Summary> baseline;  // --compare's, read and checked before anything runs
};

// --compare: the baseline read and checked first (a bad one costs no run), and never written over:
// a run that would replace the folder holding it is refused. Throws std::invalid_argument (exit 2).
Summary check_baseline(const Options& o, const std::vector<Problem>& problems) {
  if (problems.size() != 1)
    throw std::invalid_argument(fmt::format("--compare takes one problem (its baseline is one problem's summary.json), not {}",
                                            problems.size()));
  const Problem& p = problems.front();
  Summary base;
  try {
    base = read_baseline(o.compare, p.name);
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("--compare: {}", e.what()));
  }
  if (!o.no_write && o.case_spec.empty()) {
    std::error_code ec;
    const fs::path folder = fs::weakly_canonical(fs::path(o.results_dir) / p.name, ec);
    const fs::path rel = fs::weakly_canonical(o.compare, ec).lexically_relative(folder);
    if (!rel.empty() && *rel.begin() != "..")
      throw std::invalid_argument(fmt::format(
          "--compare {}: the baseline lies in {}/, which this run would replace with its own results, so the baseline "
          "would be lost; compare with --no-write, write elsewhere with --results DIR, or copy the baseline out first",
          o.compare, (fs::path(o.results_dir) / p.name).string()));
  }
  return base;
}

Session load_session(const Options& o) {
  Session s;
  std::vector<std::string> files;
  if (o.problem == "all") {
    for (const std::string& n : problem_names(o.problems_dir)) files.push_back((fs::path(o.problems_dir) / (n + ".yaml")).string());
  } else if (o.problem_by_path()) {
    files.push_back(o.problem);
  } else {
    const fs::path f = fs::path(o.problems_dir) / (o.problem + ".yaml");
    if (!fs::exists(f))
      throw std::invalid_argument(fmt::format("unknown problem '{}'; known: {}", o.problem, fmt::join(problem_names(o.problems_dir), ", ")));
    files.push_back(f.string());
  }
  for (const std::string& f : files) {
    const Watchdog watchdog(o.timeout);  // --timeout bounds reading a file too
    try {
      s.problems.push_back(load_problem(f, LoadOptions{o.project_initial_state}));
    } catch (const Cancelled&) {
      throw PreparationTimedOut(fmt::format("{}: reading the problem took more than --timeout {:g} s; nothing was run", f, o.timeout));
    }
  }
  s.cases = select_cases(o.formulation);
  if (!o.compare.empty()) s.baseline = check_baseline(o, s.problems);
  // References that give positions in time, before anything is timed: a converged one is read from
  // the results folder while the problem file is unchanged, else computed (and stored with the results).
  // A sweep's cases look in the partials folder first, where --list-cases (or the first case) stores a
  // reference it had to compute, so that the cases do not each compute it.
  for (Problem& p : s.problems) {
    const bool stored_with_partials = fs::exists(converged_reference_path(o.partials_dir, p.name));
    const bool sweep = o.sweep_modes() > 0;
    s.references.push_back(attach_reference(
        p, ReferenceOptions{sweep && stored_with_partials && !o.rebuild_reference ? o.partials_dir : o.results_dir,
                            o.rebuild_reference, o.timeout}));
    if (sweep && !o.merge && s.references.back().computed) store_reference(p, o.partials_dir);
  }
  return s;
}

// The command a case runs as: the same options that change results, paths made absolute.
std::vector<std::string> case_argv(const Options& o, const Problem& p, const std::string& case_name, const std::string& partials,
                                   bool timed) {
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  const bool by_path = o.problem_by_path();
  std::vector<std::string> a{exe.string(), "--case", (by_path ? fs::absolute(p.file).lexically_normal().string() : p.name) + ":" + case_name};
  if (!by_path) a.insert(a.end(), {"--problems-dir", fs::absolute(o.problems_dir).lexically_normal().string()});
  a.insert(a.end(), {"--results", fs::absolute(o.results_dir).lexically_normal().string(), "--partials",
                     fs::absolute(partials).lexically_normal().string()});
  if (timed) a.insert(a.end(), {"--min-time", fmt::format("{:g}", o.min_time), "--min-samples", std::to_string(o.min_samples)});
  else a.push_back("--no-timing");
  if (o.timeout > 0) a.insert(a.end(), {"--timeout", fmt::format("{:g}", o.timeout)});
  if (o.step) a.insert(a.end(), {"--step", fmt::format("{}", *o.step)});
  if (o.tol) a.insert(a.end(), {"--tol", fmt::format("{}", *o.tol)});
  if (o.project_initial_state) a.push_back("--project-initial-state");
  a.push_back("-q");
  return a;
}

std::string build_name() {
  return fmt::format("{} {}, Eigen {}.{}.{}", MBS_COMPILER, MBS_BUILD_TYPE, EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
                     EIGEN_MINOR_VERSION);
}

// What a partial records, and a merge requires of every partial (the options: of each other).
SweepFingerprint fingerprint(const Options& o, const Problem& p, bool timed) {
  SweepFingerprint f;
  f.problem_hash = problem_key(p);
  f.build = build_name();
  f.build_id = executable_id();
  f.options = fmt::format("{}; timeout {}; step {}; tol {}; project initial state {}",
                          timed ? fmt::format("timed for {:g} s, {} samples at least", o.min_time, o.min_samples) : std::string("not timed"),
                          o.timeout > 0 ? fmt::format("{:g} s", o.timeout) : std::string("none"),
                          o.step ? fmt::format("{}", *o.step) : std::string("tuned"), o.tol ? fmt::format("{}", *o.tol) : std::string("tuned"),
                          o.project_initial_state ? "yes" : "no");
  f.reference = reference_fingerprint(p);
  f.host = host_description();
  return f;
}

CaseOptions case_options(const Options& o) {
  CaseOptions c;
  c.step = o.step;
  c.tolerance = o.tol;
  c.min_time_s = o.min_time;
  c.min_samples = o.min_samples;
  c.timeout_s = o.timeout;
  c.timed = !o.no_timing;
  return c;
}

// The steps the progress line counts: every case (and each fixed-step case again at a published
// step); a --jobs run shows its children as one step, and only a serial timing re-runs the cases.
int progress_steps(const Options& o, const Session& s) {
  int total = 0;
  for (const Problem& p : s.problems) {
    total += static_cast<int>(s.cases.size());
    if (p.published_step && !o.step && !p.analysis)
      for (const auto& c : s.cases) total += c.second.kind == SettingKind::kFixedStep;
  }
  if (o.from_partials()) total = static_cast<int>(s.problems.size()) * (o.jobs > 1) + total * o.retimed();
  return total;
}

BenchReport new_report(const Problem& problem, const ReferenceSetup& reference) {
  BenchReport report;
  report.problem = &problem;
  report.reference_note = reference.note;
  report.created = utc_now();
  const fs::path rel = fs::path(problem.file).lexically_normal().lexically_relative(MBS_SOURCE_DIR);
  report.problem_file = !rel.empty() && *rel.begin() != ".." ? rel.string() : problem.file;
  report.build = build_name();
  return report;
}

// --jobs N: every case of the problem as a child process writing its partial into a private folder,
// which is returned (the caller merges and removes it). Throws SweepError when a case did not
// complete; returns nullopt when interrupted.
std::optional<std::string> run_cases_as_children(const Options& o, const Session& s, const Problem& problem, Progress& progress) {
  const std::string dir = (fs::path(o.partials_dir) / fmt::format(".jobs-{}", ::getpid())).string();
  fs::create_directories(fs::path(dir) / problem.name);
  store_reference(problem, dir);
  std::vector<ChildCase> children;
  for (const auto& [f, info] : sweep_cases(problem, s.cases)) {
    const std::string c = f->name() + "/" + info.name;
    children.push_back(ChildCase{c, case_argv(o, problem, c, dir, false), partial_path(dir, problem.name, c) + ".log"});
  }
  progress.begin_case(problem.name, fmt::format("{} cases in {} processes", children.size(), o.jobs));
  const std::vector<std::string> bad = run_children(children, o.jobs, [] { return g_interrupted != 0; });
  progress.end_case();
  if (g_interrupted) {
    std::cerr << fmt::format("bench: interrupted; no results written (the cases' logs: {})\n", dir);
    return std::nullopt;
  }
  if (!bad.empty())
    throw SweepError(fmt::format("{} case(s) did not complete: {} (their logs: {}/{}/*.log)", bad.size(), fmt::join(bad, ", "),
                                 dir, problem.name));
  return dir;
}

// --merge and --jobs: the rows from partial summaries, timed again serially where asked, and how
// they were found in report.sweep. Returns an exit code (kExitOk: go on). Throws on a bad partial.
int rows_from_partials(const Options& o, const Session& s, const Problem& problem, Progress& progress, BenchReport& report) {
  MergeOptions mo;
  mo.partials_dir = o.partials_dir;
  mo.allow_missing = o.allow_missing;
  mo.expected = fingerprint(o, problem, false);
  std::string private_dir;
  if (o.jobs > 1) {
    const std::optional<std::string> dir = run_cases_as_children(o, s, problem, progress);
    if (!dir) return kExitInterrupted;
    mo.partials_dir = private_dir = *dir;
  }
  const MergeResult merged = merge_partials(problem, s.cases, mo, report);
  if (o.retimed()) retime_serially(problem, s.cases, case_options(o), progress, report);
  if (o.jobs > 1) {
    report.sweep = fmt::format("cases tuned and verified in {} processes at once (--jobs {}); {}", o.jobs, o.jobs,
                               o.no_timing ? "not timed" : "timed afterwards one after another in one process, "
                                                           "the calibration kernel first, as a serial run");
  } else {
    report.sweep = fmt::format("merged from {} partial summaries (bench --merge) run on {}; ", merged.partials,
                               fmt::join(merged.hosts, "; "));
    report.sweep += o.retimed()   ? "timed again one after another in one process (--retime), the calibration kernel first"
                    : merged.timed ? "each row timed in its own process and normalized by the calibration kernel "
                                     "timed in that process; timings taken while other cases ran in parallel are "
                                     "noisier than a serial run's (--retime times them serially)"
                                   : "not timed";
    if (!merged.missing.empty()) report.sweep += fmt::format("; cases missing: {}", fmt::join(merged.missing, ", "));
  }
  if (!private_dir.empty()) fs::remove_all(private_dir);
  return has_failed_rows(report.rows) ? kExitCaseFailed : kExitOk;
}

// --compare: the rows beside the baseline's (ratios), the rows either side lacks, the regressions;
// the exit code they give.
int compare_with(const Options& o, const Session& s, const BenchReport& report) {
  std::vector<std::string> selected;
  for (const auto& [f, info] : s.cases) selected.push_back(f->name() + "/" + info.name);
  CompareOptions options;
  options.at_baseline_settings = o.at_baseline_settings;
  const Comparison c = compare_with_baseline(report, *s.baseline, selected, options);
  fmt::print("comparison with {}{} (ratios now / baseline):\n{}", o.compare,
             s.baseline->created.empty() ? "" : fmt::format(", created {}", s.baseline->created), c.ratios);
  if (!c.not_run.empty()) fmt::print("skipped, in the baseline but not run now:\n  {}\n", fmt::join(c.not_run, "\n  "));
  if (!c.no_baseline.empty()) fmt::print("skipped, run now but not in the baseline:\n  {}\n", fmt::join(c.no_baseline, "\n  "));
  for (const std::string& n : c.notes) fmt::print("note: {}\n", n);
  for (const std::string& r : c.regressions) fmt::print("REGRESSION {}\n", r);
  // With a baseline, the comparison is the verdict: cases that failed there too are no news.
  if (c.regressions.empty()) fmt::print("no regression against {}\n", o.compare);
  fmt::print("\n");
  return c.regressions.empty() ? kExitOk : kExitCaseFailed;
}

// bench --list
int command_list(const Options& o) {
  print_list(o.problems_dir);
  return kExitOk;
}

// bench --list-cases: one command per case.
int command_list_cases(const Options& o, const Session& s) {
  for (const Problem& p : s.problems)
    for (const auto& [f, info] : sweep_cases(p, s.cases))
      fmt::print("{}\n", shell_join(case_argv(o, p, f->name() + "/" + info.name, o.partials_dir, !o.no_timing)));
  return kExitOk;
}

// bench (serial), --merge, --jobs and --case: every problem's rows, its table, and its results (a
// --case run: the case's partial summary instead); --compare's verdict; the overview of several.
int command_run(const Options& o, const Session& s) {
  std::map<std::string, double> given_settings;  // --baseline-settings: case -> setting
  if (o.at_baseline_settings) given_settings = baseline_settings(*s.baseline);
  CaseOptions options = case_options(o);
  std::signal(SIGINT, on_interrupt);
  // --verbose logs every step of the way itself; the status line would interleave with it.
  Progress progress(std::cerr, !o.quiet && !o.verbose && isatty(STDERR_FILENO), progress_steps(o, s));
  options.on_progress = [&progress](const std::string& what) { progress.update(what); };
  const BenchOptions bench_options{options, o.at_baseline_settings, given_settings, [] { return g_interrupted != 0; }};

  int exit_code = kExitOk;
  std::vector<BenchReport> reports;
  for (size_t pi = 0; pi < s.problems.size(); ++pi) {
    const Problem& problem = s.problems[pi];
    BenchReport report = new_report(problem, s.references[pi]);
    if (o.from_partials()) {
      try {
        const int code = rows_from_partials(o, s, problem, progress, report);
        if (code == kExitInterrupted) return code;
        if (code != kExitOk) exit_code = code;
      } catch (const std::exception& e) {
        progress.clear();
        std::cerr << "bench: " << e.what() << "\n";
        return kExitBadInput;
      }
    } else if (bench_problem(problem, s.cases, bench_options, progress, report)) {
      exit_code = kExitCaseFailed;
    }
    progress.clear();
    fmt::print("{}\n", format_table(report));
    if (!report.sweep.empty()) fmt::print("sweep: {}\n\n", report.sweep);
    for (const std::string& w : control_warnings(report)) std::cerr << "bench: warning: " << w << "\n";
    if (!o.case_spec.empty() && !g_interrupted) {  // one case: its partial summary, no results folder
      const std::string path = partial_path(o.partials_dir, problem.name, o.formulation);
      try {
        write_partial(report, o.formulation, fingerprint(o, problem, !o.no_timing), path);
        fmt::print("partial summary written to {}\n", path);
      } catch (const std::exception& e) {
        std::cerr << "bench: " << e.what() << "\n";
        return kExitBadInput;
      }
      continue;
    }
    if (g_interrupted) {
      std::cerr << fmt::format("bench: interrupted after {} of {} cases of {}; no results written\n", report.rows.size(),
                               s.cases.size(), problem.name);
      return kExitInterrupted;
    }
    if (!o.compare.empty()) exit_code = compare_with(o, s, report);
    if (!o.no_write) {
      try {
        write_results(report, o.results_dir);
        fmt::print("results written to {}/{}/\n\n", o.results_dir, problem.name);
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mbsbench: which multibody formulation reaches the required accuracy in the least CPU time?"};
  Options o;
  add_options(app, o);
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(o.verbose ? spdlog::level::debug : spdlog::level::warn);
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  if (o.list) return command_list(o);
  Session session;
  try {
    check_options(o);
    session = load_session(o);
  } catch (const PreparationTimedOut& e) {
    std::cerr << "bench: " << e.what() << "\n";
    return kExitCaseFailed;
  } catch (const std::exception& e) {
    std::cerr << "bench: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (o.list_cases) return command_list_cases(o, session);
  return command_run(o, session);
}
