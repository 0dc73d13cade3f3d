// Linearization of a formulation's equations of motion about a static equilibrium (the model's
// initial configuration, at rest), and the eigenvalues of the linearized system.
//
// Each formulation linearizes in its own coordinates, so the same mechanism gives different
// spectra: joint angles may have a singular mass matrix (infinite eigenvalues), natural coordinates
// carry constraint multipliers (infinite eigenvalues of the index-3 pencil) or a penalty (large
// spurious frequencies). A Linearizer reports all eigenvalues and which of them it judges true,
// with the rule it used; the harness scores only the true ones against the exact spectrum.
//
// Model/workspace split as for simulators: the constructor sizes and allocates everything;
// linearize() evaluates the terms at the equilibrium, computes the eigenvalues and discriminates
// them, writing into the Linearization it returns by reference. The harness times 10,000 calls of
// linearize() (Google Benchmark), so it must not depend on state left by a previous call.
#pragma once

#include <Eigen/Dense>
#include <complex>
#include <string>
#include <vector>

namespace mbs {

struct Eigenvalue {
  std::complex<double> s;     // 1/s; meaningful only when finite
  bool finite = true;         // false for an infinite eigenvalue (beta = 0 of the pencil)
  bool is_true = false;       // judged an eigenvalue of the constrained mechanical system
  std::string why;            // short reason for the judgement, e.g. "infinite", "violates Phi_q"
};

struct Linearization {
  std::string coordinates;  // the linearized coordinates, e.g. "theta, phi (joint angles)"
  std::string rule;         // how true and spurious eigenvalues were told apart (one sentence)
  // The linearization terms, named as in the formulation's equations (e.g. "M", "K", "Phi_q"),
  // written to the solution file. Sized at setup.
  std::vector<std::pair<std::string, Eigen::MatrixXd>> terms;
  std::vector<Eigenvalue> eigenvalues;  // all of them, sorted by |s| (infinite last)
};

class Linearizer {
 public:
  virtual ~Linearizer() = default;
  // Linearizes about the model's initial configuration with zero velocity. Throws SolverError when
  // the linearization cannot be computed (e.g. the configuration is not an equilibrium).
  virtual const Linearization& linearize() = 0;
};

}  // namespace mbs
