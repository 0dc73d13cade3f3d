// A spatial-vector recursive multibody engine for kinematic trees (Featherstone, "Rigid Body
// Dynamics Algorithms", 2008, ch. 2-7), in the Pinocchio style: an immutable SpatialTree built once
// from the model's joint graph, a TreeWorkspace sized from it, and algorithms that allocate nothing.
//
// Frames. Every tree body has a frame whose origin is its inbound joint and whose axes coincide
// with the model's local frame in the initial configuration (so joint coordinates are zero there:
// angle 0, identity quaternion, slide 0). Motion vectors are [omega; v] (angular first), force
// vectors [n; f]; a parent-to-child transform is kept as (E, r): E rotates parent coordinates into
// child coordinates, r is the child origin in parent coordinates (X = [E 0; -E rx E]).
//
// Joints (the model's elements as tree joints; planar models run embedded in 3-D, z the normal):
//   revolute    1 DOF about a fixed axis (planar: every pin, rod and spherical joint is one about z)
//   prismatic   1 DOF along a fixed axis
//   spherical   3 DOF (a spatial rod's: 2, below): configuration a unit quaternion (4 numbers), velocity the relative angular
//               velocity in child coordinates (3 numbers); q' = 1/2 q (x) (0, omega)
//   translation dim DOF along the world axes: a free root (no joint to ground), below
//   fixed       0 DOF (a weld)
// A rod between point masses in space is a spherical joint of the child point at the parent end
// without its spin: configuration the unit quaternion, velocity the 2 components of the relative
// angular velocity normal to the rod (S = [e1 e2; 0 0] in child coordinates, e1, e2 normal to the
// rod). The point has no inertia about the rod, so the spin moves nothing and is no coordinate: the
// joint-space mass matrix is the physical one, positive definite, 2 DOF per spatial rod. (The child
// frame's spin, driven by its parent's rotation, only re-labels its children's joint coordinates.)
//
// Free roots. A part of the joint graph not joined to ground floats: it hangs from a free body. A
// free point mass is a translation root; a free rigid body is a 6-DOF free joint (planar 3), built
// as a massless translation root at its centroid (world axes) carrying the body on a spherical
// joint there (planar: a revolute about the normal): configuration centroid displacement (3) + unit
// quaternion (4), velocity the centroid's in world axes + the angular velocity in body axes. With
// the linear part in world axes at the centroid, the centroid's equation r'' = g + F/m is linear
// (Runge-Kutta methods follow a free body's parabola exactly), and joint blocks stay <= 3 DOF.
//
// Force elements act on the tree as external forces on its bodies: their generalized force in the
// model's natural coordinates mapped by virtual work (body_forces, TreeForces), in both ABA paths
// and in CRBA's Newton-Euler bias.
//
// Planar trees. When every joint's motion subspace lies in the planar motions about one normal n
// (rotation about n, translation normal to n: parallel revolute axes, prismatic axes in the plane,
// pins and rods of a planar model), every joint transform maps planar motions [omega_n; v_e1; v_e2]
// to planar motions, and the joint-space dynamics depend only on each inertia projected onto them,
// P^T I P (3 x 3). build_spatial_tree detects this from the geometry and aba() then runs on 3-vectors
// and 3 x 3 articulated inertias (aba_planar), in frames at the joints with the plane's axes (so the
// recursions carry translations only); when every joint is a pin, on scalars (aba_planar_pins,
// PinBody); everything else, and CRBA, keeps the spatial path.
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "recursive/spatial_algebra.hpp"

