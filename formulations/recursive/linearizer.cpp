// Linearization of formulation "recursive" about a static equilibrium, in the tree's own tangent
// coordinates.
//
// Coordinates: the tree's velocity coordinates as increments delta of its configuration q0,
// q = q0 (+) delta: a revolute or prismatic joint's variable, a free point's translation, plus
// delta; a spherical joint's quaternion times exp(delta / 2), delta a rotation vector in child
// coordinates (the frame of its angular velocity); a rod's the same with delta = e1 d1 + e2 d2, its
// 2 components normal to the rod (the spin moves nothing and is no coordinate). At delta = 0 the
// rates of these increments are the velocity coordinates, so the linearized mass matrix is the
// joint-space one, M = H(q0) by CRBA, positive definite.
//
// About q0 at rest with gravity the only load: M delta'' + K delta = 0, K = d2V/d delta2 with
// V = -sum_k m_k g . x_k over the bodies' centroids. No damping term: the velocity terms are
// quadratic in v (a force element would add its own; such models are `unsupported`).
//
// K, analytic. DOF a of body j has the motion-subspace column S_a turned to world, (omega_a, v_a)
// at j's joint origin o_j (omega_a = 0 for prismatic joints and free points): a point x moving with
// j's subtree has dx/d delta_a = J_a(x) = v_a + omega_a x (x - o_j). If a belongs to an ancestor of
// body j (or to j itself) and b to j, then at delta = 0 the whole subtree of j, J_b's vectors
// included, turns with a's twist: d v_b = omega_a x v_b, d omega_b = omega_a x omega_b,
// d (x - o_j) = omega_a x (x - o_j), and by Jacobi's identity
//   d2x / (d delta_a d delta_b) = omega_a x J_b(x)         (revolute pair: s_i x (s_j x (x - o_j))).
// Summed over the subtree of j, whose mass is m_j and first moment about o_j h_j = sum m_k (x_k - o_j):
//   tau_b = -dV/d delta_b = g . W_b,   W_b = m_j v_b + omega_b x h_j,
//   K_ab = -g . (omega_a x W_b) = (omega_a x g) . W_b,
// and K_ab = 0 when neither body is an ancestor of the other (one moves nothing the other does).
// Within one joint (spherical, rod) the exponential's second derivative is the symmetric
// 1/2 (e_a^ e_b^ + e_b^ e_a^), so K_ab = 1/2 ((omega_a x g) . W_b + (omega_b x g) . W_a): the exact
// Hessian at any configuration. The half dropped by symmetrizing, 1/2 (omega_a x omega_b) . (g x h_j),
// is a component of the gravity moment about o_j that the joint transmits, zero at an equilibrium;
// there K is also -d tau/d delta, which tests/test_recursive_linearizer.cpp checks by central
// differences of the generalized gravity force from ABA.
//
// Equilibrium: |tau| <= 1e-8 |g| |W|_F (a configuration off by an angle alpha leaves ~alpha; the
// tolerance and its reasoning are NaturalEquilibrium::kEquilibriumTol's), else SolverError.
//
// Eigenvalues: K y = omega^2 M y by Cholesky M = L L^T and the symmetric eigenvalues of
// L^-1 K L^-T (Eigen's LLT and SelfAdjointEigenSolver, eigenvalues only), s = +-sqrt(-omega^2):
// +-i omega for a stable mode, a real pair for an unstable one. Every eigenvalue is true: joint
// coordinates have no constraints and M is positive definite, so the pencil is regular with 2 n
// finite eigenvalues and every mode is a motion of the mechanism (no infinite or spurious ones to
// tell apart). Trees of up to 6 DOF take fixed-maximum-size matrices (as LinearModes::kSmall).
#include "recursive/linearizer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <complex>

#include "common/linear_modes.hpp"
#include "common/root_order.hpp"
#include "core/formulation.hpp"

