// Scores a run the same way for every formulation: energy, constraint violations and the
// position error, all computed from the model's natural coordinates that the simulator reports.
#pragma once

#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "core/contact.hpp"
#include "run/point_sampler.hpp"
#include "problem/problem.hpp"
#include "problem/reference_kinds.hpp"

namespace mbs {

// A run's time history on the output grid t_k = min(k run.output_interval, run.end_time), up to the
// last output time the run reached: row after row, one value per history_fields(problem).
struct History {
  int columns = 0;
  std::vector<double> values;
  size_t rows() const { return columns > 0 ? values.size() / static_cast<size_t>(columns) : 0; }
  const double* row(size_t i) const { return values.data() + i * static_cast<size_t>(columns); }
  bool empty() const { return values.empty(); }
};

// The columns of a history: "t", then each coordinate of the history point and of
// run.also_history_points ("P.x", "P.y", and "P.z" for spatial problems), "dE" (E(t) - E(0)), "Phi"
// (|Phi|), "Phi_qv" (|Phi_q v|), and "E" (total energy from score.energy_datum) with contacts.
std::vector<std::string> history_fields(const Problem& problem);
// Their units, in the same order ("s", "m", ..., "J", "m", "m/s"[, "J"]).
std::vector<std::string> history_units(const Problem& problem);

// A published check's value in one run, against its exact target.
struct CheckValue {
  double value = std::numeric_limits<double>::quiet_NaN();
  double target = std::numeric_limits<double>::quiet_NaN();
  double ratio() const { return value / target; }
  // The value printed with the source's decimals equals the target printed the same way.
  bool reproduces(int decimals) const;
};

// An impact seen in the reported states: a contact's normal velocity jumping from approaching to
// separating (by more than kImpactJump) at a gap no larger than the separating motion of one step.
struct Impact {
  double t = 0.0;               // s, time of the first state after the impact
  int contact = 0;              // index into contacts(model)
  double vn_before = 0.0;       // m/s, normal velocity at the last reported state before (< 0; up to a
                                // step of acceleration away from the instant of impact)
  double vn_after = 0.0;        // m/s, at the state after (> 0)
  double energy_after = 0.0;    // J, total energy (problem's datum) at the state after
};
// Jumps in normal velocity below this (m/s) are counted as micro-impacts, not listed.
inline constexpr double kImpactJump = 1e-3;

// The figures of one completed or failed run.
struct Score {
  bool completed = false;
  std::string error;                     // SolverError text when !completed
  RunStats stats;
  double max_energy_drift = std::numeric_limits<double>::quiet_NaN();        // J, every step
  double max_position_violation = std::numeric_limits<double>::quiet_NaN();  // m, max_t |Phi|
  double max_velocity_violation = std::numeric_limits<double>::quiet_NaN();  // m/s, max_t |Phi_q v|
  double final_position_error = std::numeric_limits<double>::quiet_NaN();    // m, vs reference at t_end
  // m: the largest distance of a measured point from the reference trajectory over the output
  // times (both read at the same times), and at t_end; NaN without one, or when not reached.
  double max_reference_error = std::numeric_limits<double>::quiet_NaN();
  double final_reference_error = std::numeric_limits<double>::quiet_NaN();
  // J: the largest rise of the scored energy above its lowest value so far: 0 for a run whose energy
  // never increases (dampers, and a method that does not add energy).
  double max_energy_rise = std::numeric_limits<double>::quiet_NaN();
  // kg m^2/s: max |H_a(t) - H_a(0)| about score.angular_momentum_about (NaN without one).
  double max_angular_momentum_drift = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> final_angles;  // rad, one per RunSpec::final_angles, at the last step
  double final_time = 0.0;                                                   // s, last reported time
  std::vector<CheckValue> checks;  // one per Problem::checks, in order (NaN when not reached)
  double max_penetration = 0.0;    // m, max over steps and contacts of -gap (0 without contacts)
  // J: |E - E_ref| over steps, E_ref the energy after the latest impact (the initial energy before
  // any): the integration's drift with the impacts' own losses taken out. Without contacts it is
  // max_energy_drift.
  double max_energy_drift_between_impacts = std::numeric_limits<double>::quiet_NaN();
  double eigenvalue_error = std::numeric_limits<double>::quiet_NaN();  // 1/s, linearization problems
  std::vector<Impact> impacts;     // problems with contacts
  long micro_impacts = 0;          // velocity jumps below kImpactJump

  // The value of a metric (NaN where this run does not compute it).
  double metric(Metric m) const;
};

// True when the score satisfies the problem's rule (a failed run never does).
bool passes(const Problem& problem, const Score& score);

// Observer computing the score; optionally records the time history on the output grid, read by
// the same interpolation as the reference error (PointSampler), into buffers sized once.
class ScoringObserver final : public StepObserver {
 public:
  explicit ScoringObserver(const Problem& problem, bool record_history);
  void reset();
  void on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;
  // Completes the score after the run (final position error against the reference).
  void finish(Score& score) const;
  const History& history() const { return history_; }
  const Eigen::VectorXd& final_q() const { return q_last_; }  // natural coordinates at the last step

 private:
  const Problem& problem_;
  NaturalCoordinates nat_;
  // The reference's checks and final position (null when it gives neither).
  std::unique_ptr<ReferenceObserver> reference_;
  std::vector<ContactGap> contacts_;  // each contact's gap, in file order
  struct Periodic {
    const Element* element;
    double period, last, offset;
  };
  std::vector<Periodic> periodic_;
  // The measured points read at the reference's output times, and the errors so far.
  std::optional<PointSampler> sampler_;
  double max_ref_err_ = 0.0, final_ref_err_ = 0.0;
  double e_min_ = 0.0, max_rise_ = 0.0, h0_ = 0.0, max_dh_ = 0.0;
  // Planar rigid bodies' rotation since t = 0, unwrapped step by step (run.final_angles).
  std::vector<double> turn_, last_angle_;
  // Total energy with periodic potentials unwrapped along the run.
  double energy(const Eigen::VectorXd& q, const Eigen::VectorXd& v);
  double e0_ = 0.0, t_last_ = 0.0;
  bool first_ = true;
  double max_drift_ = 0.0, max_phi_ = 0.0, max_phi_v_ = 0.0;
  Eigen::VectorXd phi_, phi_v_, q_last_;
  // The history's points and values (dE, Phi, Phi_qv[, E]) at the output times (record_history).
  std::optional<PointSampler> history_sampler_;
  Eigen::VectorXd history_values_;
  History history_;
  // Contacts: previous normal velocities and the events found so far (scoring runs only).
  Eigen::VectorXd vn_prev_;
  double max_pen_ = 0.0, e_ref_ = 0.0, max_drift_impacts_ = 0.0;
  std::vector<Impact> impacts_;
  long micro_ = 0;
};

// Runs one simulator to the problem's end time and scores it; solver failures become a
// non-completed score with the error text, never an exception.
Score score_run(const Problem& problem, Simulator& sim, ScoringObserver& observer);

}  // namespace mbs
