// Linearization about a static equilibrium (the 3D pendulum spec, pendulum_3d_linearization.md):
// every formulation's linearizer, against the exact linear frequencies of hanging pendulums.
//
// Exact spectra (rods of length l, masses m, gravity g, hanging at rest):
// - simple pendulum: s = +-i sqrt(g/l), once per horizontal direction (twice in space, once in a
//   plane); joint angles theta, phi in space see it once (phi does not move the mass at theta = 0);
// - double pendulum, equal m and l: s^2 = -(g/l)(2 -+ sqrt 2), each once per horizontal direction.
//
// Set MBS_PRINT_SPECTRA=1 to print every spectrum with its judgements.
//
// Tolerances.
// - Exact formulations (minimal, ida-index3): the eigenvalues come from a backward stable method
//   (the symmetric eigenproblem on the constraint manifold, or QZ of the pencil scaled to unit
//   norms): relative error ~ n eps times the eigenvalue's condition number, O(1) here (well
//   separated or semisimple). 1e-12 relative leaves two to three decades.
// - Penalty-type formulations (penalty, alm-index3), two sources:
//   (a) compliance: a true mode with rod-force amplitude mu stretches the rods by mu / (alpha p(s))
//       (ALM: p = 1; penalty: p(s) = s^2 + 2 xi omega s + omega^2), which by first-order perturbation
//       of the bordered matrix [s^2 M + K, G^T; G, -1/(alpha p)] shifts s^2 by
//       -|mu|^2 / (alpha p(s) y^T M y). With |mu|^2 / (y^T M y) ~ m (g/l)^2 and |s|^2 ~ g/l,
//       |ds/s| ~ (g/l) / ((alpha/m) |p|) / 2: ALM (alpha/m = 1e9) ~5e-9, penalty (1e8, |p| ~ 100) ~5e-10;
//   (b) rounding: the pencil's constraint terms are alpha/m times the physical ones, so a backward
//       stable method's error (eps of the pencil, or of L^-1 K L^-T on the manifold path) is
//       ~eps alpha/m of the physical terms: penalty ~2e-8, ALM ~2e-7.
//   The tolerance is 20 x (a) + 10 x (b): 2.4e-7 (penalty), 2.4e-6 (ALM).
//   On hanging chains neither shows (errors ~1e-16): their modes are horizontal, the rods vertical
//   and K_geo isotropic, so mu = 0 and the stiff and physical parts decouple exactly. The four-bar
//   below has inclined rods and shows both: penalty ~2e-8 (rounding), ALM ~5e-9 (compliance, as
//   predicted); so does the 3D pendulum in a generic frame (rounding only: mu = 0 still).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/linear_modes.hpp"
#include "elements/rod.hpp"
#include "core/formulation.hpp"
#include "core/linearization.hpp"
#include "support/linearization_text.hpp"
#include "support/models.hpp"

