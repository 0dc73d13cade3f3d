// Reading problem YAML with file:line:col messages: the strict Reader, the Frame that maps world
// vectors into the model's local frame, and the context element kinds read their entries with.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <fmt/format.h>
#include <set>
#include <string>
#include <unordered_map>

#include "core/model.hpp"
#include "problem/problem.hpp"
#include "problem/yaml_document.hpp"

namespace mbs {

// Edit distance, for "did you mean" suggestions on unknown keys.
inline size_t edit_distance(const std::string& a, const std::string& b) {
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

  [[noreturn]] void fail_at(const SourceMark& m, const std::string& what) const {
    if (m.line == 0) throw ProblemError(fmt::format("{}: {}", file_, what));
    throw ProblemError(fmt::format("{}:{}:{}: {}", file_, m.line, m.column, what));
  }

  [[noreturn]] void fail(const yaml::Node& at, const std::string& what) const {
    const yaml::Mark m = at.mark();
    if (m.is_null()) throw ProblemError(fmt::format("{}: {}", file_, what));
    throw ProblemError(fmt::format("{}:{}:{}: {}", file_, m.line + 1, m.column + 1, what));
  }

  // A mapping whose keys must all be in `allowed`.
  void expect_map(const yaml::Node& node, const std::string& what, const std::set<std::string>& allowed) const {
    if (!node.IsMap()) fail(node, fmt::format("{} must be a mapping", what));
    for (const auto& kv : node) {
      const std::string key(kv.first.scalar_view());
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

  yaml::Node required(const yaml::Node& map, const std::string& key, const std::string& where) const {
    const yaml::Node n = map[key];
    if (!n) fail(map, fmt::format("missing required key '{}' in {}", key, where));
    return n;
  }

  double number(const yaml::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, fmt::format("{} must be a number", what));
    double x;
    if (!yaml::to_double(n.scalar_view(), x) || !std::isfinite(x))
      fail(n, fmt::format("{} must be a finite number, got '{}'", what, n.Scalar()));
    return x;
  }

  double positive(const yaml::Node& n, const std::string& what) const {
    const double x = number(n, what);
    if (!(x > 0.0)) fail(n, fmt::format("{} must be positive, got {}", what, x));
    return x;
  }

  std::string text(const yaml::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, fmt::format("{} must be a string", what));
    return n.Scalar();
  }

  Eigen::Vector3d vec3(const yaml::Node& n, const std::string& what) const {
    if (!n.IsSequence() || n.size() != 3) fail(n, fmt::format("{} must be a list of 3 numbers [x, y, z]", what));
    Eigen::Vector3d v;
    for (int i = 0; i < 3; ++i) v[i] = number(n[i], what);
    return v;
  }

  // A body-frame vector: [x, y] or [x, y, 0] in a planar model, [x, y, z] in a spatial one.
  Eigen::VectorXd body_vector(const yaml::Node& n, const std::string& what, int dim) const {
    if (dim == 2 && n.IsSequence() && n.size() == 2) return Eigen::Vector2d(number(n[0], what), number(n[1], what));
    const Eigen::Vector3d v = vec3(n, what);
    if (dim == 2 && v[2] != 0.0) fail(n, fmt::format("{} is off the plane (z must be 0 in a planar body's frame)", what));
    return v.head(dim);
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

// Converts world vectors to the model's local frame, rejecting points off a planar model's plane.
struct Frame {
  const Reader& rd;
  const Model& model;
  Eigen::VectorXd point(const yaml::Node& n, const std::string& what) const {
    const Eigen::Vector3d w = rd.vec3(n, what);
    Eigen::VectorXd local = model.basis.transpose() * (w - model.origin);
    if ((model.to_world(local) - w).norm() > 1e-12 * (1.0 + w.norm()))
      rd.fail(n, fmt::format("{} is not in the plane of motion", what));
    return local;
  }
  Eigen::VectorXd direction(const yaml::Node& n, const std::string& what) const {
    const Eigen::Vector3d w = rd.vec3(n, what);
    Eigen::VectorXd local = model.basis.transpose() * w;
    if ((model.to_world_direction(local) - w).norm() > 1e-12 * (1.0 + w.norm()))
      rd.fail(n, fmt::format("{} is not in the plane of motion", what));
    return local;
  }
};


// The names of a model's point masses and rigid bodies, with their indices, as the loader reads
// them: found in O(1), where Model::find_point and find_body scan the lists (O(N^2) for the joints
// of an N-body model).
struct ModelNames {
  std::unordered_map<std::string, int> points, bodies;
};

// What an element kind's reader gets: the reader, the frame, and the model read so far (bodies
// complete, elements before this one); `names`, the loader's index of its bodies, when it has one.
struct ReadContext {
  const Reader& rd;
  const Frame& frame;
  const Model& model;
  const ModelNames* names = nullptr;

  int find_point(const std::string& name) const;  // kNoPoint when absent
  int find_body(const std::string& name) const;   // -1 when absent
  // An anchor's position at the initial state (local frame, m), as Model::anchor_position gives it
  // at initial_q(), without building that O(N) vector.
  Eigen::VectorXd initial_position(const Anchor& anchor) const;

  SourceMark mark(const yaml::Node& n) const {
    const yaml::Mark m = n.mark();
    return m.is_null() ? SourceMark{} : SourceMark{m.line + 1, m.column + 1};
  }
  // An end of a joint or force element, key `key` of `node`:
  //   "ground" (with the element's world point `at`), "NAME" (a point mass; a rigid body with the
  //   element's `at`), "NAME.POINT" (a named point of a rigid body), {ground: [x, y, z]},
  //   {body: NAME} or {body: NAME, at: [x, y, z]} (body frame, m).
  // `at_world`: the element's own world point (`at:`), when it has one.
  Anchor end(const yaml::Node& node, const char* key, const std::string& element, const Eigen::VectorXd* at_world) const;
  // Ends `a` and `b` of a joint (with the joint's optional world point `at`): not ground to ground,
  // not a body to itself; the ground end, if any, is returned in `a`.
  void joint_ends(const yaml::Node& node, const std::string& name, Anchor& a, Anchor& b) const;
  // Fails when an end is a point mass: `what` says what the joint would need its orientation for.
  void require_orientation(const yaml::Node& node, const std::string& name, const Anchor& a, const Anchor& b,
                           const std::string& what) const;
  // A world direction (unit after normalizing; not zero), in the local frame.
  Eigen::VectorXd direction(const yaml::Node& n, const std::string& what) const;
};

// A point the histories or a reference measure: "NAME" (a point mass, or a rigid body's centroid)
// or "BODY.POINT".
Combo measured_point(const Reader& rd, const yaml::Node& n, const Model& model, const std::string& what);
// The same for a name not in the file (a default), or read already; messages point at `n`.
Combo measured_point(const Reader& rd, const std::string& name, const yaml::Node& n, const Model& model, const std::string& what);

}  // namespace mbs
