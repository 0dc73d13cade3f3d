// The simulators of the index-1 formulations ("projection", "unprojected" in projection.cpp;
// "baumgarte" in formulations/baumgarte/): common/erk_simulators.hpp's on ProjectionOde, optionally
// projecting after every step. Each formulation instantiates its own, in its own translation unit
// (internal linkage: the plain equations' code is not shared with, nor shaped by, the Baumgarte
// instantiations).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "common/erk_simulators.hpp"
#include "common/independent_rows.hpp"
#include "common/integrator_table.hpp"
#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "projection/projection.hpp"
#include "projection/projection_ode.hpp"

namespace mbs::projection {
namespace {  // see the file comment

// The index-1 equations with the projection after every step (and at t = 0) when `project`.
template <int NQ, int NR, bool kBaumgarte, bool kSparse = false>
class Index1Ode final : public ProjectionOde<NQ, NR, kBaumgarte, kSparse> {
 public:
  using Base = ProjectionOde<NQ, NR, kBaumgarte, kSparse>;
  using typename Base::State;
  static constexpr bool kFeedback = kBaumgarte;
  Index1Ode(const Model& model, RunStats& stats, std::vector<int> rows, bool project)
      : Base(model, std::move(rows), stats), project_(project) {}
  const char* name() const { return kBaumgarte ? "baumgarte" : project_ ? "projection" : "unprojected"; }
  bool projects() const { return project_; }
  void initial_state(State& y) {
    Base::initial_state(y);
    if (project_) this->project(0.0, y);
  }
  void finish_step(double t, State& y) {
    if (project_) this->project(t, y);
  }

 private:
  bool project_;
};

// A simulator of common/erk_simulators.hpp that reports as a ProjectionRun.
template <class Sim>
class Index1Simulator final : public Sim, public ProjectionRun {
 public:
  using Sim::Sim;
  int kept_rows() const override { return this->ode().kept_rows(); }
  int dropped_rows() const override { return this->ode().dropped_rows(); }
  bool projects() const override { return this->ode().projects(); }
  bool sparse() const override { return this->ode().sparse(); }
  void set_baumgarte(double alpha, double beta) override {
    if constexpr (!std::decay_t<decltype(this->ode())>::kFeedback)
      throw SolverError("projection: a simulator built without Baumgarte's feedback");
    this->ode().set_baumgarte(alpha, beta);
  }
};

// The simulator of case `c`. Fixed sizes for the planar and spatial pendulum and the planar double
// pendulum (no row dropped, no contacts), dynamic sizes otherwise (dense or sparse).
template <bool kBaumgarte>
std::unique_ptr<Simulator> make_index1(const ErkCase& c, const Model& model, double setting, bool project,
                                       LinearAlgebra la) {
  const bool sparse = sparse_path(la, model);
  std::vector<int> rows = independent_rows(NaturalCoordinates(model), model);
  const int nq = model.nq(), nc = model.nc(), nr = static_cast<int>(rows.size());
  if (nr == nc && !sparse && !model.has_role(ElementRole::kContact)) {
    if (nq == 2 && nc == 1)
      return make_erk_simulator<Index1Ode<2, 1, kBaumgarte>, Index1Simulator>(c, model, setting, std::move(rows), project);
    if (nq == 3 && nc == 1)
      return make_erk_simulator<Index1Ode<3, 1, kBaumgarte>, Index1Simulator>(c, model, setting, std::move(rows), project);
    if (nq == 4 && nc == 2)
      return make_erk_simulator<Index1Ode<4, 2, kBaumgarte>, Index1Simulator>(c, model, setting, std::move(rows), project);
  }
  if (sparse)
    return make_erk_simulator<Index1Ode<Eigen::Dynamic, Eigen::Dynamic, kBaumgarte, true>, Index1Simulator>(
        c, model, setting, std::move(rows), project);
  return make_erk_simulator<Index1Ode<Eigen::Dynamic, Eigen::Dynamic, kBaumgarte>, Index1Simulator>(
      c, model, setting, std::move(rows), project);
}

}  // namespace
}  // namespace mbs::projection