namespace mbs {
namespace {

constexpr double kG = 9.81;

using testing::pendulum_3d;

// Planar pendulum in the x-y plane, gravity -y, hanging.
Model pendulum_2d() { return testing::chain_model(2, {{1.0, Eigen::Vector3d(0, -1, 0)}}); }

// Double pendulum, equal masses (1 kg) and lengths (1 m), hanging along -y (gravity -y).
Model double_pendulum(int dim) {
  Model m = testing::chain_model(dim, {{1.0, Eigen::Vector3d(0, -1, 0)}, {1.0, Eigen::Vector3d(0, -2, 0)}});
  m.name = dim == 3 ? "3D double pendulum" : "double pendulum";
  return m;
}

std::vector<std::complex<double>> true_eigenvalues(const Linearization& lin) {
  std::vector<std::complex<double>> s;
  for (const Eigenvalue& e : lin.eigenvalues)
    if (e.is_true) s.push_back(e.s);
  return s;
}

// Exact spectrum: each w in `omegas` as the pair +-i w, `copies` times.
std::vector<std::complex<double>> exact(std::vector<double> omegas, int copies) {
  std::vector<std::complex<double>> s;
  for (double w : omegas)
    for (int c = 0; c < copies; ++c) {
      s.emplace_back(0.0, -w);
      s.emplace_back(0.0, w);
    }
  return s;
}

// Largest relative distance from each computed true eigenvalue to the exact one it pairs with
// (both sorted by imaginary part, then real part), and the spec's score (2-norm of the differences).
struct Match {
  double max_relative = 0.0;
  double norm2 = 0.0;
};
Match match(std::vector<std::complex<double>> got, std::vector<std::complex<double>> want) {
  auto by_imag = [](const std::complex<double>& a, const std::complex<double>& b) {
    return a.imag() != b.imag() ? a.imag() < b.imag() : a.real() < b.real();
  };
  std::sort(got.begin(), got.end(), by_imag);
  std::sort(want.begin(), want.end(), by_imag);
  Match m;
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    const double d = std::abs(got[i] - want[i]);
    m.norm2 += d * d;
    m.max_relative = std::max(m.max_relative, d / std::abs(want[i]));
  }
  m.norm2 = std::sqrt(m.norm2);
  return m;
}

using testing::dump;

std::unique_ptr<Linearizer> linearizer(const std::string& formulation, const Model& model) {
  const Formulation* f = Registry::instance().find(formulation);
  EXPECT_NE(f, nullptr) << formulation;
  if (f == nullptr) return nullptr;
  const std::string why = f->linearization_unsupported_reason(model);
  EXPECT_EQ(why, "") << formulation;
  return f->create_linearizer(model);
}

const char* const kFormulations[] = {"minimal", "penalty", "alm-index3", "ida-index3"};

// Relative tolerances on the true eigenvalues (see the file comment): rounding for the exact
// formulations; for the penalty-type ones their compliance plus the rounding floor eps alpha/m.
double tolerance(const std::string& formulation) {
  constexpr double eps = 2.2e-16;
  if (formulation == "penalty") return 20 * kG / (1e8 * 100.0) + 10 * eps * 1e8;
  if (formulation == "alm-index3") return 20 * kG / 1e9 + 10 * eps * 1e9;
  return 1e-12;
}

// --- The 3D pendulum -------------------------------------------------------------------------

TEST(Linearization, Pendulum3dEveryFormulation) {
  const Model model = pendulum_3d();
  const double w = std::sqrt(kG / 1.0);
  for (const std::string f : kFormulations) {
    SCOPED_TRACE(f);
    auto lin = linearizer(f, model);
    ASSERT_NE(lin, nullptr);
    const Linearization& result = lin->linearize();
    SCOPED_TRACE(dump(result));
    // minimal: theta, phi (one pair: phi does not move the mass at theta = 0); natural: x, y, z.
    const int copies = f == "minimal" ? 1 : 2;
    const Match m = match(true_eigenvalues(result), exact({w}, copies));
    EXPECT_LE(m.max_relative, tolerance(f));
    EXPECT_FALSE(result.rule.empty());
    EXPECT_FALSE(result.coordinates.empty());
    EXPECT_FALSE(result.terms.empty());
    // Sizes: minimal 2 n = 4; penalty, ALM 2 nq = 6; ida 2 nq + nc = 7.
    const size_t size = f == "minimal" ? 4 : f == "ida-index3" ? 7 : 6;
    EXPECT_EQ(result.eigenvalues.size(), size);
    for (const Eigenvalue& e : result.eigenvalues) {
      EXPECT_FALSE(e.why.empty());
      EXPECT_TRUE(e.finite || !e.is_true);
    }
    std::printf("%s on the 3D pendulum: true-eigenvalue error (2-norm) %.3g\n", f.c_str(), m.norm2);
    if (std::getenv("MBS_PRINT_SPECTRA") != nullptr) std::printf("%s", dump(result).c_str());
  }
}

// The spurious ones, formulation by formulation, as the spec describes them.
TEST(Linearization, Pendulum3dSpuriousEigenvalues) {
  const Model model = pendulum_3d();
  {  // minimal: M_e = m l diag(l, 0), K_e = m l diag(g, 0): the spec's matrices times m l.
    auto lin = linearizer("minimal", model);
    const Linearization& r = lin->linearize();
    ASSERT_GE(r.terms.size(), 2u);
    const Eigen::MatrixXd& M = r.terms[0].second;
    const Eigen::MatrixXd& K = r.terms[1].second;
    EXPECT_NEAR(M(0, 0), 1.0, 1e-15);
    EXPECT_NEAR(K(0, 0), kG, 1e-14);
    EXPECT_NEAR(M(1, 1), 0.0, 1e-15);
    EXPECT_NEAR(K(1, 1), 0.0, 1e-15);
    EXPECT_NEAR(M(0, 1), 0.0, 1e-15);
    EXPECT_NEAR(K(0, 1), 0.0, 1e-15);
    // The phi direction has neither mass nor stiffness: two undetermined (0/0) eigenvalues.
    int spurious = 0;
    for (const Eigenvalue& e : r.eigenvalues)
      if (!e.is_true) {
        ++spurious;
        EXPECT_FALSE(e.finite);
        EXPECT_TRUE(std::isnan(e.s.real()));
      }
    EXPECT_EQ(spurious, 2) << dump(r);
  }
  {  // ida-index3: 3 infinite eigenvalues (index 3, one constraint), none of them finite-looking true.
    auto lin = linearizer("ida-index3", model);
    const Linearization& r = lin->linearize();
    int infinite = 0;
    for (const Eigenvalue& e : r.eigenvalues) infinite += !e.finite;
    EXPECT_EQ(infinite, 3) << dump(r);
  }
  {  // penalty: the rod's constraint mode, critically damped at -xi omega = -10 rad/s (a near-double pair).
    auto lin = linearizer("penalty", model);
    const Linearization& r = lin->linearize();
    int spurious = 0;
    for (const Eigenvalue& e : r.eigenvalues)
      if (!e.is_true) {
        ++spurious;
        EXPECT_TRUE(e.finite);
        EXPECT_NEAR(e.s.real(), -10.0, 1e-3) << dump(r);
      }
    EXPECT_EQ(spurious, 2) << dump(r);
  }
  {  // alm-index3: the rod's constraint mode at +-i sqrt(alpha / m + g / l) ~ +-3.2e4 i.
    auto lin = linearizer("alm-index3", model);
    const Linearization& r = lin->linearize();
    int spurious = 0;
    for (const Eigenvalue& e : r.eigenvalues)
      if (!e.is_true) {
        ++spurious;
        EXPECT_NEAR(std::abs(e.s), std::sqrt(1e9 + kG), 1e-3 * std::sqrt(1e9)) << dump(r);
      }
    EXPECT_EQ(spurious, 2) << dump(r);
  }
}

// --- Generality: planar pendulum, double pendulums ----------------------------------------------

TEST(Linearization, PlanarPendulum) {
  const Model model = pendulum_2d();
  for (const std::string f : kFormulations) {
    SCOPED_TRACE(f);
    auto lin = linearizer(f, model);
    const Linearization& r = lin->linearize();
    const Match m = match(true_eigenvalues(r), exact({std::sqrt(kG)}, 1));
    EXPECT_LE(m.max_relative, tolerance(f)) << dump(r);
  }
}

TEST(Linearization, DoublePendulumPlanarAndSpatial) {
  // Equal masses and lengths: w^2 = (g/l)(2 -+ sqrt 2).
  const std::vector<double> w = {std::sqrt(kG * (2.0 - std::sqrt(2.0))), std::sqrt(kG * (2.0 + std::sqrt(2.0)))};
  for (int dim : {2, 3}) {
    const Model model = double_pendulum(dim);
    for (const std::string f : kFormulations) {
      SCOPED_TRACE(f + " dim " + std::to_string(dim));
      auto lin = linearizer(f, model);
      const Linearization& r = lin->linearize();
      SCOPED_TRACE(dump(r));
      // Joint angles see each mode once (the azimuths of rods along gravity move nothing); natural
      // coordinates once per horizontal direction.
      const int copies = (f == "minimal" || dim == 2) ? 1 : 2;
      const Match m = match(true_eigenvalues(r), exact(w, copies));
      EXPECT_LE(m.max_relative, tolerance(f)) << dump(r);
      std::printf("%s, %s: largest relative error of a true eigenvalue %.3g (2-norm %.3g)\n", f.c_str(),
                  model.name.c_str(), m.max_relative, m.norm2);
      if (std::getenv("MBS_PRINT_SPECTRA") != nullptr) std::printf("%s", dump(r).c_str());
    }
  }
}

// Trapezoidal four-bar (planar, closed loop, 1 DOF): ground pivots at (-1, 0) and (1, 0), masses
// A at (-0.5, -1) and B at (0.5, -1), 1 kg each, rods O1-A, O2-B and A-B: a symmetric equilibrium
// with inclined side rods and A-B in tension. Its sway mode changes the rod forces (mu != 0), so the
// penalty-type formulations' compliance shows, unlike on the hanging chains above. No closed form: ida-index3 (exact up to rounding) is the reference.
Model four_bar() {
  Model m;
  m.name = "four-bar";
  m.dim = 2;
  m.basis = Eigen::Matrix3d::Identity().leftCols(2);
  m.gravity = Eigen::Vector2d(0, -kG);
  m.points.push_back({"A", 1.0, Eigen::Vector2d(-0.5, -1.0), Eigen::VectorXd::Zero(2)});
  m.points.push_back({"B", 1.0, Eigen::Vector2d(0.5, -1.0), Eigen::VectorXd::Zero(2)});
  m.elements.push_back(std::make_shared<Rod>("O1A", kGround, 0, Eigen::Vector2d(-1.0, 0.0), std::sqrt(1.25)));
  m.elements.push_back(std::make_shared<Rod>("O2B", kGround, 1, Eigen::Vector2d(1.0, 0.0), std::sqrt(1.25)));
  m.elements.push_back(std::make_shared<Rod>("AB", 0, 1, Eigen::VectorXd(), 1.0));
  return m;
}

TEST(Linearization, FourBarPenaltyErrorWithinItsCompliance) {
  const Model model = four_bar();
  EXPECT_NE(Registry::instance().find("minimal")->linearization_unsupported_reason(model), "");
  auto exact_lin = linearizer("ida-index3", model);
  const std::vector<std::complex<double>> reference = true_eigenvalues(exact_lin->linearize());
  ASSERT_EQ(reference.size(), 2u) << dump(exact_lin->linearize());
  for (const std::string f : {"penalty", "alm-index3"}) {
    SCOPED_TRACE(f);
    auto lin = linearizer(f, model);
    const Linearization& r = lin->linearize();
    const Match m = match(true_eigenvalues(r), reference);
    EXPECT_LE(m.max_relative, tolerance(f)) << dump(r);
    std::printf("%s, four-bar: relative difference to ida-index3 %.3g\n", f.c_str(), m.max_relative);
    if (std::getenv("MBS_PRINT_SPECTRA") != nullptr) std::printf("%s", dump(r).c_str());
  }
  if (std::getenv("MBS_PRINT_SPECTRA") != nullptr) std::printf("%s", dump(exact_lin->linearize()).c_str());
}

// The 3D pendulum in a frame where gravity and the rod are along no axis: the same spectrum, and
// the pencils are dense, so QZ meets the index-3 Jordan blocks at infinity in general position.
TEST(Linearization, Pendulum3dInAGenericFrame) {
  const Eigen::Vector3d down = Eigen::Vector3d(1.0, 2.0, -3.0).normalized();
  Model model = pendulum_3d(down);
  model.gravity = kG * down;
  for (const std::string f : kFormulations) {
    SCOPED_TRACE(f);
    auto lin = linearizer(f, model);
    const Linearization& r = lin->linearize();
    const Match m = match(true_eigenvalues(r), exact({std::sqrt(kG)}, f == "minimal" ? 1 : 2));
    EXPECT_LE(m.max_relative, tolerance(f)) << dump(r);
    std::printf("%s, generic frame: largest relative error %.3g\n", f.c_str(), m.max_relative);
    if (std::getenv("MBS_PRINT_SPECTRA") != nullptr) std::printf("%s", dump(r).c_str());
  }
}

// LinearModes on a general pencil: the 3D pendulum's index-3 pencil (A, B) seen through fixed dense
// well-conditioned transformations, (U A V, U (B + delta E) V), z = V z^. B then has no exact zero
// rows; with delta = 0 QZ still finds its zero pivots (beta ~ eps, |s| ~ 1e16), and with a
// perturbation delta = 1e-13 above rounding (a formulation whose B is singular only to its own
// accuracy; 1e-10, a poor one) the Jordan blocks at infinity split into beta ~ delta^(1/3) |alpha|:
// the classic star of three finite-looking eigenvalues ~1e4-1e5. With the infinity threshold as
// shipped (|beta| <= 1e-3 |alpha|) they are infinite; with it disabled they must still be judged
// spurious by their modes: their displacement is ~delta^(2/3) of the mode ("moves no mass"), and with
// that test disabled too, it lies along M^-1 G^T and violates the constraint at O(1).
TEST(Linearization, JordanBlocksAtInfinityAreSpuriousEitherWay) {
  const int n = 3, N = 7;
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(N, N), B = Eigen::MatrixXd::Zero(N, N);
  const Eigen::RowVector3d Phi_q(0.0, 0.0, -1.0);  // rod along -z, lambda0 = m g, L = 1: K_geo = g I
  A.block(0, n, n, n).setIdentity();
  A.block(n, 0, n, n) = -kG * Eigen::Matrix3d::Identity();
  A.block(n, 2 * n, n, 1) = -Phi_q.transpose();
  A.block(2 * n, 0, 1, n) = Phi_q;
  B.topLeftCorner(2 * n, 2 * n).setIdentity();
  Eigen::MatrixXd U(N, N), V(N, N), E(N, N);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      U(i, j) = (i == j ? 2.0 : 0.0) + 0.3 * std::sin(1.0 + 3 * i + 7 * j);
      V(i, j) = (i == j ? 2.0 : 0.0) + 0.3 * std::cos(2.0 + 5 * i + 2 * j);
      E(i, j) = std::sin(0.5 + 11 * i + 13 * j);
    }
  // Rules: as shipped; infinity test off; infinity and mass tests off (the constraint test alone).
  std::vector<ModeRule> rules(3);
  rules[1].infinite = rules[2].infinite = 1e-30;
  rules[2].massless = 1e-30;
  for (const double delta : {0.0, 1e-13, 1e-10}) {
    for (size_t k = 0; k < rules.size(); ++k) {
      SCOPED_TRACE("delta " + std::to_string(delta) + ", rule " + std::to_string(k));
      LinearModes modes(LinearModes::GeneralPencil{}, N, n, 1, rules[k]);
      modes.A = U * A * V;
      modes.B = U * (B + delta * E) * V;
      modes.R = V.topRows(n);  // dq = y = (V z^).head(n)
      modes.Phi_q = Phi_q;
      Linearization lin;
      modes.prepare(lin.eigenvalues);
      modes.compute(lin.eigenvalues);
      SCOPED_TRACE(dump(lin));
      // The dense transformations (condition ~10 each) and delta cost digits.
      const Match m = match(true_eigenvalues(lin), exact({std::sqrt(kG)}, 2));
      EXPECT_LE(m.max_relative, 1e-9);
      int huge_finite = 0, spurious = 0;
      for (const Eigenvalue& e : lin.eigenvalues) {
        huge_finite += e.finite && std::abs(e.s) > 1e3;
        spurious += !e.is_true;
      }
      EXPECT_EQ(spurious, 3);
      // As shipped, the Jordan blocks are infinite; with the test off, QZ returned some as finite.
      if (k == 0) {
        EXPECT_EQ(huge_finite, 0);
      } else {
        EXPECT_GT(huge_finite, 0);
      }
      std::printf("delta %g, rule %zu: %d of the 3 infinite eigenvalues came back finite\n", delta, k, huge_finite);
      if (std::getenv("MBS_PRINT_SPECTRA") != nullptr) std::printf("%s", dump(lin).c_str());
    }
  }
}

