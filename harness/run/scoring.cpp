#include "run/scoring.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>


namespace mbs {

double Score::metric(Metric m) const {
  switch (m) {
    case Metric::kMaxEnergyDrift: return max_energy_drift;
    case Metric::kMaxPositionViolation: return max_position_violation;
    case Metric::kMaxVelocityViolation: return max_velocity_violation;
    case Metric::kFinalPositionError: return final_position_error;
    case Metric::kMaxEnergyRise: return max_energy_rise;
    case Metric::kMaxAngularMomentumDrift: return max_angular_momentum_drift;
    case Metric::kMaxReferenceError: return max_reference_error;
    case Metric::kFinalReferenceError: return final_reference_error;
    case Metric::kMaxPenetration: return max_penetration;
    case Metric::kMaxEnergyDriftBetweenImpacts: return max_energy_drift_between_impacts;
    case Metric::kEigenvalueError: return eigenvalue_error;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

bool CheckValue::reproduces(int decimals) const {
  const double scale = std::pow(10.0, decimals);
  return std::isfinite(value) && std::round(value * scale) == std::round(target * scale);
}

bool passes(const Problem& problem, const Score& score) {
  if (!score.completed) return false;
  const double value = score.metric(problem.rule.metric);
  if (!(std::isfinite(value) && value < problem.rule.below)) return false;
  // The source's no-interpolation figures (kStep sampling) depend on where the steps fall, not on
  // accuracy: they are judged at the source's own step only.
  if (problem.rule.checks_within > 0.0)
    for (size_t i = 0; i < score.checks.size() && i < problem.checks.size(); ++i)
      if (problem.checks[i].sampling != Check::Sampling::kStep && !(std::abs(score.checks[i].ratio() - 1.0) < problem.rule.checks_within))
        return false;
  return true;
}

namespace {
// The points a history records: the history point, then run.also_history_points.
std::vector<std::pair<std::string, Combo>> history_points(const Problem& problem) {
  std::vector<std::pair<std::string, Combo>> points{{problem.history_name, problem.history_point}};
  points.insert(points.end(), problem.extra_history_points.begin(), problem.extra_history_points.end());
  return points;
}
}  // namespace

std::vector<std::string> history_fields(const Problem& problem) {
  std::vector<std::string> out{"t"};
  for (const auto& [name, combo] : history_points(problem))
    for (int i = 0; i < problem.model.dim; ++i) out.push_back(name + "." + "xyz"[i]);
  out.insert(out.end(), {"dE", "Phi", "Phi_qv"});
  if (problem.history_total_energy()) out.push_back("E");
  return out;
}

std::vector<std::string> history_units(const Problem& problem) {
  std::vector<std::string> out{"s"};
  out.insert(out.end(), history_points(problem).size() * static_cast<size_t>(problem.model.dim), "m");
  out.insert(out.end(), {"J", "m", "m/s"});
  if (problem.history_total_energy()) out.push_back("J");
  return out;
}

ScoringObserver::ScoringObserver(const Problem& problem, bool record_history)
    : problem_(problem), nat_(problem.model), phi_(nat_.nc()), phi_v_(nat_.nc()), q_last_(nat_.nq()) {
  if (problem.reference) reference_ = problem.reference->observer(problem);
  contacts_ = contact_gaps(problem.model);
  if (const auto& ref = problem.reference_trajectory) {
    std::vector<Combo> points;
    for (const auto& [name, combo] : problem.measured_points) points.push_back(combo);
    sampler_.emplace(std::move(points), problem.model.dim, ref->dt, ref->t_end);
  }
  for (const Element* f : nat_.force_elements())
    if (f->potential_period() > 0.0) periodic_.push_back({f, f->potential_period(), 0.0, 0.0});
  if (!problem.run.final_angles.empty()) {
    turn_.assign(problem.model.bodies.size(), 0.0);
    last_angle_.assign(problem.model.bodies.size(), 0.0);
  }
  if (record_history) {
    std::vector<Combo> points;
    for (const auto& [name, combo] : history_points(problem)) points.push_back(combo);
    const int scalars = problem.history_total_energy() ? 4 : 3;
    history_sampler_.emplace(std::move(points), problem.model.dim, problem.run.output_interval, problem.run.end_time, scalars);
    history_values_.setZero(scalars);
    history_.columns = 1 + history_sampler_->size();
    history_.values.reserve(static_cast<size_t>(history_sampler_->samples()) * static_cast<size_t>(history_.columns));
  }
}

void ScoringObserver::reset() {
  first_ = true;
  for (Periodic& p : periodic_) p.offset = 0.0;
  max_drift_ = max_phi_ = max_phi_v_ = 0.0;
  max_pen_ = 0.0;
  max_drift_impacts_ = 0.0;
  impacts_.clear();
  micro_ = 0;
  vn_prev_.setZero(static_cast<Eigen::Index>(contacts_.size()));
  history_.values.clear();
  if (history_sampler_) history_sampler_->reset();
  if (reference_) reference_->reset();
  if (sampler_) sampler_->reset();
  max_ref_err_ = 0.0;
  max_rise_ = max_dh_ = 0.0;
  std::fill(turn_.begin(), turn_.end(), 0.0);
  final_ref_err_ = std::numeric_limits<double>::quiet_NaN();
}

double ScoringObserver::energy(const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  double e = nat_.energy(q, v);
  // A periodic potential (a planar torque's -tau theta) is continued across its branch cut: a jump
  // of more than half a period between steps is a wrap, not work.
  for (Periodic& p : periodic_) {
    const double V = p.element->potential_energy(problem_.model, q);
    if (!first_) {
      const double jump = V - p.last;
      p.offset -= p.period * std::round(jump / p.period);
    }
    p.last = V;
    e += p.offset;
  }
  return e;
}

void ScoringObserver::on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  const double e = energy(q, v);
  if (first_) e0_ = e;  // the benchmark's reference: the initial mechanical energy
  nat_.Phi(q, phi_);
  nat_.Phi_q_times(q, v, phi_v_);
  const double drift = e - e0_;
  const double phi = nat_.nc() ? phi_.norm() : 0.0, phi_v = nat_.nc() ? phi_v_.norm() : 0.0;
  // A NaN must poison the maxima (std::max would drop it).
  auto upd = [](double& m, double x) { m = (std::isnan(x) || x > m) ? x : m; };
  upd(max_drift_, std::abs(drift));
  upd(max_phi_, phi);
  upd(max_phi_v_, phi_v);
  if (first_) e_ref_ = e;
  if (first_) e_min_ = e;
  e_min_ = std::min(e_min_, e);
  upd(max_rise_, e - e_min_);
  if (const auto& am = problem_.momentum_axis) {
    const double h = am->axis.dot(nat_.angular_momentum(q, v, am->point));
    if (first_) h0_ = h;
    upd(max_dh_, std::abs(h - h0_));
  }
  bool impact = false;
  for (size_t i = 0; i < contacts_.size(); ++i) {
    const double g = contacts_[i].gap(q), vn = contacts_[i].normal_velocity(v);
    upd(max_pen_, -g);
    // At the wall after the step: |gap| within what one step of the faster of the two velocities
    // moves (a turning point inside or away from the wall is not an impact).
    if (!first_ && vn_prev_[i] < 0.0 && vn > 0.0 && std::abs(g) <= std::max(vn, -vn_prev_[i]) * (t - t_last_) + 1e-12) {
      if (vn - vn_prev_[i] > kImpactJump) {
        impacts_.push_back({t, static_cast<int>(i), vn_prev_[i], vn, e - problem_.energy_datum});
        impact = true;  // micro-impacts do not reset the reference: their losses are tiny, drift is not
      } else {
        ++micro_;
      }
    }
    vn_prev_[i] = vn;
  }
  if (impact) e_ref_ = e;  // the impact's loss is physics, not drift
  upd(max_drift_impacts_, std::abs(e - e_ref_));
  for (size_t b = 0; b < turn_.size(); ++b) {  // the first axis' angle, continued across +-pi
    const int o = problem_.model.body_offset(static_cast<int>(b)) + 2;
    const double phi = std::atan2(q[o + 1], q[o]);
    if (!first_) turn_[b] += std::remainder(phi - last_angle_[b], 2 * M_PI);
    last_angle_[b] = phi;
  }
  t_last_ = t;
  q_last_ = q;
  if (sampler_) {
    const ReferenceTrajectory& ref = *problem_.reference_trajectory;
    const int d = ref.dim, last = sampler_->samples() - 1;
    sampler_->on_step(t, q, v, [&](int k, const Eigen::VectorXd& x) {
      double e = 0.0;
      for (Eigen::Index p = 0; p < x.size() / d; ++p) {
        const double ep = (x.segment(d * p, d) - ref.x.row(k).segment(d * p, d).transpose()).norm();
        e = (std::isnan(ep) || ep > e) ? ep : e;
      }
      upd(max_ref_err_, e);
      if (k == last) final_ref_err_ = e;
    });
  }
  if (!problem_.checks.empty() && reference_)  // scoring runs only: this may allocate, the timed runs observe nothing
    reference_->observe(t, q, v, e);
  if (history_sampler_) {
    history_values_.head<3>() << drift, phi, phi_v;
    if (history_values_.size() > 3) history_values_[3] = e - problem_.energy_datum;
    history_sampler_->on_step(t, q, v, history_values_, [&](int k, const Eigen::VectorXd& x) {
      history_.values.push_back(history_sampler_->time(k));
      history_.values.insert(history_.values.end(), x.data(), x.data() + x.size());
    });
  }
  first_ = false;
}

void ScoringObserver::finish(Score& score) const {
  score.max_energy_drift = max_drift_;
  score.max_position_violation = max_phi_;
  score.max_velocity_violation = max_phi_v_;
  score.final_time = t_last_;
  score.max_penetration = max_pen_;
  score.max_energy_drift_between_impacts = max_drift_impacts_;
  score.impacts = impacts_;
  score.max_energy_rise = max_rise_;
  for (const FinalAngle& a : problem_.run.final_angles)
    score.final_angles.push_back(a.initial + turn_[a.body] - (a.relative_to >= 0 ? turn_[a.relative_to] : 0.0));
  if (problem_.momentum_axis) score.max_angular_momentum_drift = max_dh_;
  if (sampler_) {  // a run that stopped early has no reference error: it did not reach every output time
    const bool all = sampler_->next() == sampler_->samples();
    score.max_reference_error = all ? max_ref_err_ : std::numeric_limits<double>::quiet_NaN();
    score.final_reference_error = all ? final_ref_err_ : std::numeric_limits<double>::quiet_NaN();
  }
  score.micro_impacts = micro_;
  score.checks.assign(problem_.checks.size(), CheckValue{});
  if (reference_ && !first_) reference_->finish(t_last_, q_last_, score);
}

Score score_run(const Problem& problem, Simulator& sim, ScoringObserver& observer) {
  Score score;
  observer.reset();
  try {
    score.stats = sim.run(problem.run.end_time, &observer);
    score.completed = true;
  } catch (const SolverError& e) {
    score.error = e.what();
    score.stats = sim.stats();
  }
  observer.finish(score);
  if (score.completed && !std::isfinite(score.max_energy_drift)) {
    score.completed = false;
    score.error = fmt::format("non-finite state (energy drift {})", score.max_energy_drift);
  }
  return score;
}

}  // namespace mbs
