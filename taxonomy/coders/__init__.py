"""Coders assign taxonomy codes to trajectories: rules (deterministic SQL), a learned
classifier, and an LLM judge. Each is validated against human labels before anyone plans from it."""
