// YAML problem loader: strict (unknown keys are errors), every message "file:line:column: ...".
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sstream>

#include "core/natural_coordinates.hpp"
#include "problem/problem.hpp"

namespace mbs {
namespace {

// Edit distance, for "did you mean" suggestions on unknown keys.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const {
    const YAML::Mark m = at.Mark();
    if (m.is_null()) throw ProblemError(fmt::format("{}: {}", file_, what));
    throw ProblemError(fmt::format("{}:{}:{}: {}", file_, m.line + 1, m.column + 1, what));
  }

  // A mapping whose keys must all be in `allowed`.
  void expect_map(const YAML::Node& node, const std::string& what, const std::set<std::string>& allowed) const {
    if (!node.IsMap()) fail(node, fmt::format("{} must be a mapping", what));
    for (const auto& kv : node) {
      const std::string key = kv.first.as<std::string>();
      if (allowed.count(key)) continue;
      std::string best;
      size_t best_d = 3;  // suggest only close names
      for (const auto& a : allowed) {
        const size_t d = edit_distance(key, a);
        if (d < best_d) best_d = d, best = a;
      }
      fail(kv.first, fmt::format("unknown key '{}' in {}{}", key, what,
                                 best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best)));
    }
  }

  YAML::Node required(const YAML::Node& map, const std::string& key, const std::string& where) const {
    const YAML::Node n = map[key];
    if (!n) fail(map, fmt::format("missing required key '{}' in {}", key, where));
    return n;
  }

  double number(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, fmt::format("{} must be a number", what));
    double x;
    if (!YAML::convert<double>::decode(n, x) || !std::isfinite(x))
      fail(n, fmt::format("{} must be a finite number, got '{}'", what, n.Scalar()));
    return x;
  }

  double positive(const YAML::Node& n, const std::string& what) const {
    const double x = number(n, what);
    if (!(x > 0.0)) fail(n, fmt::format("{} must be positive, got {}", what, x));
    return x;
  }

  std::string text(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, fmt::format("{} must be a string", what));
    return n.Scalar();
  }

  Eigen::Vector3d vec3(const YAML::Node& n, const std::string& what) const {
    if (!n.IsSequence() || n.size() != 3) fail(n, fmt::format("{} must be a list of 3 numbers [x, y, z]", what));
    Eigen::Vector3d v;
    for (int i = 0; i < 3; ++i) v[i] = number(n[i], what);
    return v;
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

// Converts world vectors to the model's local frame, rejecting points off a planar model's plane.
struct Frame {
  const Reader& rd;
  const Model& model;
  Eigen::VectorXd point(const YAML::Node& n, const std::string& what) const {
    const Eigen::Vector3d w = rd.vec3(n, what);
    Eigen::VectorXd local = model.basis.transpose() * (w - model.origin);
    if ((model.to_world(local) - w).norm() > 1e-12 * (1.0 + w.norm()))
      rd.fail(n, fmt::format("{} is not in the plane of motion", what));
    return local;
  }
  Eigen::VectorXd direction(const YAML::Node& n, const std::string& what) const {
    const Eigen::Vector3d w = rd.vec3(n, what);
    Eigen::VectorXd local = model.basis.transpose() * w;
    if ((model.to_world_direction(local) - w).norm() > 1e-12 * (1.0 + w.norm()))
      rd.fail(n, fmt::format("{} is not in the plane of motion", what));
    return local;
  }
};

void read_space(const Reader& rd, const YAML::Node& root, Model& model) {
  const YAML::Node space = rd.required(root, "space", "the problem");
  const std::string s = rd.text(space, "space");
  if (s == "spatial") {
    model.dim = 3;
    model.basis = Eigen::Matrix3d::Identity();
    if (root["plane"]) rd.fail(root["plane"], "'plane' is only allowed with space: planar");
    return;
  }
  if (s != "planar") rd.fail(space, fmt::format("space must be 'planar' or 'spatial', got '{}'", s));
  model.dim = 2;
  model.basis.resize(3, 2);
  model.basis << 1, 0, 0, 1, 0, 0;  // default: the x-y plane
  if (const YAML::Node plane = root["plane"]) {
    rd.expect_map(plane, "plane", {"origin", "e1", "e2"});
    if (plane["origin"]) model.origin = rd.vec3(plane["origin"], "plane.origin");
    const Eigen::Vector3d e1 = rd.vec3(rd.required(plane, "e1", "plane"), "plane.e1");
    const Eigen::Vector3d e2 = rd.vec3(rd.required(plane, "e2", "plane"), "plane.e2");
    if (std::abs(e1.norm() - 1.0) > 1e-9) rd.fail(plane["e1"], fmt::format("plane.e1 must be a unit vector (|e1| = {})", e1.norm()));
    if (std::abs(e2.norm() - 1.0) > 1e-9) rd.fail(plane["e2"], fmt::format("plane.e2 must be a unit vector (|e2| = {})", e2.norm()));
    if (std::abs(e1.dot(e2)) > 1e-9) rd.fail(plane["e2"], "plane.e2 must be orthogonal to plane.e1");
    model.basis.col(0) = e1;
    model.basis.col(1) = e2;
  }
}

// No material is denser than osmium (22.6e3 kg/m^3): larger values are a unit mistake (g/cm^3 is
// fine, kg/cm^3 is not).
constexpr double kMaxDensity = 1e5;

void read_rigid_body(const Reader& rd, const Frame& frame, const YAML::Node& b, const std::string& name, Model& model) {
  rd.expect_map(b, "a rigid body", {"name", "kind", "shape", "density", "position", "orientation", "velocity", "angular_velocity"});
  if (model.dim != 3) rd.fail(b["kind"], "rigid bodies need space: spatial");
  RigidBody body;
  body.name = name;
  const YAML::Node shape = rd.required(b, "shape", "body " + name);
  rd.expect_map(shape, "shape of " + name, {"box"});
  body.size = rd.vec3(rd.required(shape, "box", "shape of " + name), "box of " + name);
  for (int a = 0; a < 3; ++a)
    if (!(body.size[a] > 0.0)) rd.fail(shape["box"], fmt::format("box edges of {} must be positive, got {}", name, body.size[a]));
  const YAML::Node density = rd.required(b, "density", "body " + name);
  body.density = rd.positive(density, "density of " + name);
  if (body.density > kMaxDensity)
    rd.fail(density, fmt::format("density of {} is {} kg/m^3, denser than any material (osmium: 22.6e3); the unit is kg/m^3",
                                 name, body.density));
  body.mass = body.density * body.size.prod();
  body.second_moments = body.mass * body.size.cwiseAbs2() / 12.0;
  body.length_scale = 0.5 * body.size.norm();
  if (!std::isnormal(body.mass) || !body.second_moments.allFinite() || !(body.second_moments.array() > 0.0).all() ||
      !std::isfinite(body.length_scale))
    rd.fail(shape, fmt::format("box of {} gives mass {:.3g} kg and second moments {:.3g}, {:.3g}, {:.3g} kg m^2: not representable", name,
                               body.mass, body.second_moments[0], body.second_moments[1], body.second_moments[2]));
  body.r0 = frame.point(rd.required(b, "position", "body " + name), "position of " + name);
  body.R0.setIdentity();
  if (const YAML::Node o = b["orientation"]) {  // the rotation taking the world axes onto the body axes
    rd.expect_map(o, "orientation of " + name, {"axis", "angle_deg"});
    const Eigen::Vector3d axis = rd.vec3(rd.required(o, "axis", "orientation of " + name), "orientation axis of " + name);
    if (!(axis.norm() > 0.0)) rd.fail(o["axis"], fmt::format("orientation axis of {} must not be zero", name));
    const double deg = rd.number(rd.required(o, "angle_deg", "orientation of " + name), "orientation angle of " + name);
    body.R0 = Eigen::AngleAxisd(deg * M_PI / 180.0, axis.normalized()).toRotationMatrix();
  }
  body.v0 = b["velocity"] ? Eigen::Vector3d(frame.direction(b["velocity"], "velocity of " + name)) : Eigen::Vector3d::Zero();
  body.omega0 = b["angular_velocity"] ? Eigen::Vector3d(frame.direction(b["angular_velocity"], "angular velocity of " + name))
                                      : Eigen::Vector3d::Zero();
  model.bodies.push_back(std::move(body));
}

void read_bodies(const Reader& rd, const Frame& frame, const YAML::Node& root, Model& model) {
  const YAML::Node bodies = rd.required(root, "bodies", "the problem");
  if (!bodies.IsSequence() || bodies.size() == 0) rd.fail(bodies, "bodies must be a non-empty list");
  for (const YAML::Node& b : bodies) {
    if (!b.IsMap()) rd.fail(b, "a body must be a mapping");
    const std::string name = rd.text(rd.required(b, "name", "a body"), "body name");
    if (name == "ground") rd.fail(b["name"], "'ground' is reserved and cannot name a body");
    if (model.find_point(name) != kNoPoint || model.find_body(name) >= 0)
      rd.fail(b["name"], fmt::format("duplicate body name '{}'", name));
    const std::string kind = rd.text(rd.required(b, "kind", "body " + name), "body kind");
    if (kind == "rigid_body") {
      read_rigid_body(rd, frame, b, name, model);
      continue;
    }
    if (kind != "point_mass") rd.fail(b["kind"], fmt::format("unknown body kind '{}' (known: point_mass, rigid_body)", kind));
    rd.expect_map(b, "a point mass", {"name", "kind", "mass", "position", "velocity"});
    PointMass p;
    p.name = name;
    p.mass = rd.positive(rd.required(b, "mass", "body " + p.name), "mass of " + p.name);
    p.r0 = frame.point(rd.required(b, "position", "body " + p.name), "position of " + p.name);
    p.v0 = b["velocity"] ? frame.direction(b["velocity"], "velocity of " + p.name) : Eigen::VectorXd::Zero(model.dim);
    model.points.push_back(std::move(p));
  }
}

// Where each joint was written, and the constraint rows it owns, for messages about the initial state.
struct JointMark {
  YAML::Node node;
  std::string name;
  double scale;  // m: the length the position tolerance is relative to
};
using JointMarks = std::vector<JointMark>;  // one per constraint row

void read_joints(const Reader& rd, const Frame& frame, const YAML::Node& root, Model& model, JointMarks& marks) {
  const YAML::Node joints = root["joints"];
  std::vector<JointMark> sphericals;  // rows follow the rods'
  if (joints) {
    if (!joints.IsSequence()) rd.fail(joints, "joints must be a list");
    for (const YAML::Node& j : joints) {
      if (!j.IsMap()) rd.fail(j, "a joint must be a mapping");
      const std::string name = rd.text(rd.required(j, "name", "a joint"), "joint name");
      const std::string kind = rd.text(rd.required(j, "kind", "joint " + name), "joint kind");
      if (kind != "rod" && kind != "spherical")
        rd.fail(j["kind"], fmt::format("unknown joint kind '{}' (known: rod, spherical)", kind));
      if (kind == "rod") rd.expect_map(j, "a rod", {"name", "kind", "a", "b", "length"});
      else rd.expect_map(j, "a spherical joint", {"name", "kind", "a", "b"});
      // An end is {ground: [x, y, z]}, {body: POINT_MASS} or {body: RIGID_BODY, at: [x, y, z]} (body frame).
      auto end = [&](const char* key) {
        const YAML::Node e = rd.required(j, key, "joint " + name);
        rd.expect_map(e, fmt::format("end '{}' of joint {}", key, name), {"ground", "body", "at"});
        if (e["ground"] && e["body"]) rd.fail(e, "a joint end is either {ground: [x, y, z]} or {body: NAME}, not both");
        Anchor an;
        if (e["ground"]) {
          if (e["at"]) rd.fail(e["at"], "'at' locates a point on a rigid body; a ground end gives its position in 'ground'");
          an.at = frame.point(e["ground"], fmt::format("ground point of joint {}", name));
        } else if (e["body"]) {
          const std::string body = rd.text(e["body"], "body name");
          an.point = model.find_point(body);
          if (an.point == kNoPoint) {
            an.body = model.find_body(body);
            if (an.body < 0) rd.fail(e["body"], fmt::format("joint {} names body '{}', which is not defined", name, body));
            if (kind == "rod") rd.fail(e["body"], fmt::format("rods join point masses; attach rigid body {} with a spherical joint", body));
            an.at = rd.vec3(rd.required(e, "at", fmt::format("end '{}' of joint {} (a point on rigid body {}, body frame, m)", key, name, body)),
                            fmt::format("'at' of joint {}", name));
          } else if (e["at"]) {
            rd.fail(e["at"], fmt::format("'{}' is a point mass: a joint attaches to it without 'at'", body));
          }
        } else {
          rd.fail(e, "a joint end needs 'ground: [x, y, z]' or 'body: NAME'");
        }
        return an;
      };
      Anchor a = end("a"), b = end("b");
      const bool ground_a = a.body < 0 && a.point == kGround, ground_b = b.body < 0 && b.point == kGround;
      if (ground_a && ground_b) rd.fail(j, fmt::format("joint {} connects ground to ground", name));
      if (a.body == b.body && a.point == b.point) rd.fail(j, fmt::format("joint {} connects body to itself", name));
      if (ground_b) std::swap(a, b);  // keep the ground end in `a`
      const Eigen::VectorXd q0 = model.initial_q();
      const double initial = (model.anchor_position(a, q0) - model.anchor_position(b, q0)).norm();
      if (kind == "spherical") {
        model.sphericals.push_back(SphericalJoint{name, a, b});
        double scale = 1.0;  // m: the bodies' size, for the tolerance on coincidence
        for (const Anchor* an : {&a, &b})
          if (an->body >= 0) scale = std::max(scale, model.bodies[an->body].length_scale);
        for (int c = 0; c < model.dim; ++c) sphericals.push_back({j, "joint " + name, scale});
        continue;
      }
      Rod rod;
      rod.name = name;
      rod.a = a.point;
      rod.b = b.point;
      rod.ground_a = a.at;
      rod.length = j["length"] ? rd.positive(j["length"], "length of " + rod.name) : initial;
      if (!(rod.length > 0.0)) rd.fail(j, fmt::format("joint {} has zero length in the initial configuration", rod.name));
      marks.push_back({j["length"] ? j["length"] : j, "joint " + name, rod.length});
      model.rods.push_back(std::move(rod));
    }
  }
  marks.insert(marks.end(), sphericals.begin(), sphericals.end());
  for (const RigidBody& body : model.bodies)
    for (int r = 0; r < Model::kBodyConstraints; ++r) marks.push_back({root["bodies"], "rigidity of " + body.name, body.length_scale});
}

// Checks the initial state against the constraints at position and velocity level; projects it
// when asked (and checks again), else fails at the first violated joint with the violation.
void read_contacts(const Reader& rd, const Frame& frame, const YAML::Node& root, Model& model) {
  const YAML::Node contacts = root["contacts"];
  if (!contacts) return;
  if (!contacts.IsSequence()) rd.fail(contacts, "contacts must be a list");
  for (const YAML::Node& c : contacts) {
    rd.expect_map(c, "a contact", {"name", "kind", "point", "plane", "restitution"});
    PlaneContact pc;
    pc.name = rd.text(rd.required(c, "name", "a contact"), "contact name");
    const std::string kind = rd.text(rd.required(c, "kind", "contact " + pc.name), "contact kind");
    if (kind != "point_plane") rd.fail(c["kind"], fmt::format("unknown contact kind '{}' (known: point_plane)", kind));
    const YAML::Node pn = rd.required(c, "point", "contact " + pc.name);
    const std::string point = rd.text(pn, "contact point");
    pc.point = model.find_point(point);
    if (pc.point == kNoPoint) rd.fail(pn, fmt::format("contact {} names point mass '{}', which is not defined", pc.name, point));
    const YAML::Node plane = rd.required(c, "plane", "contact " + pc.name);
    rd.expect_map(plane, "plane of contact " + pc.name, {"point", "normal"});
    pc.plane_point = frame.point(rd.required(plane, "point", "plane of contact " + pc.name), "plane point of " + pc.name);
    const YAML::Node nn = rd.required(plane, "normal", "plane of contact " + pc.name);
    pc.normal = frame.direction(nn, "plane normal of " + pc.name);
    if (std::abs(pc.normal.norm() - 1.0) > 1e-9)
      rd.fail(nn, fmt::format("plane normal of {} must be a unit vector (|n| = {})", pc.name, pc.normal.norm()));
    const YAML::Node en = rd.required(c, "restitution", "contact " + pc.name);
    pc.restitution = rd.number(en, "restitution of " + pc.name);
    if (pc.restitution < 0.0 || pc.restitution > 1.0)
      rd.fail(en, fmt::format("restitution of {} must be in [0, 1], got {}", pc.name, pc.restitution));
    const double g0 = model.gap(pc, model.initial_q());
    if (g0 < -kInitialTolerance) rd.fail(pn, fmt::format("point {} starts {:.6g} m inside the plane of contact {}", point, -g0, pc.name));
    model.contacts.push_back(std::move(pc));
  }
}

void check_initial_state(const Reader& rd, const JointMarks& marks, Model& model, bool project) {
  if (model.nc() == 0) return;
  const NaturalCoordinates nat(model);
  Eigen::VectorXd q = model.initial_q(), v = model.initial_v(), phi(model.nc()), phi_v(model.nc());
  const double v_scale = 1.0 + (v.size() ? v.cwiseAbs().maxCoeff() : 0.0);
  auto violated = [&](int& which, bool& velocity) {
    nat.Phi(q, phi);
    nat.Phi_q_times(q, v, phi_v);
    for (int k = 0; k < model.nc(); ++k) {
      if (!(std::abs(phi[k]) <= kInitialTolerance * marks[k].scale)) return which = k, velocity = false, true;
      if (!(std::abs(phi_v[k]) <= kInitialTolerance * v_scale)) return which = k, velocity = true, true;
    }
    return false;
  };
  int k = 0;
  bool velocity = false;
  if (!violated(k, velocity)) return;
  if (project) {
    const Eigen::VectorXd Minv = nat.M_diag().cwiseInverse();
    Eigen::MatrixXd J(model.nc(), model.nq());
    for (int it = 0; it < 50; ++it) {  // Gauss-Newton, minimum mass-weighted correction
      nat.Phi(q, phi);
      if (phi.cwiseAbs().maxCoeff() < 1e-3 * kInitialTolerance) break;
      nat.Phi_q(q, J);
      const Eigen::MatrixXd S = J * Minv.asDiagonal() * J.transpose();
      q -= Minv.asDiagonal() * J.transpose() * S.completeOrthogonalDecomposition().solve(phi);
    }
    nat.Phi_q(q, J);
    const Eigen::MatrixXd S = J * Minv.asDiagonal() * J.transpose();
    v -= Minv.asDiagonal() * J.transpose() * S.completeOrthogonalDecomposition().solve(J * v);
    if (!violated(k, velocity)) {
      for (size_t i = 0; i < model.points.size(); ++i) {
        model.points[i].r0 = q.segment(model.dim * i, model.dim);
        model.points[i].v0 = v.segment(model.dim * i, model.dim);
      }
      for (size_t b = 0; b < model.bodies.size(); ++b) {
        RigidBody& body = model.bodies[b];
        const int o = model.body_offset(static_cast<int>(b));
        body.r0 = q.segment<3>(o);
        body.v0 = v.segment<3>(o);
        for (int a = 0; a < 3; ++a) body.R0.col(a) = q.segment<3>(o + 3 + 3 * a);
        // Exactly orthonormal (the projection leaves ~1e-12): the nearest rotation, by polar decomposition.
        const Eigen::JacobiSVD<Eigen::Matrix3d> svd(body.R0, Eigen::ComputeFullU | Eigen::ComputeFullV);
        body.R0 = svd.matrixU() * svd.matrixV().transpose();
        body.omega0 = nat.angular_velocity(static_cast<int>(b), q, v);
      }
      return;
    }
    rd.fail(marks[k].node, fmt::format("initial state of {} could not be projected onto the constraints", marks[k].name));
  }
  if (k < static_cast<int>(model.rods.size())) {
    const Rod& rod = model.rods[k];
    const Eigen::VectorXd ra = rod.a == kGround ? rod.ground_a : model.points[rod.a].r0;
    if (!velocity)
      rd.fail(marks[k].node, fmt::format("initial state violates joint {}: end points are {} m apart, length is {} m "
                                         "(fix the positions, or run with --project-initial-state)",
                                         rod.name, (ra - model.points[rod.b].r0).norm(), rod.length));
    rd.fail(marks[k].node, fmt::format("initial velocities violate joint {}: the distance between its ends changes at {:.6g} m/s "
                                       "(fix the velocities, or run with --project-initial-state)",
                                       rod.name, phi_v[k]));
  }
  if (!velocity)
    rd.fail(marks[k].node, fmt::format("initial state violates {} by {:.6g} m (constraint row {}; fix the positions, or run "
                                       "with --project-initial-state)", marks[k].name, phi[k], k));
  rd.fail(marks[k].node, fmt::format("initial velocities violate {} by {:.6g} m/s (constraint row {}; fix the velocities, or "
                                     "run with --project-initial-state)", marks[k].name, phi_v[k], k));
}

ReferenceSpec read_simple_pendulum_reference(const Reader& rd, const Frame& frame, const YAML::Node& ref, const Model& model) {
  rd.expect_map(ref, "reference", {"kind", "point", "pivot"});
  ReferenceSpec r;
  r.kind = "simple_pendulum_exact";
  const std::string point = rd.text(rd.required(ref, "point", "reference"), "reference.point");
  r.point = model.find_point(point);
  if (r.point == kNoPoint) rd.fail(ref["point"], fmt::format("reference names body '{}', which is not defined", point));
  r.pivot = frame.point(rd.required(ref, "pivot", "reference"), "reference.pivot");
  // The exact solution holds for a point hung from `pivot` by one rod, released from rest.
  bool hung = false;
  for (const Rod& rod : model.rods)
    hung = hung || (rod.a == kGround && rod.b == r.point && (rod.ground_a - r.pivot).norm() <= 1e-12 * rod.length);
  const PointMass& pm = model.points[r.point];
  if (!hung) rd.fail(ref["pivot"], fmt::format("simple_pendulum_exact needs a rod from the ground at the pivot to {}", point));
  if (model.rods.size() != 1 || model.points.size() != 1 || !model.bodies.empty() || !model.sphericals.empty())
    rd.fail(ref["kind"], "simple_pendulum_exact needs a model of one point and one rod");
  if (pm.v0.norm() != 0.0) rd.fail(ref["kind"], fmt::format("simple_pendulum_exact needs {} released from rest", point));
  if (model.gravity.norm() == 0.0) rd.fail(ref["kind"], "simple_pendulum_exact needs gravity");
  const Eigen::VectorXd d0 = pm.r0 - r.pivot;
  if (d0.dot(model.gravity) <= -(1 - 1e-12) * d0.norm() * model.gravity.norm())
    rd.fail(ref["kind"], "simple_pendulum_exact needs a release angle below pi (not straight up)");
  return r;
}

// A rigid body turning about a fixed axis: its spherical joints to the ground all lie on the axis
// (at least two distinct ones), nothing else is in the model, and it starts from rest. Energy then
// gives |omega| at the lowest position exactly, whatever the body's inertia.
ReferenceSpec read_hinged_body_reference(const Reader& rd, const Frame& frame, const YAML::Node& ref, const Model& model) {
  rd.expect_map(ref, "reference", {"kind", "body", "pivot", "axis"});
  ReferenceSpec r;
  r.kind = "hinged_body_energy";
  const std::string name = rd.text(rd.required(ref, "body", "reference"), "reference.body");
  r.body = model.find_body(name);
  if (r.body < 0) rd.fail(ref["body"], fmt::format("reference names rigid body '{}', which is not defined", name));
  r.pivot = frame.point(rd.required(ref, "pivot", "reference"), "reference.pivot");
  const Eigen::Vector3d axis = frame.direction(rd.required(ref, "axis", "reference"), "reference.axis");
  if (!(axis.norm() > 0.0)) rd.fail(ref["axis"], "reference.axis must not be zero");
  r.axis = axis.normalized();
  if (model.bodies.size() != 1 || !model.points.empty() || !model.rods.empty())
    rd.fail(ref["kind"], "hinged_body_energy needs a model of one rigid body and its spherical joints to the ground");
  const RigidBody& body = model.bodies[r.body];
  std::vector<Eigen::Vector3d> pins;
  for (const SphericalJoint& j : model.sphericals) {
    if (j.a.body >= 0 || j.a.point != kGround || j.b.body != r.body)
      rd.fail(ref["kind"], fmt::format("hinged_body_energy: joint {} does not join {} to the ground", j.name, name));
    const Eigen::Vector3d g = j.a.at, off = g - r.pivot;
    if ((off - off.dot(r.axis) * r.axis).norm() > 1e-9 * body.length_scale)
      rd.fail(ref["axis"], fmt::format("hinged_body_energy: joint {} is not on the axis through reference.pivot", j.name));
    bool distinct = true;
    for (const Eigen::Vector3d& pin : pins) distinct = distinct && (pin - g).norm() > 1e-9 * body.length_scale;
    if (distinct) pins.push_back(g);
  }
  if (pins.size() < 2) rd.fail(ref["kind"], "hinged_body_energy needs at least two distinct spherical joints on the axis");
  if (body.v0.norm() != 0.0 || body.omega0.norm() != 0.0)
    rd.fail(ref["kind"], fmt::format("hinged_body_energy needs {} released from rest", name));
  const Eigen::Vector3d g_perp = model.gravity - model.gravity.dot(r.axis) * r.axis;
  const Eigen::Vector3d arm = (body.r0 - r.pivot) - (body.r0 - r.pivot).dot(r.axis) * r.axis;
  if (g_perp.norm() == 0.0 || arm.norm() == 0.0)
    rd.fail(ref["kind"], "hinged_body_energy needs gravity across the axis and the centroid off the axis");
  const double cos0 = arm.normalized().dot(g_perp.normalized());  // 1: hanging at the bottom, -1: at the top
  if (cos0 >= 1.0 - 1e-12 || cos0 <= -1.0 + 1e-12)
    rd.fail(ref["kind"], fmt::format("hinged_body_energy needs {} released off its lowest and highest positions (it would not "
                                     "swing through the vertical)", name));
  return r;
}

// score and reference of a linearization problem: the rule is on the eigenvalue error, against
// the linearized pendulum's exact spectrum.
Problem read_analysis_score(const Reader& rd, const YAML::Node& root, Problem p) {
  const Frame frame{rd, p.model};  // p was moved in: a frame on the caller's model would dangle
  const YAML::Node score = rd.required(root, "score", "the problem");
  rd.expect_map(score, "score", {"rule", "objective"});
  const YAML::Node rule = rd.required(score, "rule", "score");
  rd.expect_map(rule, "score.rule", {"metric", "below"});
  p.rule.metric = rd.text(rd.required(rule, "metric", "score.rule"), "score.rule.metric");
  if (p.rule.metric != "eigenvalue_error")
    rd.fail(rule["metric"], fmt::format("a linearization is scored by eigenvalue_error, not '{}'", p.rule.metric));
  p.rule.below = rd.positive(rd.required(rule, "below", "score.rule"), "score.rule.below");
  p.objective = score["objective"] ? rd.text(score["objective"], "score.objective") : "cpu_time";
  if (p.objective != "cpu_time") rd.fail(score["objective"], fmt::format("unknown objective '{}' (known: cpu_time)", p.objective));
  const YAML::Node ref = rd.required(root, "reference", "the problem");
  rd.expect_map(ref, "reference", {"kind", "point", "pivot"});
  const std::string kind = rd.text(rd.required(ref, "kind", "reference"), "reference.kind");
  if (kind != "pendulum_linear")
    rd.fail(ref["kind"], fmt::format("a linearization needs reference kind pendulum_linear, not '{}'", kind));
  const Model& model = p.model;
  ReferenceSpec r;
  r.kind = kind;
  const std::string point = rd.text(rd.required(ref, "point", "reference"), "reference.point");
  r.point = model.find_point(point);
  if (r.point == kNoPoint) rd.fail(ref["point"], fmt::format("reference names body '{}', which is not defined", point));
  r.pivot = frame.point(rd.required(ref, "pivot", "reference"), "reference.pivot");
  if (model.rods.size() != 1 || model.points.size() != 1 || !model.bodies.empty() || !model.sphericals.empty() ||
      model.rods[0].a != kGround || (model.rods[0].ground_a - r.pivot).norm() > 1e-12 * model.rods[0].length)
    rd.fail(ref["kind"], "pendulum_linear needs a model of one point on one rod from the ground at the pivot");
  if (model.gravity.norm() == 0.0) rd.fail(ref["kind"], "pendulum_linear needs gravity");
  // The linearization is about the static equilibrium: hanging straight down, at rest.
  const PointMass& pm = model.points[r.point];
  const Eigen::VectorXd d = pm.r0 - r.pivot;
  if (pm.v0.norm() != 0.0 || (d.normalized() - model.gravity.normalized()).norm() > 1e-9)
    rd.fail(ref["kind"], fmt::format("pendulum_linear needs {} at rest straight below the pivot (the equilibrium)", point));
  p.reference = r;
  return p;
}

}  // namespace

