#include "references/simple_pendulum.hpp"

#include <cmath>
#include <fmt/format.h>

#include "elements/rod.hpp"
#include "run/crossings.hpp"
#include "run/reference_setup.hpp"
#include "run/scoring.hpp"

namespace mbs {

double jacobi_am(double u, double k) {
  // Descending Landen / AGM: a_{n+1} = (a+b)/2, b_{n+1} = sqrt(ab), c_{n+1} = (a-b)/2; then
  // phi_N = 2^N a_N u and phi_{n-1} = (phi_n + asin(c_n sin(phi_n) / a_n)) / 2.
  constexpr int kMax = 16;
  double a[kMax + 1], c[kMax + 1];
  a[0] = 1.0;
  double b = std::sqrt(1.0 - k * k);
  c[0] = k;
  int n = 0;
  while (std::abs(c[n]) > 1e-16 && n < kMax) {
    a[n + 1] = 0.5 * (a[n] + b);
    c[n + 1] = 0.5 * (a[n] - b);
    b = std::sqrt(a[n] * b);
    ++n;
  }
  double phi = std::ldexp(a[n] * u, n);
  for (int i = n; i > 0; --i) phi = 0.5 * (phi + std::asin(c[i] * std::sin(phi) / a[i]));
  return phi;
}

void jacobi_sn_cn_dn(double u, double k, double& sn, double& cn, double& dn) {
  const double phi = jacobi_am(u, k);
  sn = std::sin(phi);
  cn = std::cos(phi);
  dn = std::sqrt(1.0 - k * k * sn * sn);
}

SimplePendulumExact::SimplePendulumExact(double length, double g, double theta0)
    : L_(length), k_(std::sin(0.5 * theta0)), K_(std::comp_ellint_1(k_)),
      w0_(std::sqrt(g / length)) {}

SimplePendulumExact SimplePendulumExact::from_problem(const Problem& problem) {
  const Model& model = problem.model;
  // The loader has checked every precondition below, with positions; these guard direct callers.
  const SimplePendulumReference* spec = reference_as<SimplePendulumReference>(problem);
  if (!spec) throw ProblemError(fmt::format("{}: the problem has no simple_pendulum_exact reference", problem.file));
  const SimplePendulumReference& ref = *spec;
  const PointMass& p = model.points[ref.point];
  const Eigen::VectorXd d0 = p.r0 - ref.pivot;
  const double g = model.gravity.norm();
  if (g == 0.0) throw ProblemError(fmt::format("{}: simple_pendulum_exact needs gravity", problem.file));
  if (p.v0.norm() != 0.0) throw ProblemError(fmt::format("{}: simple_pendulum_exact needs release from rest", problem.file));
  const Eigen::VectorXd down = model.gravity / g;
  const double L = d0.norm();
  const double theta0 = std::acos(std::clamp(d0.dot(down) / L, -1.0, 1.0));
  if (!(theta0 < M_PI)) throw ProblemError(fmt::format("{}: simple_pendulum_exact needs theta0 < pi", problem.file));
  SimplePendulumExact s(L, g, theta0);
  s.pivot_ = ref.pivot;
  s.down_ = down;
  Eigen::VectorXd side = d0 - d0.dot(down) * down;
  s.side_ = side.norm() > 0 ? Eigen::VectorXd(side / side.norm()) : Eigen::VectorXd::Zero(d0.size());
  return s;
}

double SimplePendulumExact::period() const { return 4.0 * K_ / w0_; }

double SimplePendulumExact::theta(double t) const {
  double sn, cn, dn;
  jacobi_sn_cn_dn(K_ - w0_ * t, k_, sn, cn, dn);
  return 2.0 * std::asin(k_ * sn);
}

double SimplePendulumExact::theta_dot(double t) const {
  // d/dt 2 asin(k sn(u)) with u = K - w0 t: -2 k w0 cn dn / sqrt(1 - k^2 sn^2) = -2 k w0 cn.
  double sn, cn, dn;
  jacobi_sn_cn_dn(K_ - w0_ * t, k_, sn, cn, dn);
  return -2.0 * k_ * w0_ * cn;
}

Eigen::VectorXd SimplePendulumExact::position(double t) const {
  const double th = theta(t);
  return pivot_ + L_ * (std::cos(th) * down_ + std::sin(th) * side_);
}

Eigen::VectorXd SimplePendulumExact::velocity(double t) const {
  const double th = theta(t), w = theta_dot(t);
  return L_ * w * (-std::sin(th) * down_ + std::cos(th) * side_);
}

// The exact solution at the output times: no uncertainty beyond round-off.
std::shared_ptr<const ReferenceTrajectory> SimplePendulumReference::trajectory(const Problem& problem, const ReferenceOptions&,
                                                                              ReferenceSetup& setup) const {
  const SimplePendulumExact exact = SimplePendulumExact::from_problem(problem);
  auto ref = sample_exact(problem, kind(), [&](double t) { return exact.position(t); });
  ref->provenance = "exact solution (Jacobi elliptic functions)";
  setup.note = ref->provenance;
  return ref;
}

namespace {

// Swing checks from the crossings of the vertical below the pivot, and the final position error.
class SimplePendulumObserver final : public ReferenceObserver {
 public:
  SimplePendulumObserver(const Problem& problem, int point)
      : problem_(problem), exact_(SimplePendulumExact::from_problem(problem)), point_(point) {}