namespace mbs::recursive {

GravityStiffness::GravityStiffness(const SpatialTree& tree)
    : mass_(tree.bodies.size(), 0.0),
      h_(tree.bodies.size(), Vec3::Zero()),
      w_(Eigen::Matrix3Xd::Zero(3, tree.nv)),
      W_(Eigen::Matrix3Xd::Zero(3, tree.nv)),
      c_(Eigen::Matrix3Xd::Zero(3, tree.nv)) {}

double GravityStiffness::evaluate(const SpatialTree& tree, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> tau,
                                  Eigen::Ref<Eigen::MatrixXd> K) {
  const int n = static_cast<int>(tree.bodies.size());
  const Vec3& g = tree.gravity;
  // World orientations (E turns parent coordinates into child ones), each body's own first moment.
  for (int i = 0; i < n; ++i) {
    const TreeBody& b = tree.bodies[i];
    if (b.parent < 0) ws.Rw[i] = ws.E[i].transpose();
    else ws.Rw[i].noalias() = ws.Rw[b.parent] * ws.E[i].transpose();
    mass_[i] = b.I(3, 3);  // the spatial inertia's mass entry (set for every kind of body)
    h_[i].noalias() = mass_[i] * (ws.Rw[i] * b.com);
  }
  // Subtrees, children before parents; moments carried from the child's origin to the parent's
  // (o_child - o_parent = Rw_parent r): relative vectors only, no cancellation of world positions.
  for (int i = n - 1; i >= 0; --i) {
    const int p = tree.bodies[i].parent;
    if (p < 0) continue;
    mass_[p] += mass_[i];
    h_[p] += h_[i];
    h_[p].noalias() += mass_[i] * (ws.Rw[p] * ws.r[i]);
  }
  for (int j = 0; j < n; ++j) {
    const TreeBody& b = tree.bodies[j];
    for (int k = 0; k < b.nv; ++k) {
      const int a = b.vi + k;
      const Vec3 w = ws.Rw[j] * b.S.col(k).head<3>();
      const Vec3 v = ws.Rw[j] * b.S.col(k).tail<3>();
      w_.col(a) = w;
      W_.col(a) = mass_[j] * v + w.cross(h_[j]);
      c_.col(a) = w.cross(g);
      tau[a] = g.dot(W_.col(a));
    }
  }
  K.setZero();
  for (int j = 0; j < n; ++j) {
    const TreeBody& b = tree.bodies[j];
    if (b.nv == 0) continue;
    for (int k = 0; k < b.nv; ++k)
      for (int l = 0; l <= k; ++l) {
        const int a = b.vi + k, c = b.vi + l;
        K(a, c) = K(c, a) = 0.5 * (c_.col(a).dot(W_.col(c)) + c_.col(c).dot(W_.col(a)));
      }
    for (int i = b.parent; i >= 0; i = tree.bodies[i].parent) {
      const TreeBody& bi = tree.bodies[i];
      for (int k = 0; k < bi.nv; ++k)
        for (int l = 0; l < b.nv; ++l) {
          const int a = bi.vi + k, c = b.vi + l;
          K(a, c) = K(c, a) = c_.col(a).dot(W_.col(c));
        }
    }
  }
  return g.norm() * W_.norm();
}

namespace {

// The pencil's matrices and decompositions, sized at setup: Max = the fixed maximum size, or
// Eigen::Dynamic.
template <int Max>
struct Pencil {
  using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor, Max, Max>;
  explicit Pencil(int n) : M(Mat::Zero(n, n)), K(Mat::Zero(n, n)), C(Mat::Zero(n, n)), llt(n), eig(n) {}
  // omega^2 of K y = omega^2 M y, ascending, in eig.eigenvalues(); false if M is not positive
  // definite or the eigensolver did not converge.
  bool solve() {
    llt.compute(M);
    if (llt.info() != Eigen::Success) return false;
    C = K;
    llt.matrixL().solveInPlace(C);
    llt.matrixU().template solveInPlace<Eigen::OnTheRight>(C);
    eig.compute(C, Eigen::EigenvaluesOnly);
    return eig.info() == Eigen::Success;
  }
  Mat M, K, C;
  Eigen::LLT<Mat> llt;
  Eigen::SelfAdjointEigenSolver<Mat> eig;
};

constexpr int kSmall = LinearModes::kSmall;

// A unit axis for the text: components at round-off (|x| <= 1e-12) as 0, and + 0.0: no "-0".
std::string vec(const Vec3& v) {
  auto c = [](double x) { return std::abs(x) <= 1e-12 ? 0.0 : x + 0.0; };
  return fmt::format("({:.3g}, {:.3g}, {:.3g})", c(v[0]), c(v[1]), c(v[2]));
}

// The coordinates, joint by joint, with their world axes at q0 (ws.Rw evaluated there).
std::string describe(const SpatialTree& tree, const TreeWorkspace& ws) {
  std::string out =
      "joint coordinates: the tree's velocity coordinates as tangent increments of q0 (q0 (+) delta; "
      "quaternions times exp(delta/2), delta in child axes), axes in the model's frame at q0:";
  for (size_t i = 0; i < tree.bodies.size(); ++i) {
    const TreeBody& b = tree.bodies[i];
    if (b.nv == 0) continue;
    const Mat3& R = ws.Rw[i];
    switch (b.type) {
      case JointType::kRevolute:
        out += fmt::format(" {} (revolute, {}): angle about {};", b.joint, b.name, vec(R * b.axis));
        break;
      case JointType::kPrismatic:
        out += fmt::format(" {} (prismatic, {}): slide along {};", b.joint, b.name, vec(R * b.axis));
        break;
      case JointType::kSpherical:
        if (b.rod)
          out += fmt::format(" {} (rod to {}): rotation about {} and {}, normal to the rod;", b.joint, b.name,
                             vec(R * b.S.col(0).head<3>()), vec(R * b.S.col(1).head<3>()));
        else
          out += fmt::format(" {} (spherical, {}): rotation about {}, {}, {};", b.joint, b.name, vec(R.col(0)),
                             vec(R.col(1)), vec(R.col(2)));
        break;
      case JointType::kTranslation:
        out += fmt::format(tree.dim == 3 ? " {0} ({1}): x({0}), y({0}), z({0});" : " {0} ({1}): x({0}), y({0});", b.name,
                           b.point >= 0 ? "free point" : "free body, its centroid");
        break;
      case JointType::kFixed: break;
    }
  }
  out.pop_back();
  return out;
}

class RecursiveLinearizer final : public Linearizer {
 public:
  explicit RecursiveLinearizer(SpatialTree tree)
      : tree_(std::move(tree)),
        ws_(tree_, true),
        n_(tree_.nv),
        v0_(Eigen::VectorXd::Zero(n_)),
        gravity_(tree_),
        tau_(Eigen::VectorXd::Zero(n_)),
        roots_(2 * n_) {
    if (n_ <= kSmall) small_ = std::make_unique<Pencil<kSmall>>(n_);
    else dynamic_ = std::make_unique<Pencil<Eigen::Dynamic>>(n_);
    kinematics(tree_, tree_.q0, v0_, ws_);
    Eigen::MatrixXd K(n_, n_);
    gravity_.evaluate(tree_, ws_, tau_, K);  // for ws_.Rw, the world axes
    lin_.coordinates = describe(tree_, ws_);
    lin_.rule = fmt::format(
        "every eigenvalue is true: joint coordinates have no constraints and M is positive definite, so the "
        "pencil (K, M) is regular with 2 n = {} finite eigenvalues, each a motion of the mechanism",
        2 * n_);
    lin_.terms = {{"M", Eigen::MatrixXd::Zero(n_, n_)}, {"K", Eigen::MatrixXd::Zero(n_, n_)}};
    lin_.eigenvalues.resize(2 * n_);
    for (Eigenvalue& e : lin_.eigenvalues) e.why = "true: joint coordinates (no constraints, M positive definite)";
  }

