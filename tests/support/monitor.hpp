// Test observers, computed from the model's natural coordinates:
// - Monitor: max over every step of |E - E0| (J), |Phi|_inf (m) and |Phi_q v|_inf (m/s), the
//   largest |E - E0| up to a given time, the last state, and on request every state (history);
// - Tee: one run reported to several observers (e.g. the harness's ScoringObserver and a Monitor).
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <vector>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "run/crossings.hpp"

namespace mbs::testing {

struct MonitorOptions {
  bool keep_history = false;  // store (t, q, v) of every reported step
  double early_until = -std::numeric_limits<double>::infinity();  // window of max_drift_early (s)
};

class Monitor final : public StepObserver {
 public:
  struct Snapshot {
    double t;
    Eigen::VectorXd q, v, Phi;
  };

  explicit Monitor(const Model& model, MonitorOptions options = {})
      : options_(options), nat_(model), phi_(model.nc()), phi_dot_(model.nc()) {}
  void on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
    const double e = nat_.energy(q, v);
    if (reports == 0) e0 = e;
    max_drift = std::max(max_drift, std::abs(e - e0));
    if (t <= options_.early_until) max_drift_early = max_drift;
    nat_.Phi(q, phi_);
    nat_.Phi_q_times(q, v, phi_dot_);
    if (phi_.size() > 0) {
      max_Phi = std::max(max_Phi, phi_.cwiseAbs().maxCoeff());
      max_Phi_dot = std::max(max_Phi_dot, phi_dot_.cwiseAbs().maxCoeff());
    }
    t_final = t;
    q_final = q;
    v_final = v;
    if (options_.keep_history) history.push_back({t, q, v, phi_});
    ++reports;
  }

  // Phi(q) of the reported state at time t (matched to 1e-9 s; needs keep_history); NaN when no
  // step landed there. Stored at the step: the model may be gone when this is read.
  Eigen::VectorXd Phi_at(double t) const {
    for (const Snapshot& s : history)
      if (std::abs(s.t - t) < 1e-9) return s.Phi;
    return Eigen::VectorXd::Constant(phi_.size(), std::numeric_limits<double>::quiet_NaN());
  }
  // Coordinate i and its rate at every reported step, for crossing_times (needs keep_history).
  std::vector<Sample> samples(int i) const {
    std::vector<Sample> out;
    out.reserve(history.size());
    for (const Snapshot& s : history) out.push_back({s.t, s.q[i], s.v[i]});
    return out;
  }
  // The largest step between reported states (needs keep_history).
  double largest_step() const {
    double h = 0.0;
    for (size_t k = 1; k < history.size(); ++k) h = std::max(h, history[k].t - history[k - 1].t);
    return h;
  }

  double e0 = 0.0, max_drift = 0.0, max_drift_early = 0.0, max_Phi = 0.0, max_Phi_dot = 0.0, t_final = 0.0;
  Eigen::VectorXd q_final, v_final;
  std::vector<Snapshot> history;
  long reports = 0;

 private:
  MonitorOptions options_;
  NaturalCoordinates nat_;
  Eigen::VectorXd phi_, phi_dot_;
};

class Tee final : public StepObserver {
 public:
  Tee(std::initializer_list<StepObserver*> observers) : observers_(observers) {}
  void on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
    for (StepObserver* o : observers_) o->on_step(t, q, v);
  }

 private:
  std::vector<StepObserver*> observers_;
};

}  // namespace mbs::testing
