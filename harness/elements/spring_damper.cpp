#include "elements/spring_damper.hpp"

#include "core/formulation.hpp"
#include "problem/element_kinds.hpp"

namespace mbs {

void SpringDamper::bind(const Model& model) {
  d = model.combo();
  model.add_anchor(d, a, 1.0);
  model.add_anchor(d, b, -1.0);
}

// F = T e is the pull on B towards A (and -F on A): Q = -J^T F with J the weights of d = r_A - r_B.
void SpringDamper::add_force(const Model& /*model*/, const Eigen::Ref<const Eigen::VectorXd>& q,
                             const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::Ref<Eigen::VectorXd> Q) const {
  const Combo::Small x = d.eval(q), xd = d.rate(v);
  const double l = x.norm();
  if (!(l > 0.0)) throw SolverError(fmt::format("spring_damper {}: its ends met (zero length, no direction)", name));
  const Combo::Small e = x / l;
  const double T = k * (l - rest_length) + c * e.dot(xd);
  d.add_transpose(-T, e, Q);
}

// dF/dx = T (I - e e^T) / l + e (k e^T + c xd^T (I - e e^T) / l),   dF/dxd = c e e^T.
void SpringDamper::add_force_jacobians(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q,
                                       const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::Ref<Eigen::MatrixXd> dQ_dq,
                                       Eigen::Ref<Eigen::MatrixXd> dQ_dv) const {
  const int n = model.dim;
  const Combo::Small x = d.eval(q), xd = d.rate(v);
  const double l = x.norm();
  if (!(l > 0.0)) throw SolverError(fmt::format("spring_damper {}: its ends met (zero length, no direction)", name));
  const Combo::Small e = x / l;
  const double ld = e.dot(xd), T = k * (l - rest_length) + c * ld;
  using Small2 = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 3, 3>;
  const Small2 P = Small2::Identity(n, n) - e * e.transpose();
  const Small2 Fx = (T / l) * P + e * (k * e.transpose() + (c / l) * (P * xd).transpose());
  const Small2 Fv = c * e * e.transpose();
  for (int s = 0; s < d.n; ++s)
    for (int t = 0; t < d.n; ++t) {
      const double w = d.w[s] * d.w[t];
      dQ_dq.block(d.off[s], d.off[t], n, n) -= w * Fx;
      if (c != 0.0) dQ_dv.block(d.off[s], d.off[t], n, n) -= w * Fv;
    }
}

double SpringDamper::potential_energy(const Model& /*model*/, const Eigen::Ref<const Eigen::VectorXd>& q) const {
  const double stretch = d.eval(q).norm() - rest_length;
  return 0.5 * k * stretch * stretch;
}

namespace {

std::shared_ptr<Element> read_spring_damper(const ReadContext& ctx, const yaml::Node& f, const std::string& name) {
  const Reader& rd = ctx.rd;
  rd.expect_map(f, "a spring_damper", {"name", "kind", "a", "b", "stiffness", "damping", "rest_length"});
  auto s = std::make_shared<SpringDamper>();
  s->name = name;
  s->mark = ctx.mark(f);
  s->a = ctx.end(f, "a", "force " + name, nullptr);
  s->b = ctx.end(f, "b", "force " + name, nullptr);
  if (s->a.is_ground() && s->b.is_ground()) rd.fail(f, fmt::format("force {} connects ground to ground", name));
  if (s->a.body == s->b.body && s->a.point == s->b.point && s->a.body < 0)
    rd.fail(f, fmt::format("force {} connects a point mass to itself", name));
  s->k = rd.number(rd.required(f, "stiffness", "force " + name + " (N/m)"), "stiffness of " + name);
  if (s->k < 0.0) rd.fail(f["stiffness"], fmt::format("stiffness of {} must be >= 0 N/m, got {}", name, s->k));
  s->c = f["damping"] ? rd.number(f["damping"], "damping of " + name) : 0.0;
  if (s->c < 0.0) rd.fail(f["damping"], fmt::format("damping of {} must be >= 0 N s/m, got {}", name, s->c));
  s->bind(ctx.model);
  const double l0 = (ctx.initial_position(s->a) - ctx.initial_position(s->b)).norm();  // |d(q0)|
  if (!(l0 > 1e-12)) rd.fail(f, fmt::format("force {}: its ends coincide initially, so it has no line of action", name));
  s->rest_length = f["rest_length"] ? rd.number(f["rest_length"], "rest_length of " + name) : l0;
  if (s->rest_length < 0.0) rd.fail(f["rest_length"], fmt::format("rest_length of {} must be >= 0 m, got {}", name, s->rest_length));
  return s;
}

}  // namespace

MBS_REGISTER_ELEMENT_KIND(spring_damper, {"spring_damper", ElementRole::kForce,
                                          "linear spring and damper between two points: T = k (l - l0) + c l' along the line",
                                          read_spring_damper});

}  // namespace mbs
