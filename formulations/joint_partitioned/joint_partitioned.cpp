// Formulation "joint-partitioned": generalized coordinate partitioning (Wehage & Haug 1982) in the
// joint coordinates of a spanning tree with cut joints (recursive/spatial_tree.hpp,
// recursive/loop_closure.hpp). The tree's coordinates q (nv of them: no quaternions) are split by
// the full-pivoting LU of the loops' Jacobian G = Phi_q (common/partition.hpp) into independent q_i
// and dependent q_d; the state is y = [q_i; v_i], and at every stage
//   positions      Phi(q_i, q_d) = 0 for q_d by Newton-Raphson on the kept cut rows, from the last
//                  solution moved along the tangent (q_d += B dq_i)
//   velocities     v_d = B v_i,  B = -G_d^-1 G_i                       (G v = 0)
//   accelerations  qdd of the whole tree with its loops closed: qdd_free by the articulated-body
//                  algorithm, corrected by the loops' multipliers (LoopClosure::constrain: H by CRBA,
//                  G qdd = gamma), and dydt = [v_i; qdd_i].
// That is Wehage & Haug's original scheme: accelerations from the full constrained system, only the
// independent ones integrated; the dependent ones are found, not integrated, so the loops hold to
// Newton's tolerance at every output without a projection. The free accelerations are ABA's, not
// CRBA's as recursive's crba-* cases: constrain() factors H itself, so CRBA would build H twice.
// The independent coordinates are re-chosen when G_d's pivot ratio degrades, exactly as
// `partitioned` does in natural coordinates (common/partition_keeper.hpp), at step boundaries.
//
// A stage whose dependent coordinates Newton-Raphson cannot find throws StageFailure: the adaptive
// methods retry the step shorter from the last accepted state (anchor()); fixed-step RK4 stops.
//
// A tree (no cut joint) has no dependent coordinate: every joint coordinate is independent and the
// ODE is recursive/aba-*'s, run so that the suites holding every formulation to the planar pendulum
// apply here too. Refused, each with its reason: quaternions on the tree (a spherical joint's or
// spatial rod's rotation is no set of coordinates to partition), contacts (not declared), and models
// past the dense limit (G, H and G H^-1 G^T are dense).
#include <fmt/format.h>

#include <Eigen/Dense>
#include <utility>

#include "common/dense_limit.hpp"
#include "common/erk_simulators.hpp"
#include "common/integrator_table.hpp"
#include "common/length_scale.hpp"
#include "common/partition.hpp"
#include "common/partition_keeper.hpp"
#include "common/partitioned_coordinates.hpp"
#include "core/formulation.hpp"
#include "recursive/loop_closure.hpp"
#include "recursive/spatial_tree.hpp"

namespace mbs::joint_partitioned {
namespace {

using recursive::LoopClosure;
using recursive::SpatialTree;
using recursive::TreeWorkspace;

// Newton-Raphson on q_d stops when |Phi_R|_inf <= kPhiTol x the model's length scale, or right after
// a correction |dq_d|_inf <= kNewtonStep (rad; m for a slide): the rows are smooth in the joint
// coordinates with second derivatives of the order of the scale per rad^2, so such a correction
// leaves a residual ~1e-14 of the scale, and a further evaluation of Phi could only confirm it.
constexpr double kPhiTol = 1e-12;
constexpr double kNewtonStep = 1e-7;

// The partitioned ODE of common/partition_keeper.hpp in the tree's joint coordinates (file comment);
// the partitioning itself is common/partitioned_coordinates.hpp's.
class JointPartitionedOde {
 public:
  using Coordinates = PartitionedCoordinates<Eigen::Dynamic, Eigen::Dynamic, Eigen::Dynamic>;
  using State = Eigen::VectorXd;
  using VecQ = Eigen::VectorXd;

  JointPartitionedOde(const Model& model, RunStats& stats, int rank, SpatialTree tree)
      : model_(model), tree_(std::move(tree)), loops_(model, tree_, &stats), ws_(tree_, true), forces_(tree_, model),
        n_m_(loops_.kept_rows()), n_i_(tree_.nv - rank), qdd_(tree_.nv), rows_{*this, VecQ::Zero(tree_.nv)},
        pc_("joint-partitioned", tree_.nv, n_m_, rank, kPhiTol * position_scale(model), kNewtonStep, stats) {}

  const char* name() const { return "joint-partitioned"; }
  int size() const { return 2 * n_i_; }
  void initial_full_state(VecQ& q, VecQ& v) const {
    q = tree_.q0;
    v = tree_.v0;
  }

  void rhs(double t, const State& y, State& dydt) {
    pc_.coordinates(t, y, rows_);
    const VecQ& q = pc_.q();
    const VecQ& v = pc_.v();
    const recursive::BodyForces* f_ext = forces_.empty() ? nullptr : &forces_.evaluate(q, v, ws_);
    recursive::aba(tree_, q, v, ws_, qdd_, f_ext);
    if (n_m_ > 0) loops_.constrain(q, v, ws_, qdd_);
    dydt.head(n_i_) = y.tail(n_i_);
    const auto& ind = pc_.independent();
    for (int k = 0; k < n_i_; ++k) dydt[n_i_ + k] = qdd_[ind[k]];
  }