// --- The manifold path against QZ --------------------------------------------------------------

// The pencils of the natural-coordinate formulations, assembled from a model's equilibrium as their
// linearizers do: the index-3 pencil with multipliers (ida-index3), the augmented Lagrangian's
// stiffness (alm-index3, alpha = 1e9 m) and the penalty's damped system (alpha = 1e8 m, xi = 1,
// omega = 10 rad/s). kind 0, 1, 2.
void assemble(const NaturalEquilibrium& eq, int kind, LinearModes& modes) {
  const Eigen::MatrixXd GtG = eq.Phi_q().transpose() * eq.Phi_q();
  const double m = eq.nat().M_diag().maxCoeff();
  modes.M = eq.nat().M_diag().asDiagonal();
  modes.K = eq.K_geo();
  modes.R.setIdentity();
  modes.Phi_q = eq.Phi_q();
  if (kind == 0)
    for (int i = 0; i < eq.rank(); ++i) modes.G.row(i) = eq.Phi_q().row(eq.independent_rows()[i]);
  if (kind == 1) modes.K += 1e9 * m * GtG;
  if (kind == 2) {
    modes.M += 1e8 * m * GtG;
    modes.C = 2.0 * 10.0 * 1e8 * m * GtG;
    modes.K += 1e10 * m * GtG;
  }
}

