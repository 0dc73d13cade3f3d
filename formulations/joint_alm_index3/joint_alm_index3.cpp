// Formulation "joint-alm-index3": the index-3 augmented Lagrangian with mass-orthogonal projections
// of velocities and accelerations (ALI3-P: Bayo & Ledesma 1996; Cuadrado, Cugat & Dopico 2000) in
// the joint coordinates of recursive's spanning tree, the cut joints' rows closing the loops
// (recursive/loop_closure.hpp), integrated by the trapezoidal rule: the joint-coordinate form of the
// semi-recursive methods of Cuadrado, Dopico and co-workers, with the tree's mass matrix by CRBA.
//
//   H(q) q'' + G^T (alpha Phi + lambda) = b(q, q'),   lambda <- lambda + alpha Phi  (every iteration)
// with b = tau - C(q, q') (gravity, force elements) by recursive Newton-Euler and G = Phi_q. With
// q = q_{n+1} the unknown, q'' = 4/h^2 (q - c), c = q_n + h q'_n + h^2/4 q''_n, q' = 2/h (q - q_n) - q'_n:
//   f(q) = H (q - c) + h^2/4 (G^T mu - b),   mu = alpha Phi + lambda
//   T    = H + h^2/4 alpha G^T G
// T leaves out dH/dq and the geometric stiffness sum lambda_k Phi_k,qq (in joint coordinates they
// would cost a derivative of the recursions), and b's own derivatives: Newton then contracts
// linearly, by O(h) an iteration (h/2 db/dq', the Coriolis terms), rather than quadratically,
// and the modified-Newton loop refactors T when it contracts by less than half. With force
// elements, a tangent refactored within a step also takes
// -h^2/4 (b_q + 2/h b_q') by forward differences of b (one recursive Newton-Euler pass a DOF; LU,
// as it is unsymmetric): a stiff spring or a strong damper (h^2 k / 4m or h c / 2m near 1) makes
// Newton diverge without them, while on a step it converges on the first tangent is cheaper. A step
// that needed them starts the next kFullTangentSteps steps with them (stiffness rarely comes and
// goes within a few steps), after which the cheap tangent is tried again.
// The projections use T as alm-index3's do with M on the right:
//   T q'  = H q'*                                  (q' = q'* - T^-1 h^2/4 alpha G^T G q'*)
//   T q'' = H q''* - h^2/4 alpha G^T (G q''* - gamma),   gamma = -d/dt(G) q'.
// A tree (no cut joint) takes the same step with m = 0: the plain trapezoidal rule on H q'' = b.
//
// Trees without quaternions only (revolute, prismatic and fixed joints, planar free bodies): the
// trapezoidal rule's q and q' are then the same coordinates. No contacts (not implemented).
#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <memory>

#include "common/augmented_lagrangian.hpp"
#include "common/dense_limit.hpp"
#include "common/length_scale.hpp"
#include "common/modified_newton.hpp"
#include "core/formulation.hpp"
#include "recursive/crba.hpp"
#include "recursive/kinematics.hpp"
#include "recursive/loop_closure.hpp"
#include "recursive/spatial_tree.hpp"
#include "recursive/tree_forces.hpp"

namespace mbs::joint_alm_index3 {
namespace {

using recursive::SpatialTree;

// alm-index3's penalty, Newton tolerance and raise of alpha at singular positions
// (common/augmented_lagrangian.hpp), with the largest body mass as the mass scale: G^T G carries
// (m/rad)^2 where H carries kg m^2/rad^2, so h^2 alpha G^T G / 4 stands to H as h^2 alpha / 4m
// does in natural coordinates. Newton converges when every |dq_k| <= kNewtonTol (rad, or x the
// model's length for a slide) and |Phi|_inf <= kNewtonTol x the length.
using augmented_lagrangian::kNewtonTol;
using augmented_lagrangian::kStallRatio;
constexpr NewtonRules kNewton{40, kStallRatio, true};
// The forward-difference step of db/dq (rad, or x the model's length): ~sqrt(eps), the tangent
// needs no more than a few digits.
constexpr double kDifferenceStep = 1e-7;
constexpr int kFullTangentSteps = 16;

class JointAlmSimulator final : public FixedStepSimulator {
 public:
  JointAlmSimulator(const Model& model, double h, SpatialTree tree)
      : FixedStepSimulator(model, h), tree_(std::move(tree)), loops_(model, tree_, &stats_), ws_(tree_, true),
        forces_(tree_, model), nv_(tree_.nv), m_(loops_.kept_rows()), q_(nv_), v_(nv_), a_(nv_), q_n_(nv_), v_n_(nv_),
        a_n_(nv_), c_(nv_), f_(nv_), dq_(nv_), w_(nv_), inv_scale_(nv_), Phi_(m_), lambda_(m_), lambda_n_(m_), mu_(m_),
        r_(m_), Phi_q_v_(m_), gamma_(m_), b0_(nv_), dq_fd_(nv_), v_fd_(nv_), G_(m_, nv_), T_(nv_, nv_), llt_(nv_), lu_(nv_),
        ab_(tree_.bodies.size(), recursive::Vec6::Zero()) {
    ws_.H.setZero();
    double m_ref = 0.0;
    for (const recursive::TreeBody& b : tree_.bodies) m_ref = std::max(m_ref, b.mass);
    m_alpha_ = m_ref > 0.0 ? m_ref : 1.0;
    length_ = position_scale(model);
    tol_Phi_ = kNewtonTol * length_;
    // dq_k in units of the tolerance: rad for a rotation, the model's length for a slide.
    for (const recursive::TreeBody& b : tree_.bodies) {
      const bool slide = b.type == recursive::JointType::kPrismatic || b.type == recursive::JointType::kTranslation;
      inv_scale_.segment(b.vi, b.nv).setConstant(slide ? 1.0 / length_ : 1.0);
    }
  }

