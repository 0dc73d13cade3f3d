// The reference kinds a problem file may name, registered by the kinds themselves.
//
// A kind lives in one file under harness/references/ (its YAML keys, validation against the model,
// the trajectory or checks it gives the scoring) and adds itself here with one line:
//   MBS_REGISTER_REFERENCE_KIND(converged, kConverged);  // kConverged: a ReferenceKindInfo of that file
// The loader reads section `reference` through it, and the harness asks the Reference what it
// gives, never its kind's name.
#pragma once

#include <Eigen/Dense>
#include <complex>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "problem/problem.hpp"
#include "problem/yaml_reader.hpp"

namespace mbs {

struct Score;             // run/scoring.hpp
struct ReferenceOptions;  // run/reference_setup.hpp
struct ReferenceSetup;
class Reference;

struct ReferenceKindInfo {
  std::string name;     // as written after `kind:`
  std::string summary;  // one line for --list and the docs
  // What every reference of the kind gives, known before a problem is read (the loader's messages
  // list the kinds that would do):
  bool analysis = false;           // for analysis problems (linearization), not time integration
  bool exact = false;              // a closed form: score.checks are evaluated against it
  bool positions_in_time = false;  // the measured points at every output time (max/final_reference_error)
  bool final_position = false;     // final_position_error: the measured point at the last step
  std::vector<std::string> check_quantities;  // the score.checks quantities it evaluates
  // Reads and validates section `reference` (a mapping; `kind` is read) against the problem read so
  // far (model, run, score), and sets p.measured_points when it gives positions in time; fails
  // through ctx.rd with file:line:col.
  std::function<std::shared_ptr<const Reference>(const ReadContext& ctx, const yaml::Node& section, Problem& p)> read;
};

// Follows a scoring run for the reference's published checks and final position error. One per
// ScoringObserver, reused across its runs (reset between them).
class ReferenceObserver {
 public:
  virtual ~ReferenceObserver() = default;
  virtual void reset() = 0;
  // Every reported step of a run whose problem has score.checks: scoring runs only, so it may
  // allocate (the timed runs observe nothing). energy: total (J), periodic potentials unwrapped.
  virtual void observe(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v, double energy) = 0;
  // After a run that reported at least one state, from its last one: the checks (score.checks holds
  // one NaN value per problem check) and final_position_error.
  virtual void finish(double t_last, const Eigen::VectorXd& q_last, Score& score) const = 0;
};

// What a problem is scored against: read once by the loader (its kind's `read`), immutable after.
// Each kind derives its own, holding what it read (point, pivot, cases...).
class Reference {
 public:
  Reference(const ReferenceKindInfo& kind, SourceMark mark) : kind_(&kind), mark_(mark) {}
  virtual ~Reference() = default;

  const std::string& kind() const { return kind_->name; }
  const ReferenceKindInfo& info() const { return *kind_; }
  const SourceMark& mark() const { return mark_; }  // the reference section, for messages
  bool exact() const { return kind_->exact; }
  bool gives_positions_in_time() const { return kind_->positions_in_time; }
  bool gives_final_position() const { return kind_->final_position; }
  bool evaluates(const std::string& check_quantity) const;

  // Before the runs (run/reference_setup.hpp): the measured points at the output times, or null
  // when it gives no positions in time; setup.note says where they came from. Throws ProblemError
  // when the reference cannot be defended.
  virtual std::shared_ptr<const ReferenceTrajectory> trajectory(const Problem&, const ReferenceOptions&, ReferenceSetup&) const {
    return nullptr;
  }
  // The text of a trajectory it gave with a `file`, written with the results so later runs read it.
  virtual std::string stored_text(const Problem&, const ReferenceTrajectory&) const { return {}; }
  // For the scoring runs: null when it evaluates neither checks nor a final position.
  virtual std::unique_ptr<ReferenceObserver> observer(const Problem&) const { return nullptr; }
  // Analysis problems: the exact eigenvalues of the linearization (1/s).
  virtual std::vector<std::complex<double>> eigenvalues(const Problem&) const { return {}; }

 private:
  const ReferenceKindInfo* kind_;  // a kind's own static, registered
  SourceMark mark_;
};

// An exact solution sampled at the problem's output times t_k = min(k dt, t_end) (uncertainty 0):
// position(t) gives the measured point (model frame).
std::shared_ptr<ReferenceTrajectory> sample_exact(const Problem& problem, const std::string& kind,
                                                  const std::function<Eigen::VectorXd(double)>& position);

// The problem's reference as kind R (harness/references/), or null when it is of another kind.
template <class R>
const R* reference_as(const Problem& problem) {
  return dynamic_cast<const R*>(problem.reference.get());
}

class ReferenceKinds {
 public:
  static ReferenceKinds& instance();
  bool add(const ReferenceKindInfo& info);  // keeps &info: a static of the kind's file
  const ReferenceKindInfo* find(const std::string& name) const;
  std::vector<const ReferenceKindInfo*> all() const;  // sorted by name
  // The names of the kinds for which `has` holds, sorted.
  std::vector<std::string> names(const std::function<bool(const ReferenceKindInfo&)>& has) const;

 private:
  std::vector<const ReferenceKindInfo*> kinds_;
};

}  // namespace mbs

#define MBS_REGISTER_REFERENCE_KIND(Id, Info) \
  [[maybe_unused]] static const bool mbs_reference_kind_##Id = ::mbs::ReferenceKinds::instance().add(Info)
