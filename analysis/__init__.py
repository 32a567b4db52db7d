"""Analysis half of curriculab: the store, the importers, the simulator, metrics and reports."""