 private:
  void do_initialize_state() override {
    q_ = tree_.q0;
    v_ = tree_.v0;
    full_tangent_steps_ = 0;
    lambda_.setZero();
    // Consistent initial accelerations: the tree's, corrected by the loops' multipliers.
    const recursive::BodyForces* f_ext = forces_.empty() ? nullptr : &forces_.evaluate(q_, v_, ws_);
    recursive::crba(tree_, q_, v_, ws_, a_, f_ext);
    if (m_ != 0) loops_.constrain(q_, v_, ws_, a_);
    ws_.H.setZero();  // crba and constrain leave factors in H's pattern; the residual refills it
    if (!a_.allFinite()) throw SolverError("joint-alm-index3: non-finite initial accelerations");
  }

  void do_step_size_chosen(double h) override {
    h_ = h;
    h24_ = 0.25 * h * h;
    alpha_ = alpha_step_ = augmented_lagrangian::step_penalty(m_alpha_, h24_);
  }

  void do_fixed_step(double /*h*/) override {
    newton();
    project();
  }

  void do_model_state() override { recursive::model_state(tree_, model(), q_, v_, ws_, q_model_, v_model_); }

  struct NewtonHooks {
    JointAlmSimulator& s;
    void newton_residual() { s.residual(); }
    void newton_tangent() { s.tangent(); }
    double newton_correct() { return s.correct(); }
    bool newton_converged(const NewtonIterate& x) { return s.converged(x); }
    [[noreturn]] void newton_failed(const NewtonIterate& x) const { s.failed(x); }
  };

  void newton() {
    alpha_ = alpha_step_;
    lambda_n_ = lambda_;
    q_n_ = q_;
    v_n_ = v_;
    a_n_ = a_;
    tangents_in_step_ = 0;
    full_first_ = full_tangent_steps_ > 0;
    if (full_first_) --full_tangent_steps_;
    c_ = q_n_ + h_ * v_n_ + h24_ * a_n_;
    q_ = q_n_ + h_ * v_n_ + (2.0 * h24_) * a_n_;  // predictor: Taylor to second order
    state_at_q();
    NewtonHooks hooks{*this};
    ModifiedNewton::run(hooks, kNewton, stats_);
    if (!forces_.empty() && tangents_in_step_ > 1) full_tangent_steps_ = kFullTangentSteps;  // it needed a refactored tangent
    if (alpha_ != alpha_step_) {  // as alm-index3: the raised alpha stays out of the projections and the next step
      lambda_ = lambda_n_;
      alpha_ = alpha_step_;
      residual();
      tangent();
      ++stats_.jacobian_evals;
    }
  }

  // At a new iterate q_: q' by the trapezoidal rule, the tree's kinematics (and world frames, the
  // force elements) at (q_, q'), and Phi(q_); once an iterate, for the convergence test and the
  // next residual both.
  void state_at_q() {
    v_ = (2.0 / h_) * (q_ - q_n_) - v_n_;
    if (!forces_.empty()) {
      f_ext_ = &forces_.evaluate(q_, v_, ws_);  // runs the kinematics and the world frames
    } else {
      recursive::kinematics(tree_, q_, v_, ws_);
      if (m_ != 0) recursive::world_frames(tree_, ws_);
    }
    kinematics_at_q_ = true;
    if (m_ != 0) loops_.positions(ws_, Phi_);
  }

