"""Runs the client's unittest suite and ends with one line `N passed, N failed` (for npm test)."""
import sys
import unittest
from pathlib import Path

here = Path(__file__).resolve().parent
suite = unittest.defaultTestLoader.discover(str(here), top_level_dir=str(here))
result = unittest.TextTestRunner(verbosity=2).run(suite)
failed = len(result.failures) + len(result.errors)
print(f"{result.testsRun - failed - len(result.skipped)} passed, {failed} failed")
sys.exit(0 if failed == 0 and result.testsRun > 0 else 1)
