// Linearization of formulation "minimal" about a static equilibrium, in joint angles.
//
// Coordinates y (absolute angles, like the planar joint tree of joint_tree.hpp, extended to space):
// each rod of the tree places its far point at r = r_parent + L u, with
//   planar:  u = cos(theta) d + sin(theta) s                          (one angle per rod)
//   spatial: u = cos(theta) d + sin(theta) (cos(phi) e1 + sin(phi) e2)  (two angles per rod)
// d the gravity direction (downward; -z without gravity in space, e1 of the plane in a plane),
// s = d turned by +90 degrees in the plane, e1 the local axis most normal to d projected normal to
// it (x when gravity is along -z), e2 = e1 x d (y then): theta is the rod's angle from the downward
// direction and phi the azimuth of its horizontal projection from x, as in the 3D pendulum spec.
// Free points keep their dim translations.
//
// Linearized about the rest configuration y0 (v = 0), the velocity-transformation equations
// (R^T M R) y'' = R^T (Q - M c) with q = q(y), R = dq/dy, c quadratic in y', give
//   M_e dy'' + K_e dy = 0,   M_e = R^T M R,   K_e = d2V/dy2 = -sum_k L_k F_k . d2u_k/dy2,
// F_k the gravity load carried by rod k (sum of m g over the points it holds up). Analytic:
//   K_theta,theta = L F.u,  K_theta,phi = -L cos(theta) F.h',  K_phi,phi = L sin(theta) F.h,
//   h = cos(phi) e1 + sin(phi) e2,  h' = -sin(phi) e1 + cos(phi) e2.
// No damping (c is quadratic in the rates). At theta = 0 the azimuth phi moves nothing (its column
// of R vanishes), so M_e and K_e have zero phi rows and columns: for the 3D pendulum
// M_e = m l diag(l, 0), K_e = m l diag(g, 0), the spec's matrices times m l. Its pencil is singular
// (det(M_e s^2 + K_e) = 0 for every s); LinearModes deflates the phi direction (no mass, no
// stiffness) and reports it as two undetermined eigenvalues (0/0, s = NaN): the spec's "double
// infinite eigenvalue" of the cyclic coordinate. The rest is +-i sqrt(g/l), once.
//
// Equilibrium: the generalized force R^T Q must vanish, |R^T Q| <= 1e-8 |Q| |R|_F (same tolerance
// and reasoning as NaturalEquilibrium::kEquilibriumTol), else SolverError.
#include "minimal/linearizer.hpp"

#include "minimal/joint_tree.hpp"

#include <fmt/format.h>

#include <cmath>