  // f at q_ from state_at_q()'s kinematics; leaves H(q_) in ws_.H and G(q_) in G_ for the tangent.
  void residual() {
    recursive::mass_matrix_and_bias(tree_, ws_, f_ext_);
    dq_ = q_ - c_;
    f_.noalias() = ws_.H.selfadjointView<Eigen::Lower>() * dq_;
    w_ = -ws_.b;
    if (m_ != 0) {
      loops_.jacobian(ws_, G_);
      mu_ = lambda_ + alpha_ * Phi_;
      w_.noalias() += G_.transpose() * mu_;
    }
    f_ += h24_ * w_;
  }

  // T = H + h^2/4 alpha G^T G at the residual's q, factored (its lower triangle); a step's second
  // tangent on a model with force elements also -h^2/4 db/dq by forward differences along
  // (dq, 2/h dq), the whole T, by LU.
  void tangent() {
    if (m_ != 0) T_.noalias() = (h24_ * alpha_) * G_.transpose() * G_;
    else T_.setZero();
    T_.triangularView<Eigen::Lower>() += ws_.H;
    lu_active_ = !forces_.empty() && (full_first_ || tangents_in_step_ > 0);
    ++tangents_in_step_;
    if (!lu_active_) {
      llt_.compute(T_);
      if (llt_.info() != Eigen::Success)
        throw SolverError(fmt::format("joint-alm-index3: the tangent is not positive definite at t = {:.9g} s", time() + h_));
      return;
    }
    T_.triangularView<Eigen::StrictlyUpper>() += ws_.H.transpose();
    b0_ = ws_.b;
    kinematics_at_q_ = false;  // the differences move the workspace's state
    for (int k = 0; k < nv_; ++k) {
      const double d = kDifferenceStep / inv_scale_[k];
      dq_fd_ = q_;
      v_fd_ = v_;
      dq_fd_[k] += d;
      v_fd_[k] += (2.0 / h_) * d;
      const recursive::BodyForces& f_ext = forces_.evaluate(dq_fd_, v_fd_, ws_);
      recursive::mass_matrix_and_bias(tree_, ws_, &f_ext);
      T_.col(k) -= (h24_ / d) * (ws_.b - b0_);
    }
    lu_.compute(T_);
  }
  // x = T^-1 x with the last factored T.
  void solve_in_place(Eigen::VectorXd& x) {
    if (!lu_active_) {
      llt_.solveInPlace(x);
    } else {
      dq_fd_ = x;
      x.noalias() = lu_.solve(dq_fd_);
    }
  }

  // q -= T^-1 f, Phi at the new q, lambda += alpha Phi; |dq| in tolerance units.
  double correct() {
    dq_ = f_;
    solve_in_place(dq_);
    q_ -= dq_;
    state_at_q();
    if (m_ != 0) lambda_ += alpha_ * Phi_;
    return dq_.cwiseProduct(inv_scale_).cwiseAbs().maxCoeff();
  }

  bool converged(const NewtonIterate& x) {
    if (!dq_.allFinite() || !lambda_.allFinite())
      throw SolverError(fmt::format("joint-alm-index3: non-finite state at t = {:.9g} s", time() + h_));
    if (m_ == 0) return x.dq <= kNewtonTol;  // a tree: no penalty to raise
    return augmented_lagrangian::converged_or_raise(x, kNewtonTol, Phi_.cwiseAbs().maxCoeff(), tol_Phi_, alpha_step_, alpha_);
  }
  [[noreturn]] void failed(const NewtonIterate& x) const {
    throw SolverError(fmt::format("joint-alm-index3: Newton-Raphson did not converge at t = {:.9g} s ({} iterations, "
                                  "|dq| = {:.3g} of the tolerance)", time() + h_, x.it, x.dq / kNewtonTol));
  }

  // The trapezoidal q'*, q''* at the converged q, projected with the last factored T (file comment).
  void project() {
    const double s = 2.0 / h_;
    v_ = s * (q_ - q_n_) - v_n_;
    a_ = (s * s) * (q_ - q_n_) - (2.0 * s) * v_n_ - a_n_;
    if (m_ != 0) {
      const double k = h24_ * alpha_;
      if (!kinematics_at_q_) {  // v_ is state_at_q()'s: the kinematics is the converged q's unless moved
        recursive::kinematics(tree_, q_, v_, ws_);
        recursive::world_frames(tree_, ws_);
      }
      loops_.jacobian(ws_, G_);
      r_.noalias() = k * (G_ * v_);
      w_.noalias() = G_.transpose() * r_;
      solve_in_place(w_);
      v_ -= w_;
      recursive::kinematics(tree_, q_, v_, ws_);  // gamma at the projected q'
      recursive::bias_accelerations(tree_, ws_, ab_);
      loops_.velocities(ws_, ab_, Phi_q_v_, gamma_);
      r_.noalias() = G_ * a_;
      r_ = k * (r_ - gamma_);
      w_.noalias() = G_.transpose() * r_;
      solve_in_place(w_);
      a_ -= w_;
    }
    if (!v_.allFinite() || !a_.allFinite())
      throw SolverError(fmt::format("joint-alm-index3: non-finite state at t = {:.9g} s", time() + h_));
  }

