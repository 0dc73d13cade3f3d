// Rank detection by SuiteSparseQR for common/independent_rows.hpp (kept out of the header: the
// cholmod and SPQR headers stay in this one file).
#include <SuiteSparseQR.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/independent_rows.hpp"

namespace mbs {

std::vector<int> sparse_independent_rows(const SparseJacobian& J, double threshold) {
  const auto& m = J.matrix();  // row-major nc x nq: its rows are the columns of A = J^T (nq x nc)
  const long nc = m.rows(), nq = m.cols(), nnz = m.nonZeros();
  cholmod_common cc;
  cholmod_l_start(&cc);
  cholmod_sparse* A = cholmod_l_allocate_sparse(nq, nc, nnz, 1, 1, 0, CHOLMOD_REAL, &cc);
  if (!A) {
    cholmod_l_finish(&cc);
    throw SolverError("set-up (independent constraint rows): SuiteSparseQR could not allocate Phi_q^T");
  }
  auto* Ap = static_cast<SuiteSparse_long*>(A->p);
  auto* Ai = static_cast<SuiteSparse_long*>(A->i);
  auto* Ax = static_cast<double*>(A->x);
  double largest = 0.0;
  for (long k = 0; k <= nc; ++k) Ap[k] = m.outerIndexPtr()[k];
  for (long k = 0; k < nc; ++k) {
    double sq = 0.0;
    for (long p = Ap[k]; p < Ap[k + 1]; ++p) {
      Ai[p] = m.innerIndexPtr()[p];
      Ax[p] = m.valuePtr()[p];
      sq += Ax[p] * Ax[p];
    }
    largest = std::max(largest, std::sqrt(sq));
  }
  // Heath's rank detection: a column whose remaining norm is at most tol is dead, and moved after the
  // live ones in E; the first `rank` columns of A E are independent.
  cholmod_sparse* R = nullptr;
  SuiteSparse_long* E = nullptr;
  const SuiteSparse_long rank =
      SuiteSparseQR<double>(SPQR_ORDERING_DEFAULT, threshold * largest, 0, A, &R, &E, &cc);
  std::vector<int> rows;
  if (rank >= 0 && cc.status == CHOLMOD_OK) {
    rows.reserve(rank);
    for (SuiteSparse_long k = 0; k < rank; ++k) rows.push_back(static_cast<int>(E ? E[k] : k));
    std::sort(rows.begin(), rows.end());
  }
  const bool ok = rank >= 0 && cc.status == CHOLMOD_OK;
  if (R) cholmod_l_free_sparse(&R, &cc);
  if (E) cholmod_l_free(nc, sizeof(SuiteSparse_long), E, &cc);
  cholmod_l_free_sparse(&A, &cc);
  cholmod_l_finish(&cc);
  if (!ok) throw SolverError("set-up (independent constraint rows): SuiteSparseQR failed");
  return rows;
}

}  // namespace mbs