// Every eigenvalue and judgement of the manifold path matches QZ's on the same pencil: the
// reduction, the symmetric and companion eigenproblems and the 3 m infinite eigenvalues reported
// without computing them. Tolerance: QZ's rounding floor (file comment) of the penalty-type pencils,
// ~eps alpha/m of |s| (2e-7 for ALM), and sqrt(eps) ~ 1e-8 relative on the penalty's critically
// damped (defective) constraint pairs; 1e-6 relative covers both; 1e-11 for the index-3 pencil.
TEST(Linearization, ManifoldPathAgreesWithQZ) {
  const Eigen::Vector3d down = Eigen::Vector3d(1.0, 2.0, -3.0).normalized();
  Model generic = pendulum_3d(down);
  generic.gravity = kG * down;
  const std::vector<Model> models = {pendulum_3d(),       generic,   pendulum_2d(), double_pendulum(2),
                                     double_pendulum(3), four_bar(), pendulum_3d(Eigen::Vector3d(0, 0, 1))};
  const char* const kinds[] = {"index-3", "augmented", "penalty"};
  for (size_t k = 0; k < models.size(); ++k) {
    const Model& model = models[k];
    NaturalEquilibrium eq(model);
    eq.evaluate("test");
    for (int kind = 0; kind < 3; ++kind) {
      SCOPED_TRACE("model " + std::to_string(k) + " (" + model.name + "), " + kinds[kind]);
      std::vector<Linearization> lin(2);
      for (int qz = 0; qz < 2; ++qz) {
        ModeRule rule;
        rule.manifold = qz == 0;
        LinearModes modes(eq.nq(), kind == 0 ? eq.rank() : 0, eq.nq(), eq.nc(), kind == 2, rule);
        assemble(eq, kind, modes);
        modes.prepare(lin[qz].eigenvalues);
        modes.compute(lin[qz].eigenvalues);
        using Path = LinearModes::Path;
        const Path want = qz == 1 ? Path::kQZ : kind == 2 ? Path::kCompanion : Path::kSymmetric;
        EXPECT_EQ(modes.path(), want);
      }
      SCOPED_TRACE("manifold:\n" + dump(lin[0]) + "QZ:\n" + dump(lin[1]));
      ASSERT_EQ(lin[0].eigenvalues.size(), lin[1].eigenvalues.size());
      const double tol = kind == 0 ? 1e-11 : 1e-6;
      for (size_t i = 0; i < lin[0].eigenvalues.size(); ++i) {
        const Eigenvalue &a = lin[0].eigenvalues[i], &b = lin[1].eigenvalues[i];
        EXPECT_EQ(a.finite, b.finite) << i;
        EXPECT_EQ(a.is_true, b.is_true) << i;
        if (a.finite && b.finite) {
          EXPECT_LE(std::abs(a.s - b.s), tol * std::max(1.0, std::abs(b.s))) << i;
        }
      }
    }
  }
}