namespace mbs::recursive {

enum class JointType { kRevolute, kPrismatic, kSpherical, kTranslation, kFixed };
const char* to_string(JointType type);

struct TreeBody {
  std::string name;          // the model's body (point mass or rigid body) this tree body is
  std::string joint;         // the model's element that is its inbound joint ("" for a free root's joints)
  JointType type = JointType::kFixed;
  int parent = -1;           // tree body index, or -1 (ground)
  int qi = 0, nq = 0;        // configuration coordinates
  int vi = 0, nv = 0;        // velocity coordinates
  Vec3 axis = Vec3::UnitZ(); // revolute / prismatic
  Vec3 p = Vec3::Zero();     // joint origin in parent coordinates (m)
  MatS S;                    // motion subspace, child coordinates (constant for every type here)
  Mat6 I = Mat6::Zero();     // spatial inertia about the frame origin, body coordinates
  // Model mapping.
  int point = -1, body = -1;  // model point index, or rigid-body index (neither: a free body's translation)
  Vec3 com = Vec3::Zero();     // centroid / point in body coordinates (m)
  double mass = 0.0;           // kg
  bool rod = false;            // a spatial rod's point: a spherical joint without spin (see above)
  Mat3 axes = Mat3::Identity();  // rigid body: its principal axes (columns) in body coordinates
};

// A tree body's planar description (SpatialTree::planar): coordinates [n; e1; e2] of the plane.
struct PlanarBody {
  Mat3 I = Mat3::Zero();  // P^T I P: the spatial inertia on planar motions
  MatS3 S;                // motion subspace in planar coordinates
  Vec2 p = Vec2::Zero();  // joint origin in parent coordinates, in the plane (its n part moves nothing)
  // TreeBody's, copied so that the planar recursions read one compact record per body.
  JointType type = JointType::kFixed;
  int parent = -1, qi = 0, vi = 0, nv = 0;  // nq = nv: no quaternion in a planar tree
};

// A planar tree whose joints are all pins (SpatialTree::pins): each body's constants as scalars.
// Its planar inertia [a c^T; c m 1] in the plane's axes at the initial orientation: the translation
// block of a spatial inertia is m 1 in any axes, so a rotation turns only c (a 2-vector).
struct PinBody {
  int parent = -1, q = 0;      // parent body, joint coordinate (nq = nv: one index)
  double sigma = 1.0;          // the axis is sigma n
  double px = 0.0, py = 0.0;   // joint origin in parent coordinates, in the plane
  double a = 0.0, cx = 0.0, cy = 0.0, m = 0.0;
};

struct SpatialTree {
  int dim = 3;
  Vec3 gravity = Vec3::Zero();
  int nq = 0, nv = 0;
  std::vector<TreeBody> bodies;  // parents before children
  std::vector<int> dof_parent;   // lambda over velocity DOFs (-1: none): Featherstone's expanded parent array
  bool dof_chain = false;        // dof_parent[k] = k - 1 for every k: H is dense, its factor too
  Eigen::VectorXd q0, v0;        // the model's initial state in tree coordinates
  bool has_quaternions = false;
  int depth = 0;                 // longest chain of bodies
  // Planar fast path (see above): set when every joint moves in the plane normal to `normal`.
  bool planar = false;
  Vec3 normal = Vec3::UnitZ(), e1 = Vec3::UnitX(), e2 = Vec3::UnitY();
  std::vector<PlanarBody> planar_bodies;  // parallel to bodies when planar
  // Every joint of the planar tree a pin (1 DOF about +-n): aba() takes aba_planar_pins.
  bool pins = false;
  std::vector<PinBody> pin_bodies;  // parallel to bodies when pins
  std::vector<double> pin_sigma;    // their sigma, contiguous: CRBA's rows of H are vector loops over it
  // The joints left out of the tree because they close a loop (loop_closure.hpp): those the problem
  // file names (Model::cut_joints), then in the order the growth met them a joint joining two bodies
  // already placed. The model's own: it must outlive the tree.
  std::vector<const Element*> cuts;
};

// Builds a spanning tree of the model's joint graph, each joint as it describes itself
// (Element::tree_joint, core/element.hpp), or returns why this engine cannot describe the model.
// The joints the problem file names as cuts (Model::cut_joints) are left out first; the tree then
// grows breadth-first from the ground, a node's joints in the order the problem file lists them
// (then from a free root in each part the ground does not reach); a joint that meets a body already
// placed closes a loop and becomes one of tree.cuts (common/joint_graph.hpp: simbody's rule too).
std::string build_spatial_tree(const Model& model, SpatialTree& tree);

// The joints a spatial tree describes (Formulation::accepts of the joint-coordinate formulations on
// it): in a plane a spherical joint or a rod is a pin; in space they carry a quaternion.
inline std::vector<TreeJointType> tree_joint_types() {
  return {TreeJointType::kRevolute, TreeJointType::kPrismatic, TreeJointType::kSpherical, TreeJointType::kFixed,
          TreeJointType::kRod};
}
// The constraint rows of the tree's cut joints (before redundant ones are dropped): the size of
// the loops' dense objects, for dense_limit_reason before anything is allocated.
inline double cut_row_count(const Model& model, const SpatialTree& tree) {
  double m = 0.0;
  for (const Element* e : tree.cuts) m += e->row_count(model.dim);
  return m;
}

// Scratch for the algorithms, sized once from the tree.
// Row-major: LTDL runs along rows of the lower triangle (a DOF's ancestors), contiguous on a chain.
using MassMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct TreeWorkspace {
  TreeWorkspace(const SpatialTree& tree, bool with_mass_matrix);
  std::vector<Mat3> E;                // parent -> child rotation
  std::vector<Vec3> r;                // child origin in parent coordinates
  std::vector<Vec6> v, c, a, pA;      // velocity, velocity-product acceleration, acceleration, bias force
  std::vector<Mat6> IA;               // articulated (ABA) or composite (CRBA) inertia
  std::vector<MatS> U;
  std::vector<MatJ> Dinv;
  std::vector<VecJ> u;
  std::vector<Mat3> Rw;               // world (model local) orientation of each body
  std::vector<Vec3> ow;               // world position of each body's origin
  MassMatrix H;                       // CRBA: joint-space mass matrix, then its L^T D L factors (lower triangle)
  Eigen::VectorXd b;                  // CRBA: right-hand side
  // Planar path, one record per body (kept together: the recursions touch all of a body at once),
  // in frames at the joints with the plane's axes.
  struct Planar {
    Vec3 v, c, a, pA;                 // planar velocity, velocity-product acceleration, acceleration, bias force
    Mat3 IA;                          // articulated inertia
    MatS3 U;                          // IA S
    double Dinv = 0.0, u = 0.0;       // 1-DOF joints (more DOFs: TreeWorkspace::Dinv, u)
    MatS3 S;                          // prismatic, translation: motion subspace in the plane's axes (a pin's is S)
    double phi = 0.0, co = 1.0, si = 0.0;  // the body's rotation about n from its initial orientation
    Vec2 t;                           // (-r_2, r_1), r the joint's origin from the parent's (plane axes)
  };
  std::vector<Planar> planar;         // sized when the tree is planar
  // Pin path: one record per body, scalars only (the articulated inertia's six distinct entries).
  struct Pin {
    double phi = 0.0, co = 1.0, si = 0.0;     // rotation about n from the initial orientation
    double tx = 0.0, ty = 0.0;                // (-r_2, r_1), r the joint's origin from the parent's
    double v0 = 0.0, v1 = 0.0, v2 = 0.0;      // planar velocity
    double c1 = 0.0, c2 = 0.0;                // velocity-product acceleration (its rotation part is 0)
    double a = 0.0, cx = 0.0, cy = 0.0, b00 = 0.0, b01 = 0.0, b11 = 0.0;  // articulated inertia
    double p0 = 0.0, p1 = 0.0, p2 = 0.0;      // bias force
    double Dinv = 0.0;
    double a0 = 0.0, a1 = 0.0, a2 = 0.0;      // acceleration
    double X = 0.0, Y = 0.0;                  // CRBA: t summed from the root, so t's sum over a path is a difference
  };
  std::vector<Pin> pins;              // sized when the tree's joints are all pins
  // CRBA's pin path: sigma X and sigma Y of each body in arrays of their own, so that a row of H is
  // one vector loop (sized with pins; sigma itself is the tree's pin_sigma).
  std::vector<double> pin_sx, pin_sy;
};

// External forces on the tree bodies at one state (force elements: body_forces), in the frames each
// path works in; sized once from the tree (TreeForces below fills it without allocating).
struct BodyForces {
  std::vector<Vec6> spatial;  // [n; f] in body coordinates, n about the body frame's origin (its joint)
  std::vector<Vec3> planar;   // planar path (tree.planar): [n . normal; f . e1; f . e2], n about the joint
};


}  // namespace mbs::recursive