  void reset() override { swing_.clear(); }

  void observe(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v, double energy) override {
    const int d = problem_.model.dim;
    if (swing_.empty()) e0_ = energy;  // the target of the energy checks: the initial energy
    swing_.push_back({t, exact_.swing_offset(q.segment(d * point_, d)), exact_.swing_rate(v.segment(d * point_, d)), energy});
  }

  void finish(double t_last, const Eigen::VectorXd& q_last, Score& score) const override {
    const int d = problem_.model.dim;
    score.final_position_error = (q_last.segment(d * point_, d) - exact_.position(t_last)).norm();
    if (swing_.empty()) return;
    // Crossings of the vertical below the pivot, Hermite-interpolated: n swings after the first
    // crossing is the (2n)-th crossing after it, whatever the release side.
    std::vector<Sample> samples;
    samples.reserve(swing_.size());
    for (const SwingSample& w : swing_) samples.push_back({w.t, w.s, w.s_dot});
    const std::vector<double> c = crossing_times(samples, 0.0, Direction::kAny);
    for (size_t i = 0; i < problem_.checks.size(); ++i) {
      const Check& check = problem_.checks[i];
      CheckValue& cv = score.checks[i];
      cv.target = check.quantity == "period" ? check.swings * exact_.period() : e0_;
      const size_t end = 2 * static_cast<size_t>(check.swings);
      if (c.size() <= end) continue;  // not reached: NaN
      if (check.quantity == "period") {
        cv.value = c[end] - c[0];
      } else {
        // Energy at the swing's end: linear between the steps around it (E changes by O(drift) per step).
        const double t = c[end];
        size_t k = 1;
        while (k + 1 < swing_.size() && swing_[k].t < t) ++k;
        const SwingSample &a = swing_[k - 1], &b = swing_[k];
        cv.value = a.e + (b.e - a.e) * (t - a.t) / (b.t - a.t);
      }
    }
  }

 private:
  // At every step: the offset from the vertical (m), its rate, and the energy.
  struct SwingSample {
    double t, s, s_dot, e;
  };
  const Problem& problem_;
  SimplePendulumExact exact_;
  int point_;
  double e0_ = 0.0;
  std::vector<SwingSample> swing_;
};

}  // namespace

std::unique_ptr<ReferenceObserver> SimplePendulumReference::observer(const Problem& problem) const {
  return std::make_unique<SimplePendulumObserver>(problem, point);
}

namespace {

std::shared_ptr<const Reference> read_simple_pendulum(const ReadContext& ctx, const yaml::Node& ref, Problem& p);

const ReferenceKindInfo kSimplePendulumExact{
    "simple_pendulum_exact",
    "a point mass on one rod, released from rest: exact motion (Jacobi elliptic functions), swing period and energy",
    /*analysis=*/false, /*exact=*/true, /*positions_in_time=*/true, /*final_position=*/true,
    /*check_quantities=*/{"period", "energy"}, read_simple_pendulum};
MBS_REGISTER_REFERENCE_KIND(simple_pendulum_exact, kSimplePendulumExact);

std::shared_ptr<const Reference> read_simple_pendulum(const ReadContext& ctx, const yaml::Node& ref, Problem& p) {
  const Reader& rd = ctx.rd;
  const Model& model = p.model;
  rd.expect_map(ref, "reference", {"kind", "point", "pivot"});
  auto r = std::make_shared<SimplePendulumReference>(kSimplePendulumExact, ctx.mark(ref));
  const std::string point = rd.text(rd.required(ref, "point", "reference"), "reference.point");
  r->point = model.find_point(point);
  if (r->point == kNoPoint) rd.fail(ref["point"], fmt::format("reference names body '{}', which is not defined", point));
  r->pivot = ctx.frame.point(rd.required(ref, "pivot", "reference"), "reference.pivot");
  // The exact solution holds for a point hung from `pivot` by one rod, released from rest.
  bool hung = false;
  for (const Rod* rod : model.elements_of<Rod>())
    hung = hung || (rod->a.is_ground() && rod->b.point == r->point && (rod->a.at - r->pivot).norm() <= 1e-12 * rod->length);
  const PointMass& pm = model.points[r->point];
  if (!hung) rd.fail(ref["pivot"], fmt::format("simple_pendulum_exact needs a rod from the ground at the pivot to {}", point));
  if (model.elements.size() != 1 || model.points.size() != 1 || !model.bodies.empty())
    rd.fail(ref["kind"], "simple_pendulum_exact needs a model of one point and one rod");
  if (pm.v0.norm() != 0.0) rd.fail(ref["kind"], fmt::format("simple_pendulum_exact needs {} released from rest", point));
  if (model.gravity.norm() == 0.0) rd.fail(ref["kind"], "simple_pendulum_exact needs gravity");
  const Eigen::VectorXd d0 = pm.r0 - r->pivot;
  if (d0.dot(model.gravity) <= -(1 - 1e-12) * d0.norm() * model.gravity.norm())
    rd.fail(ref["kind"], "simple_pendulum_exact needs a release angle below pi (not straight up)");
  p.measured_points = {{point, measured_point(rd, ref["point"], model, "reference.point")}};
  return r;
}

}  // namespace

}  // namespace mbs
