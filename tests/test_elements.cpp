// The element kinds (revolute, prismatic, fixed, spring_damper, torque, force; planar and spatial
// rigid bodies given by mass and inertia, a full tensor, or shape and density, with named points
// and attached point masses): their rows and forces against finite differences, the degrees of
// freedom they leave, the declared support, and the motion every accepting formulation computes
// (energy balance at the method's order, agreement between independent formulations).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "problem/element_kinds.hpp"
#include "problem/problem.hpp"
#include "support/load_error.hpp"
#include "run/scoring.hpp"

namespace mbs {
namespace {

// A bar on a revolute to the ground, driven by a torque and a point force, and a block on an
// inclined prismatic, joined by a spring: 2 degrees of freedom, every force conservative.
const char* kPlanar = R"(
name: elements_planar
space: planar
gravity: [0.0, -9.81, 0.0]
bodies:
  - {name: bar, kind: rigid_body, mass: 2.0, inertia: 0.5, position: [0.5, 0.0, 0.0],
     points: {O: [-0.5, 0.0], E: [0.5, 0.0]}}
  - {name: block, kind: rigid_body, shape: {box: [0.2, 0.1, 0.1]}, density: 500.0, position: [2.0, 0.0, 0.0],
     orientation: {angle_deg: 30.0}}
joints:
  - {name: pin, kind: revolute, a: ground, b: bar.O, at: [0.0, 0.0, 0.0]}
  - {name: slide, kind: prismatic, a: ground, b: block, at: [2.0, 0.0, 0.0], axis: [0.6, 0.8, 0.0]}
forces:
  - {name: spring, kind: spring_damper, a: bar.E, b: {body: block, at: [0.0, 0.0]}, stiffness: 50.0, rest_length: 1.2}
  - {name: motor, kind: torque, body: bar, torque: 0.7}
  - {name: push, kind: force, at: bar.E, force: [0.0, 1.0, 0.0]}
run: {end_time: 1.0}
score: {rule: {metric: max_energy_drift, below: 1.0e-6}}
)";

// A hinged arm carrying a welded plate (full inertia tensor) and a point mass, and a slider on a
// vertical rail, joined by a spring: 2 degrees of freedom, every force conservative.
const char* kSpatial = R"(
name: elements_spatial
space: spatial
gravity: [0.0, 0.0, -9.81]
bodies:
  - {name: arm, kind: rigid_body, shape: {box: [1.0, 0.1, 0.1]}, density: 100.0, position: [0.5, 0.0, 0.0],
     points: {O: [-0.5, 0.0, 0.0], T: [0.5, 0.0, 0.0]}, point_masses: [{mass: 0.5, at: [0.5, 0.0, 0.0]}]}
  - {name: slider, kind: rigid_body, mass: 1.0, inertia: [0.01, 0.02, 0.025], position: [0.0, 0.0, -1.0]}
  - {name: plate, kind: rigid_body, mass: 0.5, inertia: [[0.01, 0.001, 0.0], [0.001, 0.02, 0.0], [0.0, 0.0, 0.025]],
     position: [1.2, 0.0, 0.0], orientation: {axis: [1.0, 1.0, 0.0], angle_deg: 20.0}}
joints:
  - {name: hinge, kind: revolute, a: ground, b: arm.O, at: [0.0, 0.0, 0.0], axis: [0.0, 1.0, 0.0]}
  - {name: rail, kind: prismatic, a: {ground: [0.0, 0.0, -1.0]}, b: {body: slider, at: [0.0, 0.0, 0.0]}, axis: [0.0, 0.0, 1.0]}
  - {name: weld, kind: fixed, a: arm.T, b: plate, at: [1.0, 0.0, 0.0]}
forces:
  - {name: spring, kind: spring_damper, a: arm.T, b: {body: slider, at: [0.0, 0.0, 0.0]}, stiffness: 100.0}
run: {end_time: 1.0}
score: {rule: {metric: max_energy_drift, below: 1.0e-6}}
)";

