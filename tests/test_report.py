#!/usr/bin/python3
"""scripts/report: it plots what bench wrote and names no problem.

    tests/test_report.py SOURCE_DIR [BENCH]

Synthetic results folders (a spatial point whose z moves, a converged reference, a control) check
the figures chosen by the files' contents and the report's words; a fake bench checks the sweep's
exit code and message; with BENCH, a problem file outside problems/ checks --problems-dir end to end.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

SRC = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = sys.argv[2] if len(sys.argv) > 2 else None
REPORT = os.path.join(SRC, "scripts", "report")


def run(*args):
    p = subprocess.run([REPORT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout + p.stderr


def row(formulation, integrator, status, cpu, metric, **kw):
    r = {"formulation": formulation, "integrator": integrator, "run": "tuned", "status": status,
         "setting": 0.01, "setting_kind": "step", "cpu_time_median_s": cpu, "cpu_time_min_s": cpu,
         "rule_metric_value": metric, "max_energy_drift": metric, "max_reference_error": 1e-5,
         "history_file": f"histories/{formulation}__{integrator}.txt", "message": ""}
    r.update(kw)
    return r


def write_results(root, timed=True, reference="converged"):
    """A spatial problem 'toy' whose point P moves along z only (x and y fixed to round-off)."""
    d = os.path.join(root, "toy")
    os.makedirs(os.path.join(d, "histories"))
    cpu = (lambda v: v) if timed else (lambda v: None)
    rows = [row("fam-a", "rk4", "pass", cpu(1e-4), 4e-5),
            row("fam-a", "dopri5", "fail", cpu(2e-4), 2e-4, message="max_energy_drift = 2e-4 is not below 5e-05"),
            row("fam-b", "rk4", "pass", cpu(3e-4), 1e-5),
            row("fam-b", "rho-1", "control", None, None, history_file=None, message="diverged"),
            row("fam-c", "plain", "pass", cpu(5e-4), 3e-5, control=True)]
    summary = {"problem": "toy", "title": "A toy", "problem_file": "elsewhere/toy.yaml",
               "rule": {"metric": "max_energy_drift", "below": 5e-5}, "objective": "cpu_time",
               "end_time_s": 1.0, "created": "2026-01-01T00:00:00Z", "build": "test", "rows": rows}
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f)
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write("# toy\n\n| case | status |\n|---|---|\n")
    lines = [f"{k / 10:.2f} {1e-12 * (k % 2)} 0.5 {0.1 * k * k} {1e-6 * k} 1e-14 2e-13" for k in range(11)]
    for r in rows:
        if r["history_file"]:
            with open(os.path.join(d, r["history_file"]), "w") as f:
                f.write(f"# toy {r['formulation']}/{r['integrator']} step 0.01\n"
                        "# fields: t P.x P.y P.z dE Phi Phi_qv\n# units: s m m m J m m/s\n" + "\n".join(lines) + "\n")
    if reference:
        with open(os.path.join(d, "histories", "reference.txt"), "w") as f:
            f.write(f"# toy reference\n# reference: {reference}  a stored converged run\n# fields: t P.x P.y P.z\n"
                    + "\n".join(" ".join(l.split()[:4]) for l in lines) + "\n")
    return d


class Plotting(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="mbs-report-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_figures_follow_the_files(self):
        d = write_results(self.tmp)
        code, out = run("--results", self.tmp)
        self.assertEqual(code, 0, out)
        figs = sorted(os.listdir(os.path.join(d, "figures")))
        self.assertEqual(figs, ["accuracy.png", "histories.png", "position.png", "work_precision.png"])
        with open(os.path.join(d, "report.md")) as f:
            md = f.read()
        # the coordinate that moves, not the ones a joint holds
        self.assertIn("(P.z;", md)
        self.assertNotIn("P.x", md)
        # the reference is a converged one, so nothing says "exact"
        self.assertIn("against the reference", md)
        self.assertNotIn("exact", md)
        # a control that passed is flagged; the one that did not is not a failure
        self.assertIn("**Flag:** `fam-c/plain`", md)
        with open(os.path.join(self.tmp, "README.md")) as f:
            overview = f.read()
        self.assertIn("| 2 of 3 (2 control(s), one passed: flagged) | `fam-a/rk4`", overview)
        # no sweep, so no sweep entries
        self.assertIn("No sweep is cached", md)

    def test_exact_reference_is_called_exact(self):
        d = write_results(self.tmp, reference="exact")
        code, out = run("--results", self.tmp, "--problem", "toy")
        self.assertEqual(code, 0, out)
        with open(os.path.join(d, "report.md")) as f:
            self.assertIn("against the exact solution", f.read())

    def test_no_timing(self):
        d = write_results(self.tmp, timed=False)
        code, out = run("--results", self.tmp)
        self.assertEqual(code, 0, out)
        self.assertNotIn("Traceback", out)
        with open(os.path.join(d, "report.md")) as f:
            self.assertIn("without timing (`bench --no-timing`)", f.read())
        self.assertFalse(os.path.exists(os.path.join(d, "figures", "work_precision.png")))
        with open(os.path.join(self.tmp, "README.md")) as f:
            self.assertIn("- (not timed)", f.read())

    def test_old_histories_are_said_not_guessed(self):
        d = write_results(self.tmp)
        path = os.path.join(d, "histories", "fam-a__rk4.txt")
        with open(path) as f:
            text = f.read().replace("# fields:", "# columns:")
        with open(path, "w") as f:
            f.write(text)
        code, out = run("--results", self.tmp)
        self.assertEqual(code, 0, out)
        with open(os.path.join(d, "report.md")) as f:
            self.assertIn("1 history file(s) are in an older format", f.read())

    def test_failing_sweep_runs_exit_nonzero_with_one_message(self):
        write_results(self.tmp)
        fake = os.path.join(self.tmp, "fake-bench")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho \"unknown problem 'toy'; known: a, b\" >&2\nexit 2\n")
        os.chmod(fake, 0o755)
        code, out = run("--results", self.tmp, "--sweep", "--bench", fake)
        self.assertEqual(code, 1, out)
        self.assertIn("sweep run(s) of bench failed for toy (bad input: the sweep stopped)", out)
        self.assertIn("unknown problem 'toy'", out)
        self.assertNotIn("metric=None", out)
        self.assertLess(len(out.splitlines()), 10, out)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "toy", "sweep.json")))

    def test_problems_dir_is_passed_to_bench(self):
        write_results(self.tmp)
        log = os.path.join(self.tmp, "args")
        fake = os.path.join(self.tmp, "fake-bench")
        with open(fake, "w") as f:
            f.write(f"#!/bin/sh\necho \"$@\" >> {log}\nexit 2\n")
        os.chmod(fake, 0o755)
        code, _ = run("--results", self.tmp, "--sweep", "--bench", fake, "--problems-dir", self.tmp)
        self.assertEqual(code, 1)
        with open(log) as f:
            self.assertIn(f"--problems-dir {os.path.realpath(self.tmp)}", f.read().replace(self.tmp, os.path.realpath(self.tmp)))

    def test_bad_arguments_exit_2(self):
        write_results(self.tmp)
        self.assertEqual(run("--results", self.tmp, "--problem", "nope")[0], 2)
        self.assertEqual(run("--results", self.tmp, "--problems-dir", os.path.join(self.tmp, "nope"))[0], 2)


class NamesNoProblem(unittest.TestCase):
    def test_no_problem_name_in_the_script(self):
        with open(REPORT) as f:
            text = f.read()
        names = [n[:-5] for n in os.listdir(os.path.join(SRC, "problems")) if n.endswith(".yaml")]
        self.assertGreater(len(names), 5)
        found = [n for n in names if re.search(r"\b" + re.escape(n) + r"\b", text)]
        self.assertEqual(found, [], "scripts/report names problems; it should choose figures by the files")


@unittest.skipUnless(BENCH, "needs the bench executable")
class WithBench(unittest.TestCase):
    """A problem file outside problems/: bench runs it, report --sweep finds it with --problems-dir
    and fails with a clear message without."""

    def test_problems_dir_end_to_end(self):
        tmp = tempfile.mkdtemp(prefix="mbs-report-bench-")
        try:
            pdir = os.path.join(tmp, "problems")
            os.makedirs(pdir)
            with open(os.path.join(SRC, "problems", "planar_pendulum.yaml")) as f:
                text = f.read().replace("name: planar_pendulum", "name: outside_pendulum")
            with open(os.path.join(pdir, "outside_pendulum.yaml"), "w") as f:
                f.write(text)
            res = os.path.join(tmp, "results")
            b = subprocess.run([BENCH, "--problem", "outside_pendulum", "--problems-dir", pdir, "--formulation",
                                "minimal/rk4", "--results", res, "--min-time", "0.01", "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual(b.returncode, 0, b.stderr)
            code, out = run("--results", res, "--sweep", "--bench", BENCH)
            self.assertEqual(code, 1, out)
            self.assertIn("unknown problem 'outside_pendulum'", out)
            code, out = run("--results", res, "--sweep", "--bench", BENCH, "--problems-dir", pdir)
            self.assertEqual(code, 0, out)
            with open(os.path.join(res, "outside_pendulum", "sweep.json")) as f:
                sweep = json.load(f)
            self.assertEqual(len(sweep["cases"]["minimal/rk4"]["points"]), 7)
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
