"""Moved to `curriculab.trajectory.actions`: this name is that module, so code written against it keeps working."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("curriculab.trajectory.actions")
