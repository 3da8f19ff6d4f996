"""``python -m ragmeter`` runs the same command as the ``ragmeter`` console script."""

from __future__ import annotations

import subprocess
import sys


def test_python_dash_m_ragmeter_is_the_cli():
    out = subprocess.run([sys.executable, "-m", "ragmeter", "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Usage: ragmeter ")
    assert "judge-check" in out.stdout and "eval" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "ragmeter", "no-such-command"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "no-such-command" in bad.stderr
