// The joint-coordinate ODE on a spatial tree (common/erk_simulators.hpp), shared by `recursive`
// (ABA, CRBA) and `minimal` (the velocity transformation): configuration rates, forward dynamics by
// the chosen algorithm, contacts as events (tree_contacts.hpp) and loops by Lagrange multipliers
// with a projection after every step (loop_closure.hpp).
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>

#include "core/formulation.hpp"
#include "recursive/loop_closure.hpp"
#include "recursive/spatial_tree.hpp"
#include "recursive/tree_contacts.hpp"
#include "recursive/velocity_transformation.hpp"

namespace mbs::recursive {

// How the accelerations are found: Featherstone's articulated-body algorithm, the composite-rigid-
// body algorithm (H by composite inertias, the bias by recursive Newton-Euler), or the velocity
// transformation of the natural coordinates (velocity_transformation.hpp: formulation `minimal`).
enum class Algorithm { kAba, kCrba, kVt };

// The ODE of common/erk_simulators.hpp, on a tree that it owns.
class TreeOde {
 public:
  using State = Eigen::VectorXd;
  static constexpr bool kContacts = true;  // a model without contacts takes the plain step
  TreeOde(const Model& model, RunStats& stats, SpatialTree tree, Algorithm algorithm)
      : model_(model), tree_(std::move(tree)), algorithm_(algorithm), contacts_(model, tree_), loops_(model, tree_, &stats),
        ws_(tree_, algorithm != Algorithm::kAba || contacts_.active() || !loops_.empty()),
        forces_(tree_, model), cdy_(size()) {
    if (algorithm == Algorithm::kVt) vt_ = std::make_unique<VelocityTransformation>(tree_, model);
  }
  const char* name() const { return algorithm_ == Algorithm::kVt ? "minimal" : "recursive"; }
  int size() const { return tree_.nq + tree_.nv; }
  void rhs(double /*t*/, const State& y, State& dydt) {
    const auto q = y.head(tree_.nq);
    const auto v = y.tail(tree_.nv);
    configuration_rate(tree_, q, v, dydt.head(tree_.nq));
    if (algorithm_ == Algorithm::kVt) {  // force elements in its Q; H already factored for the loops
      vt_->accelerations(q, v, ws_, dydt.tail(tree_.nv));
      if (contacts_.num_closed() != 0) contacts_.constrain(q, v, ws_, dydt.tail(tree_.nv));
      if (!loops_.empty()) loops_.constrain_factored(ws_, dydt.tail(tree_.nv));
      return;
    }
    const BodyForces* f_ext = forces_.empty() ? nullptr : &forces_.evaluate(q, v, ws_);
    if (algorithm_ == Algorithm::kAba) aba(tree_, q, v, ws_, dydt.tail(tree_.nv), f_ext);
    else crba(tree_, q, v, ws_, dydt.tail(tree_.nv), f_ext);
    if (contacts_.num_closed() != 0) contacts_.constrain(q, v, ws_, dydt.tail(tree_.nv));
    if (!loops_.empty()) loops_.constrain(q, v, ws_, dydt.tail(tree_.nv));
  }

  // The contact interface of common/contact_events.hpp (tree_contacts.hpp does the mechanics).
  ContactSet& contact_set() { return contacts_.set(); }
  void contact_state(const State& y, Eigen::VectorXd& gap, Eigen::VectorXd& vn) {
    contacts_.state(y.head(tree_.nq), y.tail(tree_.nv), ws_, gap, vn);
  }
  void closed_forces(const State& y, Eigen::VectorXd& force) {
    rhs(0.0, y, cdy_);
    contacts_.closed_forces(force);
  }
  void apply_impulses(State& y, const std::vector<int>& idx, const std::vector<char>& eq, const Eigen::VectorXd& e, int k,
                      Eigen::VectorXd& impulse, Eigen::VectorXd& vn_after) {
    contacts_.apply_impulses(y.head(tree_.nq), y.tail(tree_.nv), ws_, idx, eq, e, k, impulse, vn_after);
  }
  void initial_state(State& y) const {
    y.head(tree_.nq) = tree_.q0;
    y.tail(tree_.nv) = tree_.v0;
  }
  // Quaternions renormalized, loops closed by projection after every step (file comment).
  void finish_step(double t, State& y) {
    normalize(tree_, y.head(tree_.nq));
    if (!loops_.empty()) loops_.project(t, y.head(tree_.nq), y.tail(tree_.nv), ws_);
  }
  void model_state(const State& y, Eigen::VectorXd& qn, Eigen::VectorXd& vn) {
    recursive::model_state(tree_, model_, y.head(tree_.nq), y.tail(tree_.nv), ws_, qn, vn);
  }

 private:
  const Model& model_;
  SpatialTree tree_;
  Algorithm algorithm_;
  TreeContacts contacts_;
  LoopClosure loops_;  // the cut joints' rows (none on a tree)
  TreeWorkspace ws_;
  TreeForces forces_;  // the force elements (none: nothing evaluated; kVt: unused, in its own Q)
  std::unique_ptr<VelocityTransformation> vt_;  // kVt only
  State cdy_;  // closed_forces' right-hand side
};

// Why the tree ODE cannot run the model ("" when it can): the spanning tree's own reasons, contacts
// off the tree's points, and the loops it does not close yet. The tree built goes to *built if given.
std::string tree_ode_unsupported_reason(const Model& model, SpatialTree* built = nullptr);

}  // namespace mbs::recursive
