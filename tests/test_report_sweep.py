#!/usr/bin/python3
"""scripts/report's sweep flags a tighter setting that fails beneath a passing tuned setting.

    python3 tests/test_report_sweep.py SOURCE_DIR

The sweep runs a stand-in for build/bench (a script writing the summary a `--tol T` run would) that
fails at tol = 0.5 x the tuned setting only; no figure is drawn, so matplotlib, numpy and yaml are
stubbed where they are not installed.
"""
import importlib.machinery
import importlib.util
import json
import os
import sys
import tempfile
import types
import unittest

SOURCE = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

class Anything(types.ModuleType):
    """Whatever the report's module level asks of a missing plotting library."""

    def __getattr__(self, attr):
        return Anything(attr)

    def __call__(self, *args, **kwargs):
        return Anything("result")

    def __getitem__(self, key):
        return Anything("item")

    def __iter__(self):
        return iter(())


for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.lines", "matplotlib.patches", "numpy", "yaml"):
    try:
        importlib.import_module(name)
    except ImportError:
        sys.modules[name] = Anything(name)

loader = importlib.machinery.SourceFileLoader("report", os.path.join(SOURCE, "scripts", "report"))
report = importlib.util.module_from_spec(importlib.util.spec_from_loader("report", loader))
loader.exec_module(report)

FAKE_BENCH = r'''#!/usr/bin/python3
import json, os, sys
a = sys.argv
tol = float(a[a.index("--tol") + 1])
out = os.path.join(a[a.index("--results") + 1], a[a.index("--problem") + 1])
os.makedirs(out, exist_ok=True)
drift = 2e-4 if abs(tol / 5e-7 - 1) < 1e-9 else 1e-5  # a failing window at half the tuned setting
row = {"formulation": "f", "integrator": "dopri5", "run": "given", "setting": tol, "setting_kind": "tol",
       "status": "pass" if drift < 1e-4 else "fail", "max_energy_drift": drift, "cpu_time_median_s": 1e-3}
json.dump({"rows": [row]}, open(os.path.join(out, "summary.json"), "w"))
sys.exit(0 if drift < 1e-4 else 1)
'''


class SweepFlag(unittest.TestCase):
    def test_a_failure_beneath_a_passing_tuned_setting_is_flagged(self):
        summary = {"rule": {"metric": "max_energy_drift"}, "build": "test",
                   "rows": [{"formulation": "f", "integrator": "dopri5", "run": "tuned", "setting": 1e-6,
                             "setting_kind": "tol", "status": "pass", "cpu_time_median_s": 1e-3}]}
        with tempfile.TemporaryDirectory() as tmp:
            bench = os.path.join(tmp, "bench")
            with open(bench, "w") as f:
                f.write(FAKE_BENCH)
            os.chmod(bench, 0o755)
            logged = []
            sweep = report.run_sweep("p", summary, bench, None, logged.append)
        case = sweep["cases"]["f/dopri5"]
        self.assertEqual(len(case["points"]), len(report.SWEEP_FACTORS))
        bad = case["fails_beneath_tuned"]
        self.assertEqual([p["setting"] for p in bad], [5e-7])
        self.assertEqual(bad[0]["status"], "fail")
        self.assertAlmostEqual(bad[0]["metric"], 2e-4)
        self.assertTrue(any("FAILS BENEATH ITS TUNED SETTING" in line for line in logged), logged)
        text = report.sweep_paragraph(sweep, None, summary)
        self.assertIn("**Fails beneath its tuned setting:** `f/dopri5`, tuned to 1e-06 (pass), fail at the tighter 5e-07", text)

        # A failing tuned row is not flagged: nothing was claimed beneath it.
        case["tuned_status"] = "fail"
        self.assertEqual(report.fails_beneath_tuned(case), [])
        # A sweep cached before the field existed is judged from the summary's row.
        del case["tuned_status"], case["fails_beneath_tuned"]
        self.assertIn("Fails beneath its tuned setting", report.sweep_paragraph(sweep, None, summary))


if __name__ == "__main__":
    unittest.main()
