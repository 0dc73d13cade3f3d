// Formulation "alm-index3": natural (fully Cartesian) coordinates, index-3 augmented Lagrangian with
// mass-orthogonal projections (ALI3-P), integrated by the trapezoidal rule: the method and its
// plain step in trapezoidal.hpp, impacts with point-plane contacts in impacts.hpp.
#include <fmt/format.h>

#include <cmath>

#include "alm_index3/alm_index3.hpp"
#include "alm_index3/impacts.hpp"
#include "alm_index3/linearizer.hpp"
#include "alm_index3/trapezoidal.hpp"
#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs::alm_index3 {

// Fixed sizes for the smallest planar systems (pendulum, double pendulum), dynamic otherwise;
// sparse matrices for large models (common/sparse_natural.hpp).
std::unique_ptr<Simulator> make_simulator(const Model& model, double h, LinearAlgebra la) {
  if (!(h > 0.0) || !std::isfinite(h))
    throw SolverError(fmt::format("alm-index3: step size must be positive and finite, got {}", h));
  constexpr int X = Eigen::Dynamic;
  if (sparse_path(la, model)) return std::make_unique<TrapezoidalSimulator<X, X, SparseTangentSolver>>(model, h);
  if (model.nq() == 2 && model.nc() == 1) return std::make_unique<TrapezoidalSimulator<2, 1, DenseTangent<2>>>(model, h);
  if (model.nq() == 4 && model.nc() == 2) return std::make_unique<TrapezoidalSimulator<4, 2, DenseTangent<4>>>(model, h);
  if (NaturalCoordinates(model).has_force_elements())  // an unsymmetric tangent
    return std::make_unique<TrapezoidalSimulator<X, X, DenseUnsymmetricTangent>>(model, h);
  return std::make_unique<TrapezoidalSimulator<X, X, DenseTangent<X>>>(model, h);
}

namespace {

class AlmIndex3 final : public Formulation {
 public:
  std::string name() const override { return "alm-index3"; }
  std::string description() const override {
    return "natural coordinates; index-3 augmented Lagrangian with mass-orthogonal projections (ALI3-P)";
  }
  std::vector<IntegratorInfo> integrators() const override {
    return {{"trapezoidal", SettingKind::kFixedStep, 0.05, 1e-5,
             "trapezoidal rule, Newton-Raphson, mass-orthogonal projections", ""}};
  }
  Accepts accepts() const override { return {{ElementRole::kJoint, ElementRole::kForce, ElementRole::kContact}, {}}; }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    if (integrator != "trapezoidal")
      throw SolverError(fmt::format("alm-index3: unknown integrator '{}' (known: trapezoidal)", integrator));
    if (const std::string why = unsupported_reason(model); !why.empty()) throw SolverError("alm-index3: " + why);
    return make_simulator(model, setting);
  }
  std::string linearization_unsupported_reason(const Model& model) const override {
    return linearizer_unsupported_reason(model);
  }
  std::unique_ptr<Linearizer> create_linearizer(const Model& model) const override {
    return make_linearizer(model, kAlphaPerMass);
  }
};

}  // namespace

MBS_REGISTER_FORMULATION(AlmIndex3);

}  // namespace mbs::alm_index3