#include "common/linear_modes.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs::minimal {
namespace {

struct AngleLink {
  int point = 0;
  int parent = kGround;
  int dof = 0;
  bool free = false;
  double length = 0.0;
  Eigen::Vector3d anchor = Eigen::Vector3d::Zero();  // ground end (local frame, zero-padded)
};

struct AngleTree {
  int dim = 2;
  int ndof = 0;
  Eigen::Vector3d down = Eigen::Vector3d::Zero(), e1 = Eigen::Vector3d::Zero(), e2 = Eigen::Vector3d::Zero();
  std::vector<AngleLink> links;  // parents before children
};

// A local-frame vector of 2 or 3 components as a 3-vector (zero third component in a plane).
template <typename V>
Eigen::Vector3d pad(const V& v) {
  Eigen::Vector3d p = Eigen::Vector3d::Zero();
  for (Eigen::Index i = 0; i < v.size(); ++i) p[i] = v[i];
  return p;
}

// The tree of rods from ground (rod_tree, as build_joint_tree), its angles numbered for 2 and 3 dimensions.
std::string build_angle_tree(const Model& model, AngleTree& tree) {
  tree = AngleTree{};
  tree.dim = model.dim;
  if (model.dim != 2 && model.dim != 3) return "joint angles need a planar or spatial model";
  if (!model.bodies.empty()) return "rigid bodies are not described in joint angles";
  if (has_tree_joint(model, TreeJointType::kSpherical)) return "spherical joints between anchors are not described in joint angles";
  if (model.has_role(ElementRole::kContact)) return "unilateral contacts are not linearized";
  std::vector<PointRod> rods;
  if (std::string why = point_rods(model, rods); !why.empty()) return why;
  const int per_rod = model.dim == 2 ? 1 : 2;
  // Frame: d along gravity; e1, e2 (space) or s = e1 (plane) normal to it.
  const Eigen::Vector3d g = pad(model.gravity);
  if (g.norm() > 0.0)
    tree.down = g.normalized();
  else
    tree.down = model.dim == 2 ? Eigen::Vector3d(1, 0, 0) : Eigen::Vector3d(0, 0, -1);
  if (model.dim == 2) {
    tree.e1 = Eigen::Vector3d(-tree.down[1], tree.down[0], 0.0);
  } else {
    int best = 0;
    for (int a = 1; a < 3; ++a)
      if (std::abs(tree.down[a]) < std::abs(tree.down[best]) - 1e-12) best = a;
    Eigen::Vector3d axis = Eigen::Vector3d::Unit(best);
    tree.e1 = (axis - axis.dot(tree.down) * tree.down).normalized();
    tree.e2 = tree.e1.cross(tree.down);
  }

  std::vector<RodTreeLink> links;
  const RodTreeIssue issue = rod_tree(model, rods, per_rod, links, tree.ndof);
  if (issue.kind == RodTreeIssue::Kind::kLoop)
    return fmt::format("closed loop or redundant rod at point {}: joint angles need a tree", model.points[issue.point].name);
  if (issue.kind == RodTreeIssue::Kind::kFloating)
    return fmt::format("point {} is linked by rods but not to ground: floating chains are not supported",
                       model.points[issue.point].name);
  for (const RodTreeLink& l : links) {
    const Eigen::Vector3d anchor = l.anchor != nullptr ? pad(*l.anchor) : Eigen::Vector3d(0, 0, 0);
    tree.links.push_back({l.point, l.parent, l.dof, l.free, l.length, anchor});
  }
  if (tree.ndof == 0) return "the model has no degrees of freedom";
  return "";
}

std::string describe(const Model& model, const AngleTree& tree) {
  auto vec = [&](const Eigen::Vector3d& v) {  // + 0.0: no "-0"
    return fmt::format("({:.3g}, {:.3g}, {:.3g})", v[0] + 0.0, v[1] + 0.0, v[2] + 0.0);
  };
  std::string out = tree.dim == 3
                        ? fmt::format("joint angles: per rod theta (from the gravity direction d = {}) and phi (azimuth "
                                      "about d from e1 = {} towards e2 = {}), absolute; per free point its translations:",
                                      vec(tree.down), vec(tree.e1), vec(tree.e2))
                        : fmt::format("joint angles: per rod theta (from d = {} towards s = {}), absolute; per free "
                                      "point its translations:",
                                      vec(tree.down), vec(tree.e1));
  for (const AngleLink& l : tree.links) {
    const std::string& p = model.points[l.point].name;
    if (l.free)
      out += fmt::format(tree.dim == 3 ? " x({0}), y({0}), z({0})" : " x({0}), y({0})", p);
    else
      out += fmt::format(tree.dim == 3 ? " theta({0}), phi({0})" : " theta({0})", p);
    out += ";";
  }
  out.pop_back();
  return out;
}

class MinimalLinearizer final : public Linearizer {
 public:
  MinimalLinearizer(const Model& model, AngleTree tree)
      : model_(model),
        tree_(std::move(tree)),
        nat_(model),
        n_(tree_.ndof),
        nq_(model.nq()),
        dim_(model.dim),
        modes_(n_, 0, nq_, model.nc(), false),
        q0_(model.initial_q()),
        m_(model.mass_diagonal()),
        Q_(nat_.Q()),
        R_(modes_.R),
        MR_(nq_, n_),
        M_e_(modes_.M),
        K_e_(modes_.K),
        f_(n_),
        load_(3, static_cast<int>(model.points.size())),
        geo_(tree_.links.size()) {
    lin_.coordinates = describe(model, tree_);
    lin_.rule = modes_.rule();
    lin_.terms = {{"M_e = R^T M R", M_e_}, {"K_e = d2V/dy2", K_e_}, {"R = dq/dy", R_}};
    modes_.prepare(lin_.eigenvalues);
  }

  const Linearization& linearize() override {
    kinematics();
    // Equilibrium: generalized gravity force R^T Q = -dV/dy. Coefficient-based products (lazyProduct):
    // joint-angle trees are small, where Eigen's general kernels cost more in setup than in arithmetic.
    f_.noalias() = R_.transpose().lazyProduct(Q_);
    const double scale = Q_.norm() * R_.norm();
    const double residual = scale > 0.0 ? f_.norm() / scale : f_.norm();
    if (!(residual <= NaturalEquilibrium::kEquilibriumTol))
      throw SolverError(fmt::format(
          "minimal: the initial configuration is not a static equilibrium (|R^T Q| = {:.3g} |Q| |R| > {:g} |Q| |R|)",
          residual, NaturalEquilibrium::kEquilibriumTol));
    MR_.noalias() = m_.asDiagonal() * R_;  // evaluated once: a lazy product would read it per coefficient
    M_e_.noalias() = R_.transpose().lazyProduct(MR_);
    stiffness();

    nat_.Phi_q(q0_, modes_.Phi_q);
    modes_.compute(lin_.eigenvalues);
    lin_.terms[0].second = M_e_;
    lin_.terms[1].second = K_e_;
    lin_.terms[2].second = R_;
    return lin_;
  }