std::string with(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

int rank(const Eigen::MatrixXd& A) {
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(A);
  qr.setThreshold(1e-10);
  return static_cast<int>(qr.rank());
}

class ElementKindsTest : public ::testing::TestWithParam<const char*> {};

// Rows: Phi_q, d/dt(Phi_q) v and sum mu_k Phi_k,qq against central differences; forces (a damper
// and a spatial torque added): dQ/dq, dQ/dv likewise. Off the initial state, with velocities, so
// that no term vanishes by symmetry.
TEST_P(ElementKindsTest, JacobiansMatchFiniteDifferences) {
  std::string text = GetParam();
  const bool spatial_model = text.find("elements_spatial") != std::string::npos;
  text = spatial_model ? with(text, "stiffness: 100.0", "stiffness: 100.0, damping: 3.0")
                       : with(text, "stiffness: 50.0", "stiffness: 50.0, damping: 3.0");
  if (text.find("elements_spatial") != std::string::npos)
    text = with(text, "run:", "  - {name: twist, kind: torque, body: plate, torque: [0.1, 0.2, 0.3]}\nrun:");
  const Problem p = load_problem_text(text, "elements.yaml");
  const NaturalCoordinates nat(p.model);
  const int n = nat.nq(), m = nat.nc();
  const Eigen::VectorXd q = p.model.initial_q() + 0.02 * Eigen::VectorXd::LinSpaced(n, -1, 1);
  const Eigen::VectorXd v = Eigen::VectorXd::LinSpaced(n, 0.3, -0.7);
  const Eigen::VectorXd mu = Eigen::VectorXd::LinSpaced(m, -2.0, 3.0);
  const double eps = 1e-6;  // central differences: truncation O(eps^2), round-off O(1e-16 / eps)

  Eigen::MatrixXd J(m, n), J_fd(m, n), Jp(m, n), Jm(m, n);
  Eigen::VectorXd fp(m), fm(m);
  nat.Phi_q(q, J);
  for (int j = 0; j < n; ++j) {
    Eigen::VectorXd qp = q, qm = q;
    qp[j] += eps, qm[j] -= eps;
    nat.Phi(qp, fp), nat.Phi(qm, fm);
    J_fd.col(j) = (fp - fm) / (2 * eps);
  }
  EXPECT_LT((J - J_fd).cwiseAbs().maxCoeff(), 1e-8);
  Eigen::VectorXd Jdot_v(m);
  nat.Phi_q_dot_v(q, v, Jdot_v);
  nat.Phi_q(q + eps * v, Jp), nat.Phi_q(q - eps * v, Jm);
  EXPECT_LT((Jdot_v - (Jp - Jm) * v / (2 * eps)).cwiseAbs().maxCoeff(), 1e-8);
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n, n), K_fd(n, n);
  nat.add_Phi_qq_times(mu, K);
  for (int j = 0; j < n; ++j) {
    Eigen::VectorXd qp = q, qm = q;
    qp[j] += eps, qm[j] -= eps;
    nat.Phi_q(qp, Jp), nat.Phi_q(qm, Jm);
    K_fd.col(j) = (Jp - Jm).transpose() * mu / (2 * eps);
  }
  EXPECT_LT((K - K_fd).cwiseAbs().maxCoeff(), 1e-7);

  ASSERT_TRUE(nat.has_force_elements());
  Eigen::MatrixXd Kq = Eigen::MatrixXd::Zero(n, n), Kv = Eigen::MatrixXd::Zero(n, n), Kq_fd(n, n), Kv_fd(n, n);
  nat.add_Q_jacobians(q, v, Kq, Kv);
  Eigen::VectorXd Qp(n), Qm(n);
  for (int j = 0; j < n; ++j) {
    Eigen::VectorXd qp = q, qm = q, vp = v, vm = v;
    qp[j] += eps, qm[j] -= eps, vp[j] += eps, vm[j] -= eps;
    nat.Q(qp, v, Qp), nat.Q(qm, v, Qm);
    Kq_fd.col(j) = (Qp - Qm) / (2 * eps);
    nat.Q(q, vp, Qp), nat.Q(q, vm, Qm);
    Kv_fd.col(j) = (Qp - Qm) / (2 * eps);
  }
  const double scale = 1.0 + Kq.cwiseAbs().maxCoeff();
  EXPECT_LT((Kq - Kq_fd).cwiseAbs().maxCoeff(), 1e-7 * scale);
  EXPECT_LT((Kv - Kv_fd).cwiseAbs().maxCoeff(), 1e-7 * scale);

  // Potentials: along the motions the joints allow (the null space N of Phi_q on the manifold),
  // the applied force is minus the gradient of the potential, N^T (Q + dV/dq) = 0. (A torque's Q is
  // its virtual work's representative, equal to -dV/dq only up to constraint-normal terms.)
  const Problem c = load_problem_text(GetParam(), "elements.yaml");
  const NaturalCoordinates cn(c.model);
  const Eigen::VectorXd q0 = c.model.initial_q(), Z = Eigen::VectorXd::Zero(n);
  Eigen::MatrixXd J0(m, n);
  cn.Phi_q(q0, J0);
  const Eigen::MatrixXd N = Eigen::FullPivLU<Eigen::MatrixXd>(J0).kernel();
  Eigen::VectorXd Q(n), dV(n);
  cn.Q(q0, Z, Q);
  for (int j = 0; j < n; ++j) {
    Eigen::VectorXd qp = q0, qm = q0;
    qp[j] += eps, qm[j] -= eps;
    dV[j] = (cn.potential_energy(qp) - cn.potential_energy(qm)) / (2 * eps);
  }
  EXPECT_LT((N.transpose() * (Q + dV)).cwiseAbs().maxCoeff(), 1e-6 * (1.0 + Q.norm()));
}