  double set_partition(const Partition& p, const VecQ& q, const VecQ& v, State& y) {
    return pc_.set_partition(p, rows_, q, v, y);
  }
  void anchor() { pc_.anchor(); }
  // The tree's state for y into q(), v(), with Phi_q() = G at it.
  void full_state(double t, const State& y) { pc_.coordinates(t, y, rows_); }
  void model_state_at(double t, const State& y, Eigen::VectorXd& qn, Eigen::VectorXd& vn) {
    pc_.coordinates(t, y, rows_);
    recursive::model_state(tree_, model_, pc_.q(), pc_.v(), ws_, qn, vn);
  }
  const VecQ& q() const { return pc_.q(); }
  const VecQ& v() const { return pc_.v(); }
  const Eigen::MatrixXd& Phi_q() const { return pc_.Phi_q(); }
  double take_min_pivot_ratio() { return pc_.take_min_pivot_ratio(); }

 private:
  // The loops' kept rows for PartitionedCoordinates, from the tree's world frames at q (zero velocity).
  struct Rows {
    JointPartitionedOde& ode;
    VecQ zero;
    void frames(const VecQ& q) {
      if (ode.n_m_ == 0) return;  // a tree: no row to evaluate, so no kinematics charged to its stages
      recursive::kinematics(ode.tree_, q, zero, ode.ws_);
      recursive::world_frames(ode.tree_, ode.ws_);
    }
    void Phi(const VecQ& q, Eigen::VectorXd& Phi) {
      frames(q);
      ode.loops_.positions(ode.ws_, Phi);
    }
    void Phi_q(const VecQ& q, bool after_Phi, Eigen::MatrixXd& G) {
      if (!after_Phi) frames(q);
      ode.loops_.jacobian(ode.ws_, G);
    }
  };

  const Model& model_;
  SpatialTree tree_;
  LoopClosure loops_;  // the cut joints' rows on tree_ (none on a tree)
  TreeWorkspace ws_;
  recursive::TreeForces forces_;  // the force elements (none: nothing evaluated)
  int n_m_, n_i_;                 // kept cut rows, independent coordinates
  VecQ qdd_;                      // the tree's accelerations
  Rows rows_;
  Coordinates pc_;
};

// Builds the tree of a model; "" when this formulation can run it, otherwise why not. Checked
// before anything of the model's size is allocated (common/dense_limit.hpp).
std::string build_tree(const Model& model, SpatialTree& tree) {
  if (std::string why = recursive::build_spatial_tree(model, tree); !why.empty()) return why;
  if (tree.has_quaternions)
    return "spherical joints or spatial rods on the tree: quaternion coordinates are not partitioned";
  // Dense: H (nv x nv); G, H^-1 G^T, the partitioner's LU and its copy of G (m x nv each); G H^-1 G^T
  // (m x m). A step factors H by its tree-sparse LTDL, G H^-1 G^T, G_d and, at a re-partition, G.
  const double nv = tree.nv, d = tree.depth;
  const double m = recursive::cut_row_count(model, tree);
  return dense_limit_reason("the mass matrix H and the loops' G, H^-1 G^T, G H^-1 G^T", 8.0 * (nv * nv + 4.0 * m * nv + m * m),
                            nv * d * d + m * m * m / 3.0 + m * m * nv);
}

// The partition of the loops' kept rows at q0.
Partition partition_at_q0(const Model& model, const SpatialTree& tree) {
  const LoopClosure loops(model, tree, nullptr);
  TreeWorkspace ws(tree, false);
  recursive::kinematics(tree, tree.q0, Eigen::VectorXd::Zero(tree.nv), ws);
  recursive::world_frames(tree, ws);
  Eigen::MatrixXd G(loops.kept_rows(), tree.nv);
  loops.jacobian(ws, G);
  return choose_partition(G);
}

class JointPartitioned final : public Formulation {
 public:
  std::string name() const override { return "joint-partitioned"; }
  std::string description() const override {
    return "a spanning tree's joint coordinates partitioned into independent and dependent ones (full-pivoting LU "
           "of the loops' Jacobian, re-chosen as G_d degrades); accelerations of the tree with its loops closed";
  }
  std::vector<IntegratorInfo> integrators() const override { return cases_.integrators(); }
  Accepts accepts() const override { return {{ElementRole::kForce}, recursive::tree_joint_types()}; }
  std::string structure_unsupported_reason(const Model& model) const override {
    SpatialTree tree;
    if (std::string why = build_tree(model, tree); !why.empty()) return why;
    if (partition_at_q0(model, tree).ndof() == 0)
      return "the model has no degrees of freedom (the loops' Jacobian has full column rank)";
    return "";
  }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    const ErkCase c = cases_.find(name(), integrator, setting);
    if (const std::string why = unsupported_reason(model); !why.empty()) throw SolverError("joint-partitioned: " + why);
    SpatialTree tree;
    build_tree(model, tree);
    const Partition p = partition_at_q0(model, tree);
    return make_erk_simulator<KeptPartition<JointPartitionedOde>, PartitionedSimulator>(c, model, setting, p,
                                                                                        std::move(tree));
  }

 private:
  const ErkCases cases_{{&kRk4, &kDopri5, &kFehlberg8}};
};

}  // namespace

MBS_REGISTER_FORMULATION(JointPartitioned);

}  // namespace mbs::joint_partitioned
