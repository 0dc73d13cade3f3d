// YAML problem loader: strict (unknown keys are errors), every message "file:line:column: ...".
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_set>

#include "core/cancellation.hpp"
#include "core/initial_state.hpp"
#include "core/natural_coordinates.hpp"
#include "problem/problem.hpp"
#include "problem/yaml_reader.hpp"
#include "problem/element_kinds.hpp"
#include "problem/reference_kinds.hpp"
#include "elements/rod.hpp"
#include "elements/plane_contact.hpp"

namespace mbs {
namespace {

// A metric a time-integration rule may name, from its problem-file spelling.
std::optional<Metric> known_metric(const std::string& text) {
  const std::optional<Metric> m = metric_from_name(text);
  const auto& known = known_metrics();
  return m && std::find(known.begin(), known.end(), *m) != known.end() ? m : std::nullopt;
}

std::string known_metric_names() {
  std::vector<std::string> names;
  for (const Metric m : known_metrics()) names.push_back(to_string(m));
  return fmt::format("{}", fmt::join(names, ", "));
}

void read_space(const Reader& rd, const yaml::Node& root, Model& model) {
  const yaml::Node space = rd.required(root, "space", "the problem");
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
  if (const yaml::Node plane = root["plane"]) {
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

// A rigid body, planar or spatial, by `mass` + `inertia` or `shape` + `density`, with named points
// and attached point masses folded in exactly (mass, centroid, inertia, principal axes).
void read_rigid_body(const Reader& rd, const Frame& frame, const yaml::Node& b, const std::string& name, Model& model) {
  rd.expect_map(b, "a rigid body", {"name", "kind", "mass", "inertia", "shape", "density", "position", "orientation", "velocity",
                                    "angular_velocity", "points", "point_masses"});
  const int dim = model.dim;
  RigidBody body;
  body.name = name;
  double m = 0.0;
  Eigen::Matrix3d I = Eigen::Matrix3d::Zero();  // central inertia tensor of the body itself, body frame (planar: I(2,2))
  if (b["shape"] || b["density"]) {
    if (b["mass"] || b["inertia"]) rd.fail(b["mass"] ? b["mass"] : b["inertia"], fmt::format("body {}: give either shape and density, or mass and inertia", name));
    const yaml::Node shape = rd.required(b, "shape", "body " + name);
    rd.expect_map(shape, "shape of " + name, {"box"});
    const Eigen::Vector3d size = rd.vec3(rd.required(shape, "box", "shape of " + name), "box of " + name);
    for (int a = 0; a < 3; ++a)
      if (!(size[a] > 0.0)) rd.fail(shape["box"], fmt::format("box edges of {} must be positive, got {}", name, size[a]));
    const yaml::Node density = rd.required(b, "density", "body " + name);
    const double rho = rd.positive(density, "density of " + name);
    if (rho > kMaxDensity)
      rd.fail(density, fmt::format("density of {} is {} kg/m^3, denser than any material (osmium: 22.6e3); the unit is kg/m^3",
                                   name, rho));
    m = rho * size.prod();
    const Eigen::Vector3d s2 = m * size.cwiseAbs2() / 12.0;  // second moments along the edges
    I.diagonal() << s2[1] + s2[2], s2[0] + s2[2], s2[0] + s2[1];
    if (!std::isnormal(m) || !s2.allFinite() || !(s2.array() > 0.0).all())
      rd.fail(shape, fmt::format("box of {} gives mass {:.3g} kg and second moments {:.3g}, {:.3g}, {:.3g} kg m^2: not representable", name,
                                 m, s2[0], s2[1], s2[2]));
  } else {
    m = rd.positive(rd.required(b, "mass", "body " + name + " (kg; or shape and density)"), "mass of " + name);
    const yaml::Node in = rd.required(b, "inertia", "body " + name + " (kg m^2, about the centroid)");
    if (dim == 2) {
      if (!in.IsScalar()) rd.fail(in, fmt::format("inertia of {} is one number in a planar model (kg m^2, about the centroid)", name));
      I(2, 2) = rd.positive(in, "inertia of " + name);
    } else if (in.IsSequence() && in.size() == 3 && in[0].IsSequence()) {  // a full tensor, body frame
      for (int r = 0; r < 3; ++r) I.row(r) = rd.vec3(in[r], "inertia tensor of " + name).transpose();
      if ((I - I.transpose()).norm() > 1e-12 * I.norm()) rd.fail(in, fmt::format("inertia tensor of {} must be symmetric", name));
    } else {
      const Eigen::Vector3d p = rd.vec3(in, "principal moments of inertia of " + name);
      I.diagonal() = p;
    }
    if (dim == 3) {
      const Eigen::Vector3d ev = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(I).eigenvalues();
      if (!(ev.minCoeff() > 0.0)) rd.fail(in, fmt::format("inertia of {} must be positive definite (smallest principal moment {:.6g} kg m^2)", name, ev.minCoeff()));
      for (int k = 0; k < 3; ++k)
        if (!(ev[k] < ev.sum() - ev[k]))
          rd.fail(in, fmt::format("inertia of {}: principal moments {:.6g}, {:.6g}, {:.6g} kg m^2 violate the triangle inequality "
                                  "(each must be less than the sum of the other two)", name, ev[0], ev[1], ev[2]));
    }
  }
  // Attached point masses (e.g. flyballs), and the composite centroid c in the body frame.
  std::vector<std::pair<double, Eigen::VectorXd>> masses;
  if (const yaml::Node pm = b["point_masses"]) {
    if (!pm.IsSequence()) rd.fail(pm, fmt::format("point_masses of {} must be a list of {{mass, at}}", name));
    for (const yaml::Node& n : pm) {
      rd.expect_map(n, "a point mass of " + name, {"mass", "at"});
      const double mi = rd.positive(rd.required(n, "mass", "point mass of " + name), "point mass of " + name);
      masses.emplace_back(mi, rd.body_vector(rd.required(n, "at", "point mass of " + name), "'at' of a point mass of " + name, dim));
    }
  }
  Eigen::Vector3d c = Eigen::Vector3d::Zero();
  double M = m;
  for (const auto& [mi, p] : masses) {
    c.head(dim) += mi * p;
    M += mi;
  }
  c /= M;
  auto parallel = [](double mass, const Eigen::Vector3d& r) {  // inertia of a point mass about the origin
    return Eigen::Matrix3d(mass * (r.squaredNorm() * Eigen::Matrix3d::Identity() - r * r.transpose()));
  };
  Eigen::Matrix3d Ic = I + parallel(m, -c);
  for (const auto& [mi, p] : masses) {
    Eigen::Vector3d r = Eigen::Vector3d::Zero();
    r.head(dim) = p;
    Ic += parallel(mi, r - c);
  }
  body.mass = M;
  body.frame_centroid = c.head(dim);
  if (dim == 2) {
    body.frame_axes = Eigen::Matrix2d::Identity();
    // Any split J_1 + J_2 = I_zz gives the same planar dynamics (|u_1'| = |u_2'| = |omega|); the
    // even one keeps M well conditioned.
    body.second_moments = Eigen::Vector2d::Constant(0.5 * Ic(2, 2));
  } else {
    // Principal axes: the body frame's own when the tensor is diagonal in it (their order kept), else
    // the eigenvectors (a right-handed frame).
    Eigen::Matrix3d V = Eigen::Matrix3d::Identity();
    Eigen::Vector3d Ik = Ic.diagonal();
    if (!Ic.isDiagonal(0.0)) {
      const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(Ic);
      V = es.eigenvectors();
      if (V.determinant() < 0) V.col(2) *= -1.0;
      Ik = es.eigenvalues();
    }
    body.frame_axes = V;
    body.second_moments = Eigen::Vector3d::Constant(0.5 * Ik.sum()) - Ik;
  }
  if (!(body.second_moments.array() > 0.0).all())
    rd.fail(b, fmt::format("body {} has a zero second moment along a principal axis (a slender rod with no section): give it a "
                           "section, or model it as a rod between point masses", name));
  double extent = std::sqrt(3.0 * body.second_moments.sum() / M);  // a box's half diagonal
  for (const auto& [mi, p] : masses) extent = std::max(extent, (p - body.frame_centroid).norm());
  if (const yaml::Node pts = b["points"]) {
    if (!pts.IsMap()) rd.fail(pts, fmt::format("points of {} must be a mapping NAME: [x, y, z] (body frame, m)", name));
    for (const auto& kv : pts) {
      const std::string pname(kv.first.scalar_view());
      if (pname.empty() || pname.find('.') != std::string::npos) rd.fail(kv.first, fmt::format("point name '{}' of {} must be non-empty, without '.'", pname, name));
      if (body.find_point(pname) >= 0) rd.fail(kv.first, fmt::format("duplicate point '{}' of {}", pname, name));
      const Eigen::VectorXd p = rd.body_vector(kv.second, fmt::format("point {}.{}", name, pname), dim);
      extent = std::max(extent, (p - body.frame_centroid).norm());
      body.points.emplace_back(pname, body.from_body_frame(p));
    }
  }
  body.length_scale = extent;
  if (!std::isnormal(body.mass) || !body.second_moments.allFinite() || !std::isfinite(body.length_scale))
    rd.fail(b, fmt::format("body {} gives mass {:.3g} kg: not representable", name, body.mass));

  // Initial state of the body frame (origin, orientation, velocity, angular velocity).
  const Eigen::VectorXd origin = frame.point(rd.required(b, "position", "body " + name), "position of " + name);
  Eigen::MatrixXd R = Eigen::MatrixXd::Identity(dim, dim);  // body frame axes in the local frame
  if (const yaml::Node o = b["orientation"]) {
    if (dim == 2) {
      rd.expect_map(o, "orientation of " + name, {"angle_deg"});
      const double a = rd.number(rd.required(o, "angle_deg", "orientation of " + name), "orientation angle of " + name) * M_PI / 180.0;
      R << std::cos(a), -std::sin(a), std::sin(a), std::cos(a);
    } else {  // the rotation taking the world axes onto the body axes
      rd.expect_map(o, "orientation of " + name, {"axis", "angle_deg"});
      const Eigen::Vector3d axis = rd.vec3(rd.required(o, "axis", "orientation of " + name), "orientation axis of " + name);
      if (!(axis.norm() > 0.0)) rd.fail(o["axis"], fmt::format("orientation axis of {} must not be zero", name));
      const double deg = rd.number(rd.required(o, "angle_deg", "orientation of " + name), "orientation angle of " + name);
      R = Eigen::AngleAxisd(deg * M_PI / 180.0, axis.normalized()).toRotationMatrix();
    }
  }
  const Eigen::VectorXd v = b["velocity"] ? frame.direction(b["velocity"], "velocity of " + name) : Eigen::VectorXd::Zero(dim);
  if (const yaml::Node w = b["angular_velocity"]) {
    if (dim == 2) {
      if (!w.IsScalar()) rd.fail(w, fmt::format("angular_velocity of {} is one number in a planar model (rad/s, about e1 x e2)", name));
      body.omega0 = Eigen::Vector3d(0.0, 0.0, rd.number(w, "angular velocity of " + name));
    } else {
      body.omega0 = frame.direction(w, "angular velocity of " + name);
    }
  }
  const Eigen::VectorXd arm = R * body.frame_centroid;  // body-frame origin -> centroid, local frame
  Eigen::Vector3d arm3 = Eigen::Vector3d::Zero();
  arm3.head(dim) = arm;
  body.r0 = origin + arm;
  body.v0 = v + body.omega0.cross(arm3).head(dim);
  body.R0 = R * body.frame_axes;
  model.bodies.push_back(std::move(body));
}

// Entries read between two looks at --timeout's budget (a few ms of work).
constexpr size_t kCancellationStride = 4096;

void read_bodies(const Reader& rd, const Frame& frame, const yaml::Node& root, Model& model, std::vector<yaml::Node>& body_nodes,
                 ModelNames& names) {
  const yaml::Node bodies = rd.required(root, "bodies", "the problem");
  if (!bodies.IsSequence() || bodies.size() == 0) rd.fail(bodies, "bodies must be a non-empty list");
  size_t count = 0;
  for (const yaml::Node& b : bodies) {
    if (++count % kCancellationStride == 0) throw_if_cancelled("loading the problem's bodies");
    if (!b.IsMap()) rd.fail(b, "a body must be a mapping");
    const std::string name = rd.text(rd.required(b, "name", "a body"), "body name");
    if (name == "ground") rd.fail(b["name"], "'ground' is reserved and cannot name a body");
    if (name.find('.') != std::string::npos) rd.fail(b["name"], fmt::format("body name '{}' must not contain '.' (it separates a body from its point)", name));
    if (names.points.count(name) || names.bodies.count(name)) rd.fail(b["name"], fmt::format("duplicate body name '{}'", name));
    const std::string kind = rd.text(rd.required(b, "kind", "body " + name), "body kind");
    if (kind == "rigid_body") {
      read_rigid_body(rd, frame, b, name, model);
      names.bodies.emplace(name, static_cast<int>(model.bodies.size()) - 1);
      body_nodes.push_back(b);
      continue;
    }
    if (kind != "point_mass") rd.fail(b["kind"], fmt::format("unknown body kind '{}' (known: point_mass, rigid_body)", kind));
    rd.expect_map(b, "a point mass", {"name", "kind", "mass", "position", "velocity"});
    PointMass p;
    p.name = name;
    p.mass = rd.positive(rd.required(b, "mass", "body " + p.name), "mass of " + p.name);
    p.r0 = frame.point(rd.required(b, "position", "body " + p.name), "position of " + p.name);
    p.v0 = b["velocity"] ? frame.direction(b["velocity"], "velocity of " + p.name) : Eigen::VectorXd::Zero(model.dim);
    names.points.emplace(p.name, static_cast<int>(model.points.size()));
    model.points.push_back(std::move(p));
  }
}

// Every entry of the section of `role` (joints, forces, contacts), read by its registered kind.
// `bodies`: the loader's index of the bodies; `names`: the element names read so far, in every
// section (they are unique across sections).
void read_elements(const Reader& rd, const Frame& frame, const yaml::Node& root, Model& model, ElementRole role,
                   const ModelNames& bodies, std::unordered_set<std::string>& names) {
  const char* section = section_of(role);
  const char* word = role == ElementRole::kJoint ? "joint" : role == ElementRole::kForce ? "force" : "contact";
  const yaml::Node list = root[section];
  if (!list) return;
  if (!list.IsSequence()) rd.fail(list, fmt::format("{} must be a list", section));
  size_t count = 0;
  for (const yaml::Node& n : list) {
    if (++count % kCancellationStride == 0) throw_if_cancelled("loading the problem's elements");
    if (!n.IsMap()) rd.fail(n, fmt::format("a {} must be a mapping", word));
    const std::string name = rd.text(rd.required(n, "name", fmt::format("a {}", word)), fmt::format("{} name", word));
    if (!names.insert(name).second) rd.fail(n["name"], fmt::format("duplicate element name '{}'", name));
    const yaml::Node kn = rd.required(n, "kind", fmt::format("{} {}", word, name));
    const std::string kind = rd.text(kn, fmt::format("{} kind", word));
    const ElementKindInfo* info = ElementKinds::instance().find(role, kind);
    if (!info) {
      if (const ElementKindInfo* other = ElementKinds::instance().find(kind))
        rd.fail(kn, fmt::format("'{}' is a {}: list it under '{}'", kind, to_string(other->role), section_of(other->role)));
      rd.fail(kn, fmt::format("unknown {} kind '{}' (known: {})", word, kind, fmt::join(ElementKinds::instance().names(role), ", ")));
    }
    const ReadContext ctx{rd, frame, model, &bodies};
    model.elements.push_back(info->read(ctx, n, name));
  }
}

// cut_joints: joints the joint-coordinate formulations cut first (Model::cut_joints). Each must be
// a joint with a tree-joint description, named once, and close a loop: its two ends still joined
// by the joints that are not cut (union-find over the bodies, the ground one node), or cutting it
// would split the mechanism.
void read_cut_joints(const Reader& rd, const yaml::Node& root, Model& model) {
  const yaml::Node list = root["cut_joints"];
  if (!list) return;
  if (!list.IsSequence()) rd.fail(list, "cut_joints must be a list of joint names");
  const int np = static_cast<int>(model.points.size()), ne = static_cast<int>(model.elements.size());
  std::vector<char> cut(ne, 0);
  std::vector<yaml::Node> nodes;
  for (const yaml::Node& n : list) {
    const std::string name = rd.text(n, "a cut joint");
    int k = 0;
    while (k < ne && model.elements[k]->name != name) ++k;
    if (k == ne) {
      std::vector<std::string> joints;
      for (const auto& e : model.elements)
        if (e->role() == ElementRole::kJoint) joints.push_back(e->name);
      rd.fail(n, fmt::format("cut_joints names '{}', which is not an element of the problem (joints: {})", name, fmt::join(joints, ", ")));
    }
    const Element& e = *model.elements[k];
    if (e.role() != ElementRole::kJoint) rd.fail(n, fmt::format("cut_joints names '{}', a {}: only joints are cut", name, to_string(e.role())));
    if (e.tree_joint().type == TreeJointType::kNone)
      rd.fail(n, fmt::format("cut_joints names joint {}, whose kind ({}) gives no tree-joint description: no spanning tree holds it",
                             name, e.kind()));
    if (cut[k]) rd.fail(n, fmt::format("cut_joints names joint {} twice", name));
    cut[k] = 1;
    model.cut_joints.push_back(k);
    nodes.push_back(n);
  }
  std::vector<int> root_of(np + model.bodies.size() + 1);  // node + 1: the ground is 0
  for (size_t i = 0; i < root_of.size(); ++i) root_of[i] = static_cast<int>(i);
  auto node = [&](const Anchor& a) { return 1 + (a.body >= 0 ? np + a.body : a.point); };
  auto find = [&](int i) {
    while (root_of[i] != i) i = root_of[i] = root_of[root_of[i]];
    return i;
  };
  for (int k = 0; k < ne; ++k) {
    const TreeJoint j = model.elements[k]->tree_joint();
    if (!cut[k] && j.type != TreeJointType::kNone) root_of[find(node(*j.a))] = find(node(*j.b));
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Element& e = *model.elements[model.cut_joints[i]];
    const TreeJoint j = e.tree_joint();
    if (find(node(*j.a)) != find(node(*j.b)))
      rd.fail(nodes[i], fmt::format("cut joint {} closes no loop: without the cut joints nothing joins {} to {} (cutting it "
                                    "would split the mechanism)", e.name, model.anchor_name(*j.a), model.anchor_name(*j.b)));
  }
}

// Checks the initial state against the constraints at position and velocity level; projects it
// when asked (core/initial_state.hpp) and checks again, else fails at the first violated joint with
// the violation.
void check_initial_state(const Reader& rd, const std::vector<yaml::Node>& body_nodes, Model& model, bool project) {
  if (model.nc() == 0) return;
  const NaturalCoordinates nat(model);
  Eigen::VectorXd q = model.initial_q(), v = model.initial_v(), phi(model.nc()), phi_v(model.nc());
  const double v_scale = 1.0 + (v.size() ? v.cwiseAbs().maxCoeff() : 0.0);
  auto violated = [&](int& which, bool& velocity) {
    nat.Phi(q, phi);
    nat.Phi_q_times(q, v, phi_v);
    for (int k = 0; k < nat.nc(); ++k) {
      if (!(std::abs(phi[k]) <= kInitialTolerance * nat.rows()[k].scale)) return which = k, velocity = false, true;
      if (!(std::abs(phi_v[k]) <= kInitialTolerance * v_scale)) return which = k, velocity = true, true;
    }
    return false;
  };
  int k = 0;
  bool velocity = false;
  if (!violated(k, velocity)) return;
  // Where row k was written, and what to call it.
  const int e = nat.row_element(k);
  const std::string owner = e >= 0 ? "joint " + model.elements[e]->name : "rigidity of " + model.bodies[nat.row_body(k)].name;
  auto fail_row = [&](const std::string& what) {
    if (e >= 0) rd.fail_at(model.elements[e]->mark, what);
    rd.fail(body_nodes[nat.row_body(k)], what);
  };
  if (project) {
    if (const std::string refused = project_initial_state(model); !refused.empty()) fail_row(refused);
    q = model.initial_q();
    v = model.initial_v();
    if (!violated(k, velocity)) return;
    fail_row(fmt::format("initial state of {} could not be projected onto the constraints", owner));
  }
  if (e >= 0) {
    if (const auto* rod = dynamic_cast<const Rod*>(model.elements[e].get())) {
      const Eigen::VectorXd ra = model.anchor_position(rod->a, q), rb = model.anchor_position(rod->b, q);
      if (!velocity)
        fail_row(fmt::format("initial state violates joint {}: end points are {} m apart, length is {} m "
                             "(fix the positions, or run with --project-initial-state)",
                             rod->name, (ra - rb).norm(), rod->length));
      fail_row(fmt::format("initial velocities violate joint {}: the distance between its ends changes at {:.6g} m/s "
                           "(fix the velocities, or run with --project-initial-state)",
                           rod->name, phi_v[k]));
    }
  }
  if (!velocity)
    fail_row(fmt::format("initial state violates {} by {:.6g} m (constraint row {}; fix the positions, or run "
                         "with --project-initial-state)", owner, phi[k], k));
  fail_row(fmt::format("initial velocities violate {} by {:.6g} m/s (constraint row {}; fix the velocities, or "
                       "run with --project-initial-state)", owner, phi_v[k], k));
}

// score and reference of a linearization problem: the rule is on the eigenvalue error, against
// the linearized pendulum's exact spectrum.
Problem read_analysis_score(const Reader& rd, const yaml::Node& root, Problem p) {
  const Frame frame{rd, p.model};  // p was moved in: a frame on the caller's model would dangle
  const yaml::Node score = rd.required(root, "score", "the problem");
  rd.expect_map(score, "score", {"rule", "objective"});
  const yaml::Node rule = rd.required(score, "rule", "score");
  rd.expect_map(rule, "score.rule", {"metric", "below"});
  const std::string metric = rd.text(rd.required(rule, "metric", "score.rule"), "score.rule.metric");
  if (metric != name(Metric::kEigenvalueError))
    rd.fail(rule["metric"], fmt::format("a linearization is scored by eigenvalue_error, not '{}'", metric));
  p.rule.metric = Metric::kEigenvalueError;
  p.rule.below = rd.positive(rd.required(rule, "below", "score.rule"), "score.rule.below");
  p.objective = score["objective"] ? rd.text(score["objective"], "score.objective") : "cpu_time";
  if (p.objective != "cpu_time") rd.fail(score["objective"], fmt::format("unknown objective '{}' (known: cpu_time)", p.objective));
  const yaml::Node ref = rd.required(root, "reference", "the problem");
  if (!ref.IsMap()) rd.fail(ref, "reference must be a mapping");
  const std::string kind = rd.text(rd.required(ref, "kind", "reference"), "reference.kind");
  const ReferenceKindInfo* info = ReferenceKinds::instance().find(kind);
  if (!info || !info->analysis)
    rd.fail(ref["kind"], fmt::format("a linearization needs reference kind {}, not '{}'",
                                     fmt::join(ReferenceKinds::instance().names([](const ReferenceKindInfo& k) { return k.analysis; }), " or "),
                                     kind));
  p.reference = info->read(ReadContext{rd, frame, p.model}, ref, p);
  return p;
}

}  // namespace

Combo measured_point(const Reader& rd, const yaml::Node& n, const Model& model, const std::string& what) {
  return measured_point(rd, rd.text(n, what), n, model, what);
}

Combo measured_point(const Reader& rd, const std::string& s, const yaml::Node& n, const Model& model, const std::string& what) {
  Combo d = model.combo();
  const size_t dot = s.find('.');
  if (dot != std::string::npos) {
    const int k = model.find_body(s.substr(0, dot));
    if (k < 0) rd.fail(n, fmt::format("{} names rigid body '{}', which is not defined", what, s.substr(0, dot)));
    const int pt = model.bodies[k].find_point(s.substr(dot + 1));
    if (pt < 0) rd.fail(n, fmt::format("{} names point '{}' of {}, which is not defined (its 'points')", what, s.substr(dot + 1), s.substr(0, dot)));
    model.add_anchor(d, Anchor{kNoPoint, k, model.bodies[k].points[pt].second}, 1.0);
    return d;
  }
  const int offset = model.position_offset(s);
  if (offset < 0) rd.fail(n, fmt::format("{} names body '{}', which is not defined", what, s));
  d.add(offset, 1.0);
  return d;
}

const std::vector<Metric>& known_metrics() {
  static const std::vector<Metric> metrics = [] {
    std::vector<Metric> m;
    for (const Metric x : kAllMetrics)
      if (x != Metric::kEigenvalueError) m.push_back(x);
    return m;
  }();
  return metrics;
}

std::string fnv1a_hex(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

// yaml-cpp's canonical dump, which the stored references' keys were made with; a text only libyaml
// reads is keyed on its bytes.
std::string problem_key(const Problem& problem) {
  try {
    YAML::Node root = YAML::Load(problem.text);
    if (root.IsMap()) {
      root.remove("title");
      root.remove("source");
    }
    return fnv1a_hex(YAML::Dump(root));
  } catch (const YAML::Exception&) {
    return "text-" + fnv1a_hex(problem.text);
  }
}

Problem load_problem_text(const std::string& yaml_text, const std::string& file_name, const LoadOptions& options) {
  Reader rd(file_name);
  std::unique_ptr<const yaml::Document> doc;
  try {
    doc = std::make_unique<const yaml::Document>(yaml_text);
  } catch (const yaml::ParseError& e) {
    if (e.mark.is_null()) throw ProblemError(fmt::format("{}: YAML syntax error: {}", file_name, e.what()));
    throw ProblemError(fmt::format("{}:{}:{}: YAML syntax error: {}", file_name, e.mark.line + 1, e.mark.column + 1, e.what()));
  }
  const yaml::Node root = doc->root();
  {
    rd.expect_map(root, "the problem file",
                  {"name", "title", "source", "space", "plane", "gravity", "bodies", "joints", "cut_joints", "forces", "contacts", "analysis",
                   "run", "score", "reference"});
    Problem p;
    p.file = file_name;
    p.text = yaml_text;
    p.name = rd.text(rd.required(root, "name", "the problem"), "name");
    p.title = root["title"] ? rd.text(root["title"], "title") : p.name;
    p.source = root["source"] ? rd.text(root["source"], "source") : "";
    Model& model = p.model;
    model.name = p.name;
    read_space(rd, root, model);
    const Frame frame{rd, model};
    model.gravity = frame.direction(rd.required(root, "gravity", "the problem"), "gravity");
    std::vector<yaml::Node> body_nodes;
    ModelNames names;
    read_bodies(rd, frame, root, model, body_nodes, names);
    std::unordered_set<std::string> element_names;
    read_elements(rd, frame, root, model, ElementRole::kJoint, names, element_names);
    check_initial_state(rd, body_nodes, model, options.project_initial_state);
    read_elements(rd, frame, root, model, ElementRole::kForce, names, element_names);
    read_elements(rd, frame, root, model, ElementRole::kContact, names, element_names);
    read_cut_joints(rd, root, model);

    if (const yaml::Node an = root["analysis"]) {
      rd.expect_map(an, "analysis", {"kind", "repetitions"});
      Analysis a;
      a.kind = rd.text(rd.required(an, "kind", "analysis"), "analysis.kind");
      if (a.kind != "linearization") rd.fail(an["kind"], fmt::format("unknown analysis kind '{}' (known: linearization)", a.kind));
      if (const yaml::Node r = an["repetitions"]) {
        const double n = rd.positive(r, "analysis.repetitions");
        if (n != std::floor(n) || n > 1e8) rd.fail(r, "analysis.repetitions must be a whole number up to 1e8");
        a.repetitions = static_cast<int>(n);
      }
      if (root["run"]) rd.fail(root["run"], "an analysis problem has no 'run' (there is no time integration)");
      if (model.has_role(ElementRole::kContact)) rd.fail(root["contacts"], "linearization does not apply to contacts");
      p.analysis = a;
      p.history_name = model.points.empty() ? model.bodies[0].name : model.points[0].name;
      p.history_point = measured_point(rd, p.history_name, yaml::Node(), model, "run.history_point");
      return read_analysis_score(rd, root, std::move(p));
    }
    const yaml::Node run = rd.required(root, "run", "the problem");
    rd.expect_map(run, "run", {"end_time", "output_interval", "history_point", "also_history_points", "final_angles"});
    if (const yaml::Node fa = run["final_angles"]) {
      if (!fa.IsSequence()) rd.fail(fa, "run.final_angles must be a list of {name, body, relative_to, initial, published}");
      if (model.dim != 2) rd.fail(fa, "run.final_angles are for planar problems (an angle about the plane's normal)");
      for (const yaml::Node& n : fa) {
        rd.expect_map(n, "a final angle", {"name", "body", "relative_to", "initial", "published"});
        FinalAngle a;
        a.name = rd.text(rd.required(n, "name", "a final angle"), "final angle name");
        auto body = [&](const char* key) {
          const std::string b = rd.text(n[key], fmt::format("final angle {}.{}", a.name, key));
          const int k = model.find_body(b);
          if (k < 0) rd.fail(n[key], fmt::format("final angle {}: '{}' is not a rigid body", a.name, b));
          return k;
        };
        if (!n["body"]) rd.fail(n, fmt::format("final angle {} needs its body", a.name));
        a.body = body("body");
        if (n["relative_to"]) a.relative_to = body("relative_to");
        if (n["initial"]) a.initial = rd.number(n["initial"], "final angle initial (rad)");
        if (n["published"]) a.published = rd.number(n["published"], "final angle published (rad)");
        p.run.final_angles.push_back(a);
      }
    }
    p.run.end_time = rd.positive(rd.required(run, "end_time", "run"), "run.end_time");
    p.run.output_interval = run["output_interval"] ? rd.positive(run["output_interval"], "run.output_interval")
                                                   : p.run.end_time / 1000.0;
    // Bounds that keep histories and step counts representable.
    if (p.run.end_time > 1e6) rd.fail(run["end_time"], fmt::format("run.end_time must be at most 1e6 s, got {}", p.run.end_time));
    if (p.run.output_interval > p.run.end_time)
      rd.fail(run["output_interval"], fmt::format("run.output_interval ({} s) is longer than run.end_time ({} s)",
                                                  p.run.output_interval, p.run.end_time));
    if (p.run.output_interval < 1e-7 * p.run.end_time)
      rd.fail(run["output_interval"], "run.output_interval must be at least 1e-7 of run.end_time (at most 1e7 history rows)");
    // Default: the first point mass, else the first rigid body's centroid.
    p.history_name = model.points.empty() ? model.bodies[0].name : model.points[0].name;
    p.history_point = measured_point(rd, p.history_name, yaml::Node(), model, "run.history_point");
    if (const yaml::Node hp = run["history_point"]) {
      p.history_name = rd.text(hp, "run.history_point");
      p.history_point = measured_point(rd, hp, model, "run.history_point");
    }
    if (const yaml::Node more = run["also_history_points"]) {
      if (!more.IsSequence()) rd.fail(more, "run.also_history_points must be a list of body names");
      for (const yaml::Node& n : more)
        p.extra_history_points.emplace_back(rd.text(n, "run.also_history_points"), measured_point(rd, n, model, "run.also_history_points"));
    }
    const yaml::Node score = rd.required(root, "score", "the problem");
    rd.expect_map(score, "score", {"rule", "objective", "published_step", "checks", "energy_datum", "angular_momentum_about", "report"});
    if (const yaml::Node am = score["angular_momentum_about"]) {
      rd.expect_map(am, "score.angular_momentum_about", {"point", "axis"});
      if (model.dim != 3) rd.fail(am, "score.angular_momentum_about is for spatial problems (a planar one conserves it about the plane normal only)");
      Problem::MomentumAxis m;
      m.point = frame.point(rd.required(am, "point", "score.angular_momentum_about"), "score.angular_momentum_about.point");
      const Eigen::Vector3d a = frame.direction(rd.required(am, "axis", "score.angular_momentum_about"), "score.angular_momentum_about.axis");
      if (!(a.norm() > 0.0)) rd.fail(am["axis"], "score.angular_momentum_about.axis must not be zero");
      m.axis = a.normalized();
      p.momentum_axis = m;
    }
    if (const yaml::Node rep = score["report"]) {
      if (!rep.IsSequence()) rd.fail(rep, "score.report must be a list of metrics");
      for (const yaml::Node& n : rep) {
        const std::string text = rd.text(n, "score.report");
        const std::optional<Metric> m = known_metric(text);
        if (!m) rd.fail(n, fmt::format("score.report: '{}' is not a metric (known: {})", text, known_metric_names()));
        if (*m == Metric::kMaxAngularMomentumDrift && !score["angular_momentum_about"])
          rd.fail(n, "metric max_angular_momentum_drift needs score.angular_momentum_about");
        p.reported_metrics.push_back(*m);
      }
    }
    if (score["energy_datum"]) p.energy_datum = rd.number(score["energy_datum"], "score.energy_datum");
    const yaml::Node rule = rd.required(score, "rule", "score");
    rd.expect_map(rule, "score.rule", {"metric", "below", "checks_within"});
    const std::string metric = rd.text(rd.required(rule, "metric", "score.rule"), "score.rule.metric");
    if (rule["checks_within"]) {
      p.rule.checks_within = rd.positive(rule["checks_within"], "score.rule.checks_within");
      if (!score["checks"]) rd.fail(rule["checks_within"], "score.rule.checks_within needs score.checks");
    }
    const std::optional<Metric> known = known_metric(metric);
    if (!known)
      rd.fail(rule["metric"], fmt::format("score.rule.metric '{}' is not a metric the problem outputs (known: {})",
                                          metric, known_metric_names()));
    p.rule.metric = *known;
    p.rule.below = rd.positive(rd.required(rule, "below", "score.rule"), "score.rule.below");
    if (p.rule.metric == Metric::kMaxAngularMomentumDrift && !score["angular_momentum_about"])
      rd.fail(rule["metric"], "metric max_angular_momentum_drift needs score.angular_momentum_about");
    if (p.rule.metric == Metric::kMaxPenetration && !root["contacts"])
      rd.fail(rule["metric"], "metric max_penetration needs contacts");
    p.objective = score["objective"] ? rd.text(score["objective"], "score.objective") : "cpu_time";
    if (p.objective != "cpu_time") rd.fail(score["objective"], fmt::format("unknown objective '{}' (known: cpu_time)", p.objective));
    if (score["published_step"]) {
      p.published_step = rd.positive(score["published_step"], "score.published_step");
      if (*p.published_step > p.run.end_time)
        rd.fail(score["published_step"], "score.published_step is longer than run.end_time");
    }
    if (const yaml::Node checks = score["checks"]) {
      if (!checks.IsSequence()) rd.fail(checks, "score.checks must be a list");
      for (const yaml::Node& c : checks) {
        rd.expect_map(c, "a check", {"name", "quantity", "swings", "sampling", "published", "decimals", "published_is_target"});
        Check check;
        check.name = rd.text(rd.required(c, "name", "a check"), "check name");
        check.quantity = rd.text(rd.required(c, "quantity", "check " + check.name), "check quantity");
        if (check.quantity != "period" && check.quantity != "energy" && check.quantity != "angular_speed_at_vertical")
          rd.fail(c["quantity"], fmt::format("unknown check quantity '{}' (known: period, energy, angular_speed_at_vertical)",
                                             check.quantity));
        if (check.quantity == "angular_speed_at_vertical") {
          if (c["swings"]) rd.fail(c["swings"], "angular_speed_at_vertical is taken at the first pass; 'swings' does not apply");
          if (const yaml::Node sm = c["sampling"]) {
            const std::string sampling = rd.text(sm, "sampling");
            if (sampling != "step" && sampling != "interpolated")
              rd.fail(sm, fmt::format("sampling must be 'step' or 'interpolated', got '{}'", sampling));
            check.sampling = sampling == "step" ? Check::Sampling::kStep : Check::Sampling::kInterpolated;
          }
        } else {
          if (c["sampling"]) rd.fail(c["sampling"], fmt::format("'sampling' applies to angular_speed_at_vertical, not {}", check.quantity));
          const double swings = rd.positive(rd.required(c, "swings", "check " + check.name), "swings");
          if (swings != std::floor(swings)) rd.fail(c["swings"], "swings must be a whole number");
          check.swings = static_cast<int>(swings);
        }
        if (const yaml::Node pt = c["published_is_target"]) {
          bool b = false;
          if (!pt.IsScalar() || !yaml::to_bool(pt.scalar_view(), b)) rd.fail(pt, "published_is_target must be true or false");
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

    if (const yaml::Node ref = root["reference"]) {
      if (!ref.IsMap()) rd.fail(ref, "reference must be a mapping");
      const yaml::Node kind = rd.required(ref, "kind", "reference");
      const std::string k = rd.text(kind, "reference.kind");
      const ReferenceKinds& kinds = ReferenceKinds::instance();
      const ReferenceKindInfo* info = kinds.find(k);
      if (!info || info->analysis)
        rd.fail(kind, fmt::format("unknown reference kind '{}' (known: {})", k,
                                  fmt::join(kinds.names([](const ReferenceKindInfo& i) { return !i.analysis; }), ", ")));
      p.reference = info->read(ReadContext{rd, frame, model}, ref, p);
      if (!p.checks.empty() && p.reference->info().check_quantities.empty())
        rd.fail(score["checks"], fmt::format("score.checks need an exact reference that evaluates them ({}), not a {} one",
                                             fmt::join(kinds.names([](const ReferenceKindInfo& i) {
                                                         return i.exact && !i.analysis && !i.check_quantities.empty();
                                                       }), ", "), k));
      for (size_t i = 0; i < p.checks.size(); ++i)
        if (!p.reference->evaluates(p.checks[i].quantity))
          rd.fail(score["checks"][i]["quantity"], fmt::format("check quantity '{}' does not apply to reference kind '{}'",
                                                              p.checks[i].quantity, k));
      // An exact reference without positions (an energy balance) would leave the metric NaN: never
      // passing, silently. (A converged one is not held to it, as before; it leaves it NaN too.)
      if (p.rule.metric == Metric::kFinalPositionError && p.reference->exact() && !p.reference->gives_final_position())
        rd.fail(rule["metric"], fmt::format("metric final_position_error needs an exact solution in time ({}); {} gives none",
                                            fmt::join(kinds.names([](const ReferenceKindInfo& i) { return i.final_position; }), ", "), k));
    } else if (p.rule.metric == Metric::kFinalPositionError) {
      rd.fail(rule["metric"], "metric final_position_error needs a 'reference' section");
    } else if (!p.checks.empty()) {
      rd.fail(score["checks"], "score.checks need a 'reference' section (the swings are counted about its pivot)");
    }
    if (is_reference_metric(p.rule.metric) &&
        !(p.reference && p.reference->gives_positions_in_time()))
      rd.fail(rule["metric"], fmt::format("metric {} needs a reference that gives positions in time ({})", name(p.rule.metric),
                                          fmt::join(ReferenceKinds::instance().names([](const ReferenceKindInfo& i) { return i.positions_in_time; }), " or ")));
    return p;
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
