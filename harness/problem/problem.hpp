// A benchmark problem as loaded from its YAML file: the model, the run, the scoring rule and the
// reference solution. Immutable once loaded.
#pragma once

#include <Eigen/Dense>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "problem/metric.hpp"

namespace mbs {

// Malformed or non-physical problem file; what() reads "file:line:column: what is wrong".
class ProblemError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// run.final_angles (planar problems): a body's angle at t_end, as a source tabulates its state:
// `initial` plus the body's rotation since t = 0 (less that of `relative_to`), unwrapped along the run.
struct FinalAngle {
  std::string name;
  int body = -1, relative_to = -1;  // rigid-body indices (-1: the ground)
  double initial = 0.0;             // rad, the angle at t = 0 in the source's convention
  double published = std::numeric_limits<double>::quiet_NaN();  // rad, the source's value at t_end
};

struct RunSpec {
  double end_time = 0.0;         // s
  double output_interval = 0.0;  // s, spacing of the written time histories
  std::vector<FinalAngle> final_angles;
};

struct Rule {
  Metric metric = Metric::kMaxEnergyDrift;
  double below = 0.0;  // pass when metric < below
  // When > 0, a run passes only if also every published check (but those sampled at the source's
  // steps, Sampling::kStep) has |ratio - 1| < checks_within:
  // for figures read off the samples (a value at a crossing), where a coarse step can meet the
  // metric yet miss the figure.
  double checks_within = 0.0;
};

// A figure the source publishes, reproduced by every run (the source's Target / value / Ratio table).
struct Check {
  std::string name;        // as printed, with its unit: "period, 1 swing (s)"
  std::string quantity;    // "period": time of `swings` full periods, from interpolated crossings of
                           //   the reference point through the vertical below the pivot;
                           // "energy": total energy (J) at that same time;
                           // "angular_speed_at_vertical": |omega| (rad/s) of the reference body when
                           //   it first passes its lowest position
                           // (which quantities apply depends on the reference kind)
  int swings = 1;
  // angular_speed_at_vertical: kStep = the first step past the vertical, no interpolation (the
  // source's rule); else interpolated at the crossing.
  enum class Sampling { kInterpolated, kStep } sampling = Sampling::kInterpolated;
  double published = 0.0;  // the source's printed value
  int decimals = 3;        // digits after the decimal point it was printed with
  // The printed value is itself a target (from an approximate formula): the table also gives the
  // ratio to it, beside the ratio to the exact target.
  bool published_is_target = false;
};

// What the harness compares against: one of the registered reference kinds (harness/references/,
// problem/reference_kinds.hpp).
class Reference;

// A problem analysed without time integration. kind "linearization": each formulation linearizes
// its equations about the initial configuration (a static equilibrium), and the harness times
// `repetitions` executions of the whole linearization (terms, eigenvalues, discrimination).
// The measured points at the output times t_k = min(k dt, t_end), as an exact solution or a converged
// reference gives them (harness/references/). Every run's points are read at the same times
// (run/point_sampler.hpp) and its reference error is the largest distance from these.
struct ReferenceTrajectory {
  std::string kind;                // the reference kind it comes from
  int dim = 0;                     // coordinates per point (the model's frame)
  double dt = 0.0, t_end = 0.0;    // s
  Eigen::MatrixXd x;               // samples x (dim * points), m
  double uncertainty = 0.0;        // m: converged: the largest disagreement between its cases; exact: 0
  std::string provenance;          // one line: how it was obtained
  // Where it is kept with the results, relative to results/<problem>/ (a computed reference, read
  // back by later runs); empty for a closed form, evaluated again at will.
  std::string file;
};

struct Analysis {
  std::string kind = "linearization";
  int repetitions = 10000;
};

struct Problem {
  std::string name;
  std::string title;
  std::string source;
  std::string file;  // path it was loaded from
  Model model;
  RunSpec run;                       // absent for analysis problems (end_time 0)
  std::optional<Analysis> analysis;  // analysis problems: no time integration
  Rule rule;
  std::string objective;  // "cpu_time"
  std::shared_ptr<const Reference> reference;  // null without a `reference` section
  // The points a reference error measures (reference.points; default: the history point).
  std::vector<std::pair<std::string, Combo>> measured_points;
  // Attached before the runs (run/reference_setup.hpp) when the reference gives positions in time.
  std::shared_ptr<const ReferenceTrajectory> reference_trajectory;
  std::string text;  // the problem file's bytes, as loaded (problem_key reads them)
  std::vector<Check> checks;            // score.checks
  std::optional<double> published_step; // score.published_step (s): fixed-step cases also run at it
  double energy_datum = 0.0;  // score.energy_datum (J): subtracted from reported total energies
  // score.angular_momentum_about (spatial problems): the axis (a point and a unit direction, local
  // frame) about which the angular momentum is conserved; its drift is max_angular_momentum_drift.
  struct MomentumAxis {
    Eigen::Vector3d point = Eigen::Vector3d::Zero(), axis = Eigen::Vector3d::UnitZ();
  };
  std::optional<MomentumAxis> momentum_axis;
  // score.report: metrics shown as extra table columns beside the rule's (every metric is in the JSON).
  std::vector<Metric> reported_metrics;
  // The point whose coordinates the time histories record (run.history_point: a point mass, a rigid
  // body's centroid, or BODY.POINT), as a combination of natural coordinates.
  Combo history_point;
  std::string history_name;
  // run.also_history_points: further points whose coordinates are appended to every history row.
  std::vector<std::pair<std::string, Combo>> extra_history_points;
  // Problems with contacts also record the total energy (J, from score.energy_datum) in histories.
  bool history_total_energy() const { return model.has_role(ElementRole::kContact); }
};

struct LoadOptions {
  // An initial state that violates the constraints is an error by default (the message says by
  // how much); with this set it is projected instead: positions by mass-weighted Gauss-Newton onto
  // Phi(q) = 0, then velocities mass-orthogonally onto Phi_q v = 0.
  bool project_initial_state = false;
};

// Initial states are consistent when every rod's |Phi_k| <= kInitialTolerance L_k and
// |(Phi_q v)_k| <= kInitialTolerance (1 m/s + |v|max).
inline constexpr double kInitialTolerance = 1e-9;

// Loads and validates a problem file. Throws ProblemError.
Problem load_problem(const std::string& path, const LoadOptions& options = {});
// Same, from text; `file_name` is used in messages.
Problem load_problem_text(const std::string& yaml_text, const std::string& file_name, const LoadOptions& options = {});

// FNV-1a 64-bit hash of a text, as 16 hex digits (stable across platforms and builds).
std::string fnv1a_hex(const std::string& text);
// The key a stored converged reference, a sweep's partials and a summary carry: FNV-1a 64 (hex) of
// the problem's YAML document as parsed and emitted again, without `title` and `source`. Comments,
// layout and those two documentary fields do not change it; any value does. Computed on demand:
// emitting costs about as much as parsing, which the loader does not pay for a key it rarely needs.
std::string problem_key(const Problem& problem);

// Metrics a rule may name (those the harness computes for every time-integration problem).
const std::vector<Metric>& known_metrics();

}  // namespace mbs