// Two degrees of freedom are left in both models: rows minus their rank is the redundancy (none).
TEST_P(ElementKindsTest, LeaveTheExpectedDegreesOfFreedom) {
  const Problem p = load_problem_text(GetParam(), "elements.yaml");
  const NaturalCoordinates nat(p.model);
  Eigen::MatrixXd J(nat.nc(), nat.nq());
  nat.Phi_q(p.model.initial_q(), J);
  EXPECT_EQ(rank(J), nat.nc());
  EXPECT_EQ(nat.nq() - rank(J), 2);
}

// Every formulation that declares joints and force elements runs the model; the energy balance
// (kinetic + gravity + spring - torque and force work) closes at the method's order, and the
// formulations agree with each other on where the bar's end is at t_end.
TEST_P(ElementKindsTest, EveryAcceptingFormulationConservesTheBalanceAndAgrees) {
  const Problem p = load_problem_text(GetParam(), "elements.yaml");
  const bool spatial = p.model.dim == 3;
  struct Run {
    const char* formulation;
    const char* integrator;
    double setting;
    int order;  // of the energy error in h (0: adaptive, checked by agreement only)
  };
  const Run runs[] = {{"alm-index3", "trapezoidal", 2e-3, 2}, {"penalty", "trapezoidal", 2e-3, 0},
                      {"ida-index3", "bdf", 1e-9, 0},         {"partitioned", "rk4", 1e-2, 4},
                      {"projection", "rk4", 1e-2, 4},         {"unprojected", "rk4", 1e-2, 4},
                      {"recursive", "aba-rk4", 1e-2, 4},      {"recursive", "crba-rk4", 1e-2, 4}};
  Eigen::VectorXd reference;
  const int o = p.model.body_offset(0);
  for (const Run& r : runs) {
    const Formulation* f = Registry::instance().find(r.formulation);
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(f->unsupported_reason(p.model), "") << r.formulation;
    ScoringObserver obs(p, false);
    auto sim = f->create(p.model, r.integrator, r.setting);
    const Score s = score_run(p, *sim, obs);
    ASSERT_TRUE(s.completed) << r.formulation << ": " << s.error;
    SCOPED_TRACE(r.formulation);
    // The bar's far end (planar E, spatial T): 0.5 m along u_1 from the centroid's axis.
    const Eigen::VectorXd q = obs.final_q();
    Eigen::VectorXd tip = q.segment(o, p.model.dim) + 0.5 * q.segment(o + p.model.dim, p.model.dim);
    if (spatial) tip = q.segment(o, 3) + (0.5 - p.model.bodies[0].frame_centroid[0]) * q.segment(o + 3, 3);
    if (reference.size() == 0) reference = tip;
    EXPECT_LT((tip - reference).norm(), 2e-3) << r.formulation;  // trapezoidal at 2e-3 s: O(h^2) ~ 1e-4 m
    EXPECT_LT(s.max_energy_drift, 5e-3) << r.formulation;
    if (r.order == 0) continue;
    ScoringObserver half_obs(p, false);
    auto half = f->create(p.model, r.integrator, r.setting / 2);
    const Score h = score_run(p, *half, half_obs);
    ASSERT_TRUE(h.completed) << r.formulation << " at half the step: " << h.error;
    const double ratio = s.max_energy_drift / h.max_energy_drift, expected = std::pow(2.0, r.order);
    EXPECT_GT(ratio, expected / 2.0) << r.formulation << " drift " << s.max_energy_drift << " -> " << h.max_energy_drift;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ElementKindsTest, ::testing::Values(kPlanar, kSpatial),
                         [](const auto& info) { return info.index == 0 ? std::string("planar") : std::string("spatial"); });

// A formulation that declares only rods (and no force elements) says so, naming the element (every
// registered formulation of ours now takes force elements: a declaration of the test's own).
class RodsOnly final : public Formulation {
 public:
  std::string name() const override { return "rods-only"; }
  std::string description() const override { return "declares rods alone"; }
  std::vector<IntegratorInfo> integrators() const override { return {}; }
  Accepts accepts() const override { return {{}, {TreeJointType::kRod}}; }
  std::unique_ptr<Simulator> create(const Model&, const std::string&, double) const override { return nullptr; }
};

TEST(ElementKindsSupport, UndeclaredRolesAreUnsupportedWithTheElementNamed) {
  const Problem p = load_problem_text(kPlanar, "elements.yaml");
  const std::string why = RodsOnly().unsupported_reason(p.model);
  EXPECT_NE(why.find("'pin'"), std::string::npos) << why;
  EXPECT_NE(why.find("rods-only does not support"), std::string::npos) << why;
  for (const ElementKindInfo* k : ::mbs::ElementKinds::instance().all()) EXPECT_FALSE(k->summary.empty()) << k->name;
}

// Loader messages for the new keys, exactly.
TEST(ElementKindsLoader, MessagesPointAtTheKey) {
  auto error_of = [](const std::string& text) { return testing::load_error(text); };
  EXPECT_EQ(error_of(kPlanar), "(accepted)");
  EXPECT_EQ(error_of(with(kPlanar, "kind: revolute", "kind: hinge")),
            "bad.yaml:11:23: unknown joint kind 'hinge' (known: fixed, prismatic, revolute, rod, spherical)");
  EXPECT_EQ(error_of(with(kPlanar, "kind: revolute", "kind: torque")), "bad.yaml:11:23: 'torque' is a force element: list it under 'forces'");
  EXPECT_EQ(error_of(with(kPlanar, "b: bar.O", "b: bar.Q")),
            "bad.yaml:11:47: joint pin names point 'Q' of bar, which is not defined (its 'points')");
  EXPECT_EQ(error_of(with(kPlanar, "inertia: 0.5", "inertia: [0.5, 0.5, 0.5]")),
            "bad.yaml:6:55: inertia of bar is one number in a planar model (kg m^2, about the centroid)");
  EXPECT_EQ(error_of(with(kPlanar, "at: [0.0, 0.0, 0.0]}", "at: [0.0, 0.1, 0.0]}")).substr(0, 60),
            "bad.yaml:11:5: initial state violates joint pin by 0.1 m (co");
  EXPECT_EQ(error_of(with(kPlanar, "stiffness: 50.0", "stiffness: -50.0")), "bad.yaml:14:96: stiffness of spring must be >= 0 N/m, got -50");
  EXPECT_EQ(error_of(with(kPlanar, "torque: 0.7", "torque: [0.0, 0.0, 0.7]")),
            "bad.yaml:15:52: torque of motor is one number in a planar model (N m, about e1 x e2)");
  EXPECT_EQ(error_of(with(kSpatial, "inertia: [0.01, 0.02, 0.025]", "inertia: [0.01, 0.02, 0.04]")),
            "bad.yaml:8:58: inertia of slider: principal moments 0.01, 0.02, 0.04 kg m^2 violate the triangle inequality "
            "(each must be less than the sum of the other two)");
  EXPECT_EQ(error_of(with(kSpatial, ", axis: [0.0, 1.0, 0.0]}", "}")),
            "bad.yaml:12:5: missing required key 'axis' in joint hinge (its axis in world coordinates)");
  EXPECT_EQ(error_of(with(kSpatial, "a: arm.T, b: plate", "a: arm.T, b: {body: arm}")).substr(0, 40),
            "bad.yaml:14:5: joint weld connects body ");
}

// A spatial torque has no potential, whatever its direction (its work depends on the path of the
// rotation): the energy is then no invariant. A planar one has, -tau theta.
TEST(ElementKindsLoader, OnlyPlanarTorquesHaveAPotential) {
  const std::string axial = with(kSpatial, "run:", "  - {name: twist, kind: torque, body: arm, torque: [0.0, 0.0, 1.0]}\nrun:");
  EXPECT_FALSE(NaturalCoordinates(load_problem_text(axial, "elements.yaml").model).energy_is_invariant());
  EXPECT_TRUE(NaturalCoordinates(load_problem_text(kSpatial, "elements.yaml").model).energy_is_invariant());
  EXPECT_TRUE(NaturalCoordinates(load_problem_text(kPlanar, "elements.yaml").model).energy_is_invariant());
}

// Attached point masses are folded in exactly: total mass, centroid and the inertia about it.
TEST(ElementKindsLoader, AttachedPointMassesAreFoldedIntoTheBody) {
  const Problem p = load_problem_text(kSpatial, "elements.yaml");
  const RigidBody& arm = p.model.bodies[0];
  const double m_bar = 100.0 * 1.0 * 0.1 * 0.1, m = m_bar + 0.5;
  EXPECT_NEAR(arm.mass, m, 1e-14);
  const double c = 0.5 * 0.5 / m;  // centroid moves towards the mass along the bar
  EXPECT_NEAR(arm.frame_centroid[0], c, 1e-14);
  EXPECT_NEAR(arm.r0[0], 0.5 + c, 1e-14);
  // About the transverse axes: bar m (L^2 + t^2) / 12 + m_bar c^2 + 0.5 (0.5 - c)^2.
  const double I_t = m_bar * (1.0 + 0.01) / 12.0 + m_bar * c * c + 0.5 * (0.5 - c) * (0.5 - c);
  EXPECT_NEAR(arm.principal_inertia()[1], I_t, 1e-13);
  EXPECT_NEAR(arm.principal_inertia()[0], m_bar * 0.02 / 12.0, 1e-15);  // the axial one is unchanged
}

}  // namespace
}  // namespace mbs