const std::vector<std::string>& known_metrics() {
  static const std::vector<std::string> metrics{"max_energy_drift", "max_position_violation",
                                                "max_velocity_violation", "final_position_error", "max_penetration",
                                                "max_energy_drift_between_impacts"};
  return metrics;
}

Problem load_problem_text(const std::string& yaml_text, const std::string& file_name, const LoadOptions& options) {
  Reader rd(file_name);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    throw ProblemError(fmt::format("{}:{}:{}: YAML syntax error: {}", file_name, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  try {
    rd.expect_map(root, "the problem file",
                  {"name", "title", "source", "space", "plane", "gravity", "bodies", "joints", "contacts", "analysis", "run",
                   "score", "reference"});
    Problem p;
    p.file = file_name;
    p.name = rd.text(rd.required(root, "name", "the problem"), "name");
    p.title = root["title"] ? rd.text(root["title"], "title") : p.name;
    p.source = root["source"] ? rd.text(root["source"], "source") : "";
    Model& model = p.model;
    model.name = p.name;
    read_space(rd, root, model);
    const Frame frame{rd, model};
    model.gravity = frame.direction(rd.required(root, "gravity", "the problem"), "gravity");
    read_bodies(rd, frame, root, model);
    JointMarks marks;
    read_joints(rd, frame, root, model, marks);
    check_initial_state(rd, marks, model, options.project_initial_state);
    read_contacts(rd, frame, root, model);

    if (const YAML::Node an = root["analysis"]) {
      rd.expect_map(an, "analysis", {"kind", "repetitions"});
      Analysis a;
      a.kind = rd.text(rd.required(an, "kind", "analysis"), "analysis.kind");
      if (a.kind != "linearization") rd.fail(an["kind"], fmt::format("unknown analysis kind '{}' (known: linearization)", a.kind));
      if (const YAML::Node r = an["repetitions"]) {
        const double n = rd.positive(r, "analysis.repetitions");
        if (n != std::floor(n) || n > 1e8) rd.fail(r, "analysis.repetitions must be a whole number up to 1e8");
        a.repetitions = static_cast<int>(n);
      }
      if (root["run"]) rd.fail(root["run"], "an analysis problem has no 'run' (there is no time integration)");
      if (!model.contacts.empty()) rd.fail(root["contacts"], "linearization does not apply to contacts");
      p.analysis = a;
      p.history_name = model.points.empty() ? model.bodies[0].name : model.points[0].name;
      return read_analysis_score(rd, root, std::move(p));
    }
    const YAML::Node run = rd.required(root, "run", "the problem");
    rd.expect_map(run, "run", {"end_time", "output_interval", "history_point", "also_history_points"});
    p.run.end_time = rd.positive(rd.required(run, "end_time", "run"), "run.end_time");
    p.run.output_interval = run["output_interval"] ? rd.positive(run["output_interval"], "run.output_interval")
                                                   : p.run.end_time / 1000.0;
    // Bounds that keep histories and step counts representable.
    if (p.run.end_time > 1e6) rd.fail(run["end_time"], fmt::format("run.end_time must be at most 1e6 s, got {}", p.run.end_time));
    if (p.run.output_interval < 1e-7 * p.run.end_time)
      rd.fail(run["output_interval"], "run.output_interval must be at least 1e-7 of run.end_time (at most 1e7 history rows)");
    // Default: the first point mass, else the first rigid body's centroid.
    p.history_offset = model.points.empty() ? model.body_offset(0) : 0;
    p.history_name = model.points.empty() ? model.bodies[0].name : model.points[0].name;
    if (const YAML::Node hp = run["history_point"]) {
      const std::string point = rd.text(hp, "run.history_point");
      const int i = model.find_point(point), b = model.find_body(point);
      if (i == kNoPoint && b < 0) rd.fail(hp, fmt::format("run.history_point names body '{}', which is not defined", point));
      p.history_offset = i != kNoPoint ? model.dim * i : model.body_offset(b);
      p.history_name = point;
    }
    if (const YAML::Node more = run["also_history_points"]) {
      if (!more.IsSequence()) rd.fail(more, "run.also_history_points must be a list of body names");
      for (const YAML::Node& n : more) {
        const std::string point = rd.text(n, "run.also_history_points");
        const int i = model.find_point(point), b = model.find_body(point);
        if (i == kNoPoint && b < 0) rd.fail(n, fmt::format("run.also_history_points names body '{}', which is not defined", point));
        p.extra_history_points.emplace_back(point, i != kNoPoint ? model.dim * i : model.body_offset(b));
      }
    }

    const YAML::Node score = rd.required(root, "score", "the problem");
    rd.expect_map(score, "score", {"rule", "objective", "published_step", "checks", "energy_datum"});
    if (score["energy_datum"]) p.energy_datum = rd.number(score["energy_datum"], "score.energy_datum");
    const YAML::Node rule = rd.required(score, "rule", "score");
    rd.expect_map(rule, "score.rule", {"metric", "below", "checks_within"});
    p.rule.metric = rd.text(rd.required(rule, "metric", "score.rule"), "score.rule.metric");
    if (rule["checks_within"]) {
      p.rule.checks_within = rd.positive(rule["checks_within"], "score.rule.checks_within");
      if (!score["checks"]) rd.fail(rule["checks_within"], "score.rule.checks_within needs score.checks");
    }
    const auto& metrics = known_metrics();
    if (std::find(metrics.begin(), metrics.end(), p.rule.metric) == metrics.end())
      rd.fail(rule["metric"], fmt::format("score.rule.metric '{}' is not a metric the problem outputs (known: {})",
                                          p.rule.metric, fmt::join(metrics, ", ")));
    p.rule.below = rd.positive(rd.required(rule, "below", "score.rule"), "score.rule.below");
    if (p.rule.metric == "max_penetration" && !root["contacts"])
      rd.fail(rule["metric"], "metric max_penetration needs contacts");
    p.objective = score["objective"] ? rd.text(score["objective"], "score.objective") : "cpu_time";
    if (p.objective != "cpu_time") rd.fail(score["objective"], fmt::format("unknown objective '{}' (known: cpu_time)", p.objective));
    if (score["published_step"]) {
      p.published_step = rd.positive(score["published_step"], "score.published_step");
      if (*p.published_step > p.run.end_time)
        rd.fail(score["published_step"], "score.published_step is longer than run.end_time");
    }
    if (const YAML::Node checks = score["checks"]) {
      if (!checks.IsSequence()) rd.fail(checks, "score.checks must be a list");
      for (const YAML::Node& c : checks) {
        rd.expect_map(c, "a check", {"name", "quantity", "swings", "sampling", "published", "decimals", "published_is_target"});
        Check check;
        check.name = rd.text(rd.required(c, "name", "a check"), "check name");
        check.quantity = rd.text(rd.required(c, "quantity", "check " + check.name), "check quantity");
        if (check.quantity != "period" && check.quantity != "energy" && check.quantity != "angular_speed_at_vertical")
          rd.fail(c["quantity"], fmt::format("unknown check quantity '{}' (known: period, energy, angular_speed_at_vertical)",
                                             check.quantity));
        if (check.quantity == "angular_speed_at_vertical") {
          if (c["swings"]) rd.fail(c["swings"], "angular_speed_at_vertical is taken at the first pass; 'swings' does not apply");
          if (const YAML::Node sm = c["sampling"]) {
            check.sampling = rd.text(sm, "sampling");
            if (check.sampling != "step" && check.sampling != "interpolated")
              rd.fail(sm, fmt::format("sampling must be 'step' or 'interpolated', got '{}'", check.sampling));
          }
        } else {
          if (c["sampling"]) rd.fail(c["sampling"], fmt::format("'sampling' applies to angular_speed_at_vertical, not {}", check.quantity));
          const double swings = rd.positive(rd.required(c, "swings", "check " + check.name), "swings");
          if (swings != std::floor(swings)) rd.fail(c["swings"], "swings must be a whole number");
          check.swings = static_cast<int>(swings);
        }
        if (const YAML::Node pt = c["published_is_target"]) {
          bool b = false;
          if (!pt.IsScalar() || !YAML::convert<bool>::decode(pt, b)) rd.fail(pt, "published_is_target must be true or false");
          check.published_is_target = b;
        }
        check.published = rd.number(rd.required(c, "published", "check " + check.name), "published");
        const double decimals = rd.number(rd.required(c, "decimals", "check " + check.name), "decimals");
        if (decimals < 0 || decimals > 15 || decimals != std::floor(decimals))
          rd.fail(c["decimals"], "decimals must be a whole number from 0 to 15");
        check.decimals = static_cast<int>(decimals);
        p.checks.push_back(check);
      }
    }

    if (const YAML::Node ref = root["reference"]) {
      if (!ref.IsMap()) rd.fail(ref, "reference must be a mapping");
      const YAML::Node kind = rd.required(ref, "kind", "reference");
      const std::string k = rd.text(kind, "reference.kind");
      if (k == "simple_pendulum_exact") p.reference = read_simple_pendulum_reference(rd, frame, ref, model);
      else if (k == "hinged_body_energy") p.reference = read_hinged_body_reference(rd, frame, ref, model);
      else rd.fail(kind, fmt::format("unknown reference kind '{}' (known: simple_pendulum_exact, hinged_body_energy)", k));
      const bool hinged = k == "hinged_body_energy";
      for (size_t i = 0; i < p.checks.size(); ++i)
        if (hinged != (p.checks[i].quantity == "angular_speed_at_vertical"))
          rd.fail(score["checks"][i]["quantity"], fmt::format("check quantity '{}' does not apply to reference kind '{}'",
                                                              p.checks[i].quantity, k));
    } else if (p.rule.metric == "final_position_error") {
      rd.fail(rule["metric"], "metric final_position_error needs a 'reference' section");
    } else if (!p.checks.empty()) {
      rd.fail(score["checks"], "score.checks need a 'reference' section (the swings are counted about its pivot)");
    }
    if (p.reference && p.reference->kind == "hinged_body_energy" && p.rule.metric == "final_position_error") {
      rd.fail(rule["metric"], "metric final_position_error needs an exact solution in time; hinged_body_energy gives an energy balance only");
    }
    return p;
  } catch (const YAML::Exception& e) {  // e.g. a conversion yaml-cpp refused
    throw ProblemError(fmt::format("{}:{}:{}: {}", file_name, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

Problem load_problem(const std::string& path, const LoadOptions& options) {
  std::ifstream in(path);
  if (!in) throw ProblemError(fmt::format("{}: cannot open the problem file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return load_problem_text(ss.str(), path, options);
}

}  // namespace mbs