  const Linearization& linearize() override { return small_ ? run(*small_) : run(*dynamic_); }

 private:
  struct Root {
    std::complex<double> s;
    double magnitude;
  };

  template <class P>
  const Linearization& run(P& p) {
    kinematics(tree_, tree_.q0, v0_, ws_);
    const double scale = gravity_.evaluate(tree_, ws_, tau_, p.K);
    const double residual = scale > 0.0 ? tau_.norm() / scale : tau_.norm();
    if (!(residual <= NaturalEquilibrium::kEquilibriumTol))
      throw SolverError(fmt::format(
          "recursive: the initial configuration is not a static equilibrium (|tau| = {:.3g} |g| |W| > {:g} |g| |W|)",
          residual, NaturalEquilibrium::kEquilibriumTol));
    composite_mass_matrix(tree_, ws_);
    p.M = ws_.H.selfadjointView<Eigen::Lower>();
    if (!p.solve()) throw SolverError("recursive: the joint-space mass matrix is not positive definite");
    for (int k = 0; k < n_; ++k) {
      const double lambda = p.eig.eigenvalues()[k], r = std::sqrt(std::abs(lambda));
      // Built, not negated: no -0 parts in the output.
      const bool stable = lambda >= 0.0;
      roots_[2 * k] = {stable ? std::complex<double>(0.0, -r) : std::complex<double>(-r, 0.0), r};
      roots_[2 * k + 1] = {stable ? std::complex<double>(0.0, r) : std::complex<double>(r, 0.0), r};
    }
    sort_by_magnitude(roots_);
    for (int i = 0; i < 2 * n_; ++i) {
      Eigenvalue& e = lin_.eigenvalues[i];
      e.s = roots_[i].s;
      e.finite = true;
      e.is_true = true;
    }
    lin_.terms[0].second = p.M;
    lin_.terms[1].second = p.K;
    return lin_;
  }

  SpatialTree tree_;
  TreeWorkspace ws_;
  int n_;
  Eigen::VectorXd v0_;
  GravityStiffness gravity_;
  Eigen::VectorXd tau_;
  std::unique_ptr<Pencil<kSmall>> small_;
  std::unique_ptr<Pencil<Eigen::Dynamic>> dynamic_;
  std::vector<Root> roots_;
  Linearization lin_;
};

}  // namespace

std::string linearizer_unsupported_reason(const Model& model) {
  for (const auto& e : model.elements)
    if (e->role() != ElementRole::kJoint)
      return fmt::format("element {} ({}): gravity is the only load linearized, {} elements are not", e->name, e->kind(),
                         to_string(e->role()));
  SpatialTree tree;
  if (std::string why = build_spatial_tree(model, tree); !why.empty()) return why;
  if (!tree.cuts.empty())
    return fmt::format("closed loop: joint {} closes one; the linearization takes trees", tree.cuts.front()->name);
  return "";
}

std::unique_ptr<Linearizer> make_linearizer(const Model& model) {
  if (const std::string why = linearizer_unsupported_reason(model); !why.empty()) throw SolverError("recursive: " + why);
  SpatialTree tree;
  build_spatial_tree(model, tree);
  return std::make_unique<RecursiveLinearizer>(std::move(tree));
}

}  // namespace mbs::recursive