// The small-size workspace (ModeRule::small: Eigen types of a fixed maximum size, n <= 6) against
// the generic dynamic-size one on the same pencils: the three natural-coordinate kinds on the
// models above (the index-3 pencil with its QR, the augmented one on the symmetric path, the
// penalty's damped one on the companion path), and joint-angle pencils with a deflated massless,
// stiffness-free azimuth (the 3D pendulum's diag(1, 0), and a 3D double pendulum's two such azimuths
// among 4 angles, both with a coupling). Every judgement and path equal; eigenvalues to round-off.
TEST(Linearization, SmallSizePathAgreesWithGeneric) {
  const Eigen::Vector3d down = Eigen::Vector3d(1.0, 2.0, -3.0).normalized();
  Model generic = pendulum_3d(down);
  generic.gravity = kG * down;
  const std::vector<Model> models = {pendulum_3d(),       generic,   pendulum_2d(), double_pendulum(2),
                                     double_pendulum(3), four_bar(), pendulum_3d(Eigen::Vector3d(0, 0, 1))};
  auto compare = [](const Linearization& a, const Linearization& b, double tol) {
    ASSERT_EQ(a.eigenvalues.size(), b.eigenvalues.size());
    for (size_t i = 0; i < a.eigenvalues.size(); ++i) {
      const Eigenvalue &x = a.eigenvalues[i], &y = b.eigenvalues[i];
      EXPECT_EQ(x.finite, y.finite) << i;
      EXPECT_EQ(x.is_true, y.is_true) << i;
      EXPECT_EQ(std::isnan(x.s.real()), std::isnan(y.s.real())) << i;
      if (x.finite && y.finite) {
        EXPECT_LE(std::abs(x.s - y.s), tol * std::max(1.0, std::abs(y.s))) << i;
      }
    }
  };
  int compared = 0;
  for (size_t k = 0; k < models.size(); ++k) {
    NaturalEquilibrium eq(models[k]);
    eq.evaluate("test");
    for (int kind = 0; kind < 3; ++kind) {
      SCOPED_TRACE("model " + std::to_string(k) + " (" + models[k].name + "), kind " + std::to_string(kind));
      std::vector<Linearization> lin(2);
      LinearModes::Path path[2];
      for (int small = 0; small < 2; ++small) {
        ModeRule rule;
        rule.small = small == 0;
        LinearModes modes(eq.nq(), kind == 0 ? eq.rank() : 0, eq.nq(), eq.nc(), kind == 2, rule);
        assemble(eq, kind, modes);
        modes.prepare(lin[small].eigenvalues);
        modes.compute(lin[small].eigenvalues);
        path[small] = modes.path();
      }
      EXPECT_EQ(path[0], path[1]);
      SCOPED_TRACE("small:\n" + dump(lin[0]) + "generic:\n" + dump(lin[1]));
      compare(lin[0], lin[1], kind == 0 ? 1e-12 : 1e-6);
      ++compared;
    }
  }
  // Joint angles with absent azimuths: n = 2 (one deflated) and n = 4 (two deflated), coupled by a
  // dense R and K among the angles that remain; no constraint rows to check.
  for (const int n : {2, 4}) {
    SCOPED_TRACE("joint angles, n = " + std::to_string(n));
    std::vector<Linearization> lin(2);
    for (int small = 0; small < 2; ++small) {
      ModeRule rule;
      rule.small = small == 0;
      LinearModes modes(n, 0, 3, 0, false, rule);
      if (n == 2) {
        modes.M.diagonal() << 1.0, 0.0;
        modes.K.diagonal() << kG, 0.0;
        modes.R << 1.0, 0.0, 0.0, 0.0, 0.0, 0.0;
      } else {  // theta1, phi1, theta2, phi2 of equal rods and masses: M = [2 1; 1 1], K = g [2 0; 0 1]
        modes.M(0, 0) = 2.0, modes.M(0, 2) = modes.M(2, 0) = 1.0, modes.M(2, 2) = 1.0;
        modes.K(0, 0) = 2.0 * kG, modes.K(2, 2) = kG;
        modes.R << 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0;
      }
      modes.prepare(lin[small].eigenvalues);
      modes.compute(lin[small].eigenvalues);
      EXPECT_EQ(modes.absent_directions(), n / 2);
      EXPECT_EQ(modes.path(), LinearModes::Path::kSymmetric);
    }
    SCOPED_TRACE("small:\n" + dump(lin[0]) + "generic:\n" + dump(lin[1]));
    compare(lin[0], lin[1], 1e-12);
    int n_true = 0;
    for (const Eigenvalue& e : lin[0].eigenvalues) n_true += e.is_true;
    EXPECT_EQ(n_true, n);
    ++compared;
  }
  EXPECT_EQ(compared, 23);
}

