#include "core/formulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "core/cancellation.hpp"

namespace mbs {

namespace {
std::atomic<bool> g_cancel{false};
}  // namespace

long fixed_step_count(double t_end, double h_nominal) {
  const double n = std::ceil(t_end / h_nominal - 1e-9);
  if (!(n < 1e15)) throw SolverError(fmt::format("step {:g} s is too small for an end time of {:g} s", h_nominal, t_end));
  return std::max<long>(1, static_cast<long>(n));
}

void request_cancellation(bool on) { g_cancel.store(on, std::memory_order_relaxed); }
bool cancellation_requested() { return g_cancel.load(std::memory_order_relaxed); }
void throw_if_cancelled(const char* where) {
  if (g_cancel.load(std::memory_order_relaxed)) throw Cancelled(fmt::format("cancelled in {}: the case exceeded its time budget", where));
}

const RunStats& Simulator::run(double t_end, StepObserver* observer) {
  if (!(t_end > 0.0) || !std::isfinite(t_end)) throw SolverError("end time must be positive and finite");
  stats_ = RunStats{};
  do_initialize(t_end);
  report(observer);
  // Steps end exactly on t_end; the tolerance only absorbs round-off in accumulated time.
  const double t_stop = t_end * (1.0 - 1e-14);
  while (do_time() < t_stop) {
    const double t_before = do_time();
    do_step(t_end);
    ++stats_.steps;
    const double t = do_time();
    if (!std::isfinite(t) || !(t > t_before))
      throw SolverError(fmt::format("time did not advance at t = {:.9g} s (step size underflow)", t_before));
    report(observer);
    if (g_cancel.load(std::memory_order_relaxed))
      throw Cancelled(fmt::format("cancelled at t = {:.9g} s: the case exceeded its time budget", t));
  }
  do_finish_run();
  return stats_;
}

void Simulator::report(StepObserver* observer) {
  if (observer == nullptr) return;
  do_model_state();
  observer->on_step(do_time(), q_model_, v_model_);
}

void FixedStepSimulator::do_initialize(double t_end) {
  t_ = 0.0;
  i_ = 0;
  // The 1e-9 in fixed_step_count keeps a t_end / h_nominal that is whole up to round-off from
  // gaining a step. h is chosen before the initial state: no do_initialize_state() reads it (the
  // start-up solves are independent of h), so the order leaves results unchanged.
  n_ = fixed_step_count(t_end, h_nominal_);
  h_ = t_end / n_;
  do_step_size_chosen(h_);
  do_initialize_state();
}

void FixedStepSimulator::do_step(double t_end) {
  do_fixed_step(h_);
  ++i_;
  t_ = i_ == n_ ? t_end : i_ * h_;
}

namespace {
// "rod and spherical", "revolute, prismatic and fixed".
std::string tree_joint_list(const std::vector<TreeJointType>& types) {
  std::string out;
  for (size_t i = 0; i < types.size(); ++i)
    out += (i == 0 ? "" : i + 1 == types.size() ? " and " : ", ") + std::string(to_string(types[i]));
  return out;
}
}  // namespace

bool Accepts::accepts(const Element& e) const {
  if (std::find(roles.begin(), roles.end(), e.role()) != roles.end()) return true;
  return e.role() == ElementRole::kJoint &&
         std::find(tree_joints.begin(), tree_joints.end(), e.tree_joint().type) != tree_joints.end();
}

std::string Formulation::unsupported_reason(const Model& model) const {
  if (model.nq() == 0) return "the model has no bodies";
  const Accepts a = accepts();
  for (const auto& e : model.elements)
    if (!a.accepts(*e))
      return fmt::format("{} '{}': {} does not support {}s{}", e->kind(), e->name, name(), to_string(e->role()),
                         e->role() == ElementRole::kJoint && !a.tree_joints.empty()
                             ? fmt::format(" of this kind (it takes {} joints)", tree_joint_list(a.tree_joints))
                             : "");
  return structure_unsupported_reason(model);
}

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

bool Registry::add(std::unique_ptr<Formulation> formulation) {
  formulations_.push_back(std::move(formulation));
  std::sort(formulations_.begin(), formulations_.end(),
            [](const auto& a, const auto& b) { return a->name() < b->name(); });
  return true;
}

const Formulation* Registry::find(const std::string& name) const {
  for (const auto& f : formulations_)
    if (f->name() == name) return f.get();
  return nullptr;
}

std::vector<const Formulation*> Registry::all() const {
  std::vector<const Formulation*> out;
  for (const auto& f : formulations_) out.push_back(f.get());
  return out;
}

}  // namespace mbs
