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
  // Heath's rank detection: a column whose remaining norm is at most tol is dead and gets no pivot.
  // The fixed ordering takes the columns in the rows' order, so that the kept rows are those of the
  // dense path (dense_independent_rows), not the ones a fill-reducing order happens to reach first;
  // it returns no E, and R is squeezed: the k-th live column has its diagonal in row k, a dead
  // column after k live ones has entries in rows below k only.
  cholmod_sparse* R = nullptr;
  SuiteSparse_long* E = nullptr;
  const SuiteSparse_long rank = SuiteSparseQR<double>(SPQR_ORDERING_FIXED, threshold * largest, 0, A, &R, &E, &cc);
  std::vector<int> rows;
  bool ok = rank >= 0 && cc.status == CHOLMOD_OK && R && !E && static_cast<long>(R->ncol) == nc;
  if (ok) {
    const auto* Rp = static_cast<const SuiteSparse_long*>(R->p);
    const auto* Ri = static_cast<const SuiteSparse_long*>(R->i);
    const auto* Rx = static_cast<const double*>(R->x);
    const auto* Rnz = static_cast<const SuiteSparse_long*>(R->nz);  // column counts when not packed
    rows.reserve(rank);
    for (long j = 0; j < nc; ++j) {
      const auto k = static_cast<SuiteSparse_long>(rows.size());
      const SuiteSparse_long end = R->packed ? Rp[j + 1] : Rp[j] + Rnz[j];
      bool pivot = false;
      for (SuiteSparse_long p = Rp[j]; p < end; ++p)
        if (Ri[p] == k && Rx[p] != 0.0) pivot = true;
      if (pivot) rows.push_back(static_cast<int>(j));
    }
    ok = static_cast<SuiteSparse_long>(rows.size()) == rank;
  }
  if (R) cholmod_l_free_sparse(&R, &cc);
  if (E) cholmod_l_free(nc, sizeof(SuiteSparse_long), E, &cc);
  cholmod_l_free_sparse(&A, &cc);
  cholmod_l_finish(&cc);
  if (!ok) throw SolverError("set-up (independent constraint rows): SuiteSparseQR failed");
  return rows;
}

}  // namespace mbs