// Absent directions that are coordinates (exact zero rows and columns: deflated by selecting the
// others) and the same pencil in rotated coordinates y = Q y' (found by the SVD of [M; K]): the same
// two absent directions and the same spectrum, +-i sqrt(g (2 +- sqrt 2)) of the planar double
// pendulum in absolute angles (M = [2 1; 1 1], K = g [2 0; 0 1]).
TEST(Linearization, AbsentDirectionsAsCoordinatesOrRotated) {
  const Eigen::MatrixXd Q = Eigen::HouseholderQR<Eigen::MatrixXd>(
                                (Eigen::MatrixXd(4, 4) << 4, 1, -2, 0.5, 1, 3, 0, -1, 0.2, 1, 5, 2, -1, 0.3, 1, 6).finished())
                                .householderQ();
  std::vector<std::complex<double>> want;
  for (const double r : {2.0 - std::sqrt(2.0), 2.0 + std::sqrt(2.0)})
    want.insert(want.end(), {std::complex<double>(0.0, -std::sqrt(kG * r)), std::complex<double>(0.0, std::sqrt(kG * r))});
  for (const bool rotated : {false, true}) {
    SCOPED_TRACE(rotated ? "rotated" : "coordinates");
    LinearModes modes(4, 0, 3, 0, false);
    modes.M(0, 0) = 2.0, modes.M(0, 2) = modes.M(2, 0) = 1.0, modes.M(2, 2) = 1.0;
    modes.K(0, 0) = 2.0 * kG, modes.K(2, 2) = kG;
    modes.R << 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0;
    if (rotated) {
      modes.M = (Q.transpose() * modes.M * Q).eval();
      modes.K = (Q.transpose() * modes.K * Q).eval();
      modes.R = (modes.R * Q).eval();
    }
    Linearization lin;
    modes.prepare(lin.eigenvalues);
    modes.compute(lin.eigenvalues);
    EXPECT_EQ(modes.absent_directions(), 2);
    const Match m = match(true_eigenvalues(lin), want);
    EXPECT_LE(m.max_relative, 1e-12) << dump(lin);
  }
}

