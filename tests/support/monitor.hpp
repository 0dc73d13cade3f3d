// A test observer: max over every step of |E - E0| (J), |Phi|_inf (m) and |Phi_q v|_inf (m/s), and
// the last state, computed from the model's natural coordinates.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs::testing {

class Monitor final : public StepObserver {
 public:
  explicit Monitor(const Model& model) : nat_(model), phi_(model.nc()), phi_dot_(model.nc()) {}
  void on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
    const double e = nat_.energy(q, v);
    if (reports == 0) e0 = e;
    max_drift = std::max(max_drift, std::abs(e - e0));
    nat_.Phi(q, phi_);
    nat_.Phi_q_times(q, v, phi_dot_);
    if (phi_.size() > 0) {
      max_Phi = std::max(max_Phi, phi_.cwiseAbs().maxCoeff());
      max_Phi_dot = std::max(max_Phi_dot, phi_dot_.cwiseAbs().maxCoeff());
    }
    t_final = t;
    q_final = q;
    ++reports;
  }
  double e0 = 0.0, max_drift = 0.0, max_Phi = 0.0, max_Phi_dot = 0.0, t_final = 0.0;
  Eigen::VectorXd q_final;
  long reports = 0;

 private:
  NaturalCoordinates nat_;
  Eigen::VectorXd phi_, phi_dot_;
};

}  // namespace mbs::testing
