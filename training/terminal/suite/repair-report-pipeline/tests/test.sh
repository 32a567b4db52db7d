#!/bin/bash
# Checks each milestone from what the agent left in /app; check.py's shared final step
# (milestones.py) writes /logs/verifier/reward.json.
python3 /tests/check.py