// A pendulum balanced upright: the rod in compression (lambda0 < 0), K_geo negative, s = +-sqrt(g/l)
// real, once per horizontal direction: the manifold path's lambda < 0 branch, judged true.
TEST(Linearization, InvertedPendulumIsUnstable) {
  const Model model = pendulum_3d(Eigen::Vector3d(0, 0, 1));
  for (const std::string f : {"penalty", "alm-index3", "ida-index3", "partitioned"}) {
    SCOPED_TRACE(f);
    auto lin = linearizer(f, model);
    const Linearization& r = lin->linearize();
    std::vector<std::complex<double>> want;
    for (int c = 0; c < 2; ++c) want.insert(want.end(), {-std::sqrt(kG), std::sqrt(kG)});
    const Match m = match(true_eigenvalues(r), want);
    EXPECT_LE(m.max_relative, tolerance(f)) << dump(r);
  }
}

// Where the manifold path does not apply, QZ decides. A coordinate with stiffness but no mass
// (M = diag(1, 0), K = diag(4, 1)): T^T M T is singular, and the pencil has +-2i and two infinite
// eigenvalues. Two copies of one constraint row: G is rank-deficient (the pencil is singular).
TEST(Linearization, ManifoldPathDeclinesToQZ) {
  {
    LinearModes modes(2, 0, 2, 0, false);
    modes.M.diagonal() << 1.0, 0.0;
    modes.K.diagonal() << 4.0, 1.0;
    modes.R.setIdentity();
    Linearization lin;
    modes.prepare(lin.eigenvalues);
    modes.compute(lin.eigenvalues);
    SCOPED_TRACE(dump(lin));
    EXPECT_EQ(modes.path(), LinearModes::Path::kQZ);
    const Match m = match(true_eigenvalues(lin), exact({2.0}, 1));
    EXPECT_LE(m.max_relative, 1e-12);
    int infinite = 0;
    for (const Eigenvalue& e : lin.eigenvalues) infinite += !e.finite;
    EXPECT_EQ(infinite, 2);
  }
  {
    LinearModes modes(3, 2, 3, 1, false);
    modes.M.setIdentity();
    modes.K = kG * Eigen::Matrix3d::Identity();
    modes.G << 0.0, 0.0, -1.0, 0.0, 0.0, -1.0;
    modes.R.setIdentity();
    modes.Phi_q = Eigen::RowVector3d(0.0, 0.0, -1.0);
    Linearization lin;
    modes.prepare(lin.eigenvalues);
    modes.compute(lin.eigenvalues);
    SCOPED_TRACE(dump(lin));
    EXPECT_EQ(modes.path(), LinearModes::Path::kQZ);
  }
}