  SpatialTree tree_;
  recursive::LoopClosure loops_;  // the cut joints' kept rows (none on a tree)
  recursive::TreeWorkspace ws_;
  recursive::TreeForces forces_;
  int nv_, m_;
  Eigen::VectorXd q_, v_, a_;        // state at time()
  Eigen::VectorXd q_n_, v_n_, a_n_;  // at the step's start
  Eigen::VectorXd c_, f_, dq_, w_;   // c = q_n + h q'_n + h^2/4 q''_n; residual; correction; scratch
  Eigen::VectorXd inv_scale_;        // 1 / each DOF's tolerance unit
  Eigen::VectorXd Phi_, lambda_, lambda_n_, mu_, r_, Phi_q_v_, gamma_;
  Eigen::VectorXd b0_, dq_fd_, v_fd_;  // the tangent's differences (and the LU's solve)
  Eigen::MatrixXd G_, T_;
  Eigen::LLT<Eigen::MatrixXd, Eigen::Lower> llt_;  // T without force elements (symmetric positive definite)
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;        // with their differences
  bool lu_active_ = false;                          // the last tangent is lu_'s
  bool kinematics_at_q_ = false;                    // ws_ holds state_at_q()'s kinematics
  const recursive::BodyForces* f_ext_ = nullptr;    // the force elements at q_ (none: nullptr)
  int tangents_in_step_ = 0;                        // tangents factored in this step
  bool full_first_ = false;                         // this step's first tangent takes the differences
  int full_tangent_steps_ = 0;                      // steps left that start with them
  std::vector<recursive::Vec6> ab_;  // bias accelerations (gamma)
  double h_ = 0.0, h24_ = 0.0, alpha_ = 0.0, alpha_step_ = 0.0, m_alpha_ = 1.0, length_ = 1.0, tol_Phi_ = 0.0;
};

class JointAlmIndex3 final : public Formulation {
 public:
  std::string name() const override { return "joint-alm-index3"; }
  std::string description() const override {
    return "joint coordinates of a spanning tree (CRBA), cut joints' loop rows; index-3 augmented Lagrangian with "
           "mass-orthogonal projections (ALI3-P), trapezoidal rule";
  }
  std::vector<IntegratorInfo> integrators() const override {
    return {{"trapezoidal", SettingKind::kFixedStep, 0.05, 1e-5,
             "trapezoidal rule, Newton-Raphson on the joint coordinates, mass-orthogonal projections", ""}};
  }
  // Force elements act on the tree's bodies as recursive's do (TreeForces); joints by their tree
  // descriptions, as recursive's (quaternions, in space, refused in structure_unsupported_reason).
  Accepts accepts() const override { return {{ElementRole::kForce}, recursive::tree_joint_types()}; }
  std::string structure_unsupported_reason(const Model& model) const override {
    SpatialTree tree;
    if (std::string why = recursive::build_spatial_tree(model, tree); !why.empty()) return why;
    if (tree.has_quaternions)
      return "quaternion coordinates (a spherical joint, a rod or a free body in space): the trapezoidal rule on unit "
             "quaternions is not implemented";
    return "";
  }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    if (integrator != "trapezoidal")
      throw SolverError(fmt::format("joint-alm-index3: unknown integrator '{}' (known: trapezoidal)", integrator));
    if (!(setting > 0.0) || !std::isfinite(setting))
      throw SolverError(fmt::format("joint-alm-index3: step size must be positive and finite, got {}", setting));
    if (const std::string why = unsupported_reason(model); !why.empty()) throw SolverError("joint-alm-index3: " + why);
    SpatialTree tree;
    if (const std::string why = recursive::build_spatial_tree(model, tree); !why.empty()) throw SolverError(why);
    const double nv = tree.nv;
    const double m = recursive::cut_row_count(model, tree);
    if (const std::string why = dense_limit_reason("the tangent H + h^2/4 alpha G^T G and the loops' G",
                                                   8.0 * (2.0 * nv * nv + m * nv), nv * nv * nv / 3.0);
        !why.empty())
      throw SolverError("joint-alm-index3/trapezoidal: " + why);
    return std::make_unique<JointAlmSimulator>(model, setting, std::move(tree));
  }
};

}  // namespace

MBS_REGISTER_FORMULATION(JointAlmIndex3);

}  // namespace mbs::joint_alm_index3
