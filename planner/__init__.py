"""Curriculum planner: capability estimate, tier schedules and weights, task mix, export."""