// --- Failures and robustness ------------------------------------------------------------------

TEST(Linearization, NonEquilibriumThrows) {
  const double a = 30.0 * M_PI / 180.0;
  const Model model = pendulum_3d(Eigen::Vector3d(std::sin(a), 0.0, -std::cos(a)));
  for (const std::string f : kFormulations) {
    SCOPED_TRACE(f);
    auto lin = linearizer(f, model);
    EXPECT_THROW(lin->linearize(), SolverError);
  }
  // Just off the tolerance (1e-8 relative) it still throws; just inside it does not.
  for (const double angle : {1e-6, 1e-10}) {
    const Model near = pendulum_3d(Eigen::Vector3d(std::sin(angle), 0.0, -std::cos(angle)));
    for (const std::string f : kFormulations) {
      SCOPED_TRACE(f + " at " + std::to_string(angle));
      auto lin = linearizer(f, near);
      if (angle > 1e-8)
        EXPECT_THROW(lin->linearize(), SolverError);
      else
        EXPECT_NO_THROW(lin->linearize());
    }
  }
}

TEST(Linearization, RedundantRodGivesTheSameTrueEigenvalues) {
  const Model model = pendulum_3d(Eigen::Vector3d(0, 0, -1), true);
  const double w = std::sqrt(kG);
  // Joint angles cannot describe a duplicated rod (a closed loop): reported, not crashed.
  EXPECT_NE(Registry::instance().find("minimal")->linearization_unsupported_reason(model), "");
  for (const std::string f : {"penalty", "alm-index3", "ida-index3"}) {
    SCOPED_TRACE(f);
    auto lin = linearizer(f, model);
    const Linearization& r = lin->linearize();
    const Match m = match(true_eigenvalues(r), exact({w}, 2));
    EXPECT_LE(m.max_relative, tolerance(f)) << dump(r);
    // ida-index3 drops the dependent row: 2 nq + 1 eigenvalues, as with one rod.
    if (f == std::string("ida-index3")) {
      EXPECT_EQ(r.eigenvalues.size(), 7u);
    }
  }
}

TEST(Linearization, RepeatedCallsGiveIdenticalResults) {
  for (const Model& model : {pendulum_3d(), double_pendulum(3)}) {
    for (const std::string f : kFormulations) {
      SCOPED_TRACE(f);
      auto lin = linearizer(f, model);
      const Linearization first = lin->linearize();  // a copy
      const Linearization& second = lin->linearize();
      ASSERT_EQ(first.eigenvalues.size(), second.eigenvalues.size());
      for (size_t i = 0; i < first.eigenvalues.size(); ++i) {
        const Eigenvalue &a = first.eigenvalues[i], &b = second.eigenvalues[i];
        // Bitwise: NaN (undetermined) compares by its representation.
        EXPECT_EQ(std::memcmp(&a.s, &b.s, sizeof a.s), 0) << i;
        EXPECT_EQ(a.finite, b.finite);
        EXPECT_EQ(a.is_true, b.is_true);
        EXPECT_EQ(a.why, b.why);
      }
      ASSERT_EQ(first.terms.size(), second.terms.size());
      for (size_t i = 0; i < first.terms.size(); ++i) EXPECT_EQ(first.terms[i].second, second.terms[i].second);
    }
  }
}

}  // namespace
}  // namespace mbs