 private:
  struct Geometry {  // per link, at y0
    double theta = 0.0, phi = 0.0;
    Eigen::Vector3d u, h, hp;  // u, h(phi), h'(phi)
  };

  // Angles of the initial configuration, R = dq/dy.
  void kinematics() {
    R_.setZero();
    for (size_t i = 0; i < tree_.links.size(); ++i) {
      const AngleLink& l = tree_.links[i];
      const int off = dim_ * l.point;
      if (l.free) {
        for (int c = 0; c < dim_; ++c) R_(off + c, l.dof + c) = 1.0;
        continue;
      }
      const Eigen::Vector3d r = pad3(l.point);
      const Eigen::Vector3d base = l.parent == kGround ? l.anchor : pad3(l.parent);
      const Eigen::Vector3d d = r - base;
      Geometry& g = geo_[i];
      const double along = d.dot(tree_.down);
      Eigen::Vector3d du_dtheta, du_dphi = Eigen::Vector3d::Zero();
      if (dim_ == 2) {
        g.theta = std::atan2(d.dot(tree_.e1), along);
        g.phi = 0.0;
        g.h = tree_.e1;  // planar: the side direction s
        g.hp.setZero();
        g.u = std::cos(g.theta) * tree_.down + std::sin(g.theta) * g.h;
        du_dtheta = -std::sin(g.theta) * tree_.down + std::cos(g.theta) * g.h;
      } else {
        const double x = d.dot(tree_.e1), y = d.dot(tree_.e2);
        g.theta = std::atan2(std::hypot(x, y), along);
        g.phi = std::atan2(y, x);  // 0 when the rod is along d
        g.h = std::cos(g.phi) * tree_.e1 + std::sin(g.phi) * tree_.e2;
        g.hp = -std::sin(g.phi) * tree_.e1 + std::cos(g.phi) * tree_.e2;
        g.u = std::cos(g.theta) * tree_.down + std::sin(g.theta) * g.h;
        du_dtheta = -std::sin(g.theta) * tree_.down + std::cos(g.theta) * g.h;
        du_dphi = std::sin(g.theta) * g.hp;
      }
      if (l.parent != kGround) R_.middleRows(off, dim_) = R_.middleRows(dim_ * l.parent, dim_);
      for (int c = 0; c < dim_; ++c) {
        R_(off + c, l.dof) += l.length * du_dtheta[c];
        if (dim_ == 3) R_(off + c, l.dof + 1) += l.length * du_dphi[c];
      }
    }
  }

  // K_e = d2V/dy2 from the loads F_k carried by each rod.
  void stiffness() {
    for (size_t p = 0; p < model_.points.size(); ++p) load_.col(p) = pad(Q_.segment(dim_ * p, dim_));
    K_e_.setZero();
    for (size_t j = tree_.links.size(); j-- > 0;) {  // children before parents
      const AngleLink& l = tree_.links[j];
      if (l.free) continue;
      const Eigen::Vector3d F = load_.col(l.point);
      if (l.parent != kGround) load_.col(l.parent) += F;
      const Geometry& g = geo_[j];
      const double L = l.length;
      K_e_(l.dof, l.dof) = L * F.dot(g.u);
      if (dim_ == 3) {
        const double k_tp = -L * std::cos(g.theta) * F.dot(g.hp);
        K_e_(l.dof, l.dof + 1) = K_e_(l.dof + 1, l.dof) = k_tp;
        K_e_(l.dof + 1, l.dof + 1) = L * std::sin(g.theta) * F.dot(g.h);
      }
    }
  }

  Eigen::Vector3d pad3(int point) const { return pad(q0_.segment(dim_ * point, dim_)); }

  const Model& model_;
  AngleTree tree_;
  NaturalCoordinates nat_;
  int n_, nq_, dim_;
  LinearModes modes_;
  Eigen::VectorXd q0_, m_, Q_;
  // R, M_e, K_e are the eigen-analysis' inputs themselves, written in place.
  Eigen::MatrixXd &R_, MR_, &M_e_, &K_e_;
  Eigen::VectorXd f_;
  Eigen::Matrix3Xd load_;
  std::vector<Geometry> geo_;
  Linearization lin_;
};

}  // namespace

std::string linearizer_unsupported_reason(const Model& model) {
  AngleTree tree;
  return build_angle_tree(model, tree);
}

std::unique_ptr<Linearizer> make_linearizer(const Model& model) {
  AngleTree tree;
  if (const std::string why = build_angle_tree(model, tree); !why.empty()) throw SolverError("minimal: " + why);
  return std::make_unique<MinimalLinearizer>(model, std::move(tree));
}

}  // namespace mbs::minimal
