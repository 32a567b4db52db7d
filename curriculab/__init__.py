"""curriculab: turn coding-agent trajectories into the next round of training data.

The small public API lives here; the packages `taxonomy`, `analysis`, `planner` and `training`
hold the rest.
"""

from importlib.metadata import PackageNotFoundError, version

from analysis.ingest import IngestReport, Issue, ingest
from analysis.simulate import simulate_corpus
from analysis.store import Store, StoreError
from taxonomy.model import FORMAT_VERSION, FailureCode, Run, Step, Task, TestResult, Trajectory

try:
    __version__ = version("curriculab")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+source"

__all__ = ["FORMAT_VERSION", "FailureCode", "IngestReport", "Issue", "Run", "Step", "Store", "StoreError", "Task",
           "TestResult", "Trajectory", "__version__", "ingest", "simulate_corpus"]
