"""Training: tiered problems, sandboxed tests, tier-weighted rewards, GRPO. Heavy imports are lazy."""
