"""The store's schema as an ordered list of migrations; each applied one is recorded in
`schema_migrations`. Add a migration to change the schema; never edit an applied one."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    """One schema change."""

    version: int
    """Sequence number; migrations apply in this order, each exactly once."""
    name: str
    """Short description recorded with the version."""
    sql: str
    """DDL to run, inside the migration's transaction."""


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "pinned tables", """
CREATE TABLE tasks (
    task_id VARCHAR PRIMARY KEY,
    source VARCHAR,
    instruction VARCHAR,
    task_type VARCHAR,
    language VARCHAR,
    tier_authored VARCHAR,
    difficulty_authored VARCHAR,
    codebase_files INTEGER,
    n_milestones INTEGER,
    tags VARCHAR[],
    metadata JSON
);
CREATE TABLE runs (
    run_id VARCHAR PRIMARY KEY,
    agent VARCHAR,
    model VARCHAR,
    dataset VARCHAR,
    source_format VARCHAR,
    source_path VARCHAR,
    started_at TIMESTAMPTZ,
    config JSON
);
CREATE TABLE trajectories (
    trajectory_id VARCHAR PRIMARY KEY,
    run_id VARCHAR NOT NULL,
    task_id VARCHAR NOT NULL,
    model VARCHAR,
    attempt INTEGER,
    outcome VARCHAR CHECK (outcome IN ('passed', 'failed', 'error')),
    reward DOUBLE,
    harness_error VARCHAR,
    n_steps INTEGER NOT NULL,
    milestones_passed INTEGER,
    milestones_total INTEGER,
    input_tokens BIGINT,
    output_tokens BIGINT,
    cost_usd DOUBLE,
    started_at TIMESTAMPTZ,
    ended_at TIMESTAMPTZ,
    content_hash VARCHAR NOT NULL,
    source_format VARCHAR,
    source_path VARCHAR,
    ingested_at TIMESTAMPTZ DEFAULT current_timestamp
);
CREATE TABLE steps (
    trajectory_id VARCHAR NOT NULL,
    step_idx INTEGER NOT NULL,
    source VARCHAR CHECK (source IN ('system', 'user', 'agent', 'env')),
    message VARCHAR,
    tool_name VARCHAR,
    action VARCHAR CHECK (action IN ('read', 'edit', 'run', 'complete', 'message')),
    path VARCHAR,
    command VARCHAR,
    output VARCHAR,
    exit_code INTEGER,
    output_truncated BOOLEAN NOT NULL DEFAULT false,
    raw JSON,
    ts TIMESTAMPTZ,
    call_id VARCHAR,
    error_observed BOOLEAN,
    read_full BOOLEAN
);
CREATE TABLE test_results (
    trajectory_id VARCHAR NOT NULL,
    test_id VARCHAR NOT NULL,
    tier VARCHAR CHECK (tier IN ('basic', 'intermediate', 'complex', 'edge')),
    milestone_idx INTEGER,
    passed BOOLEAN NOT NULL
);
CREATE TABLE failure_codes (
    trajectory_id VARCHAR NOT NULL,
    code VARCHAR NOT NULL,
    taxonomy_version VARCHAR NOT NULL,
    coder VARCHAR NOT NULL,
    confidence DOUBLE,
    evidence_steps INTEGER[],
    rationale VARCHAR,
    coded_at TIMESTAMPTZ DEFAULT current_timestamp
);
CREATE TABLE labels (
    trajectory_id VARCHAR NOT NULL,
    code VARCHAR NOT NULL,
    annotator VARCHAR NOT NULL,
    present BOOLEAN NOT NULL,
    taxonomy_version VARCHAR NOT NULL
);
CREATE TABLE plans (
    plan_id VARCHAR PRIMARY KEY,
    created_at TIMESTAMPTZ DEFAULT current_timestamp,
    target_model VARCHAR,
    strategy VARCHAR,
    allocation JSON,
    weights JSON,
    task_mix JSON,
    reasons JSON,
    config_yaml VARCHAR
);
CREATE TABLE ingest_errors (
    path VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,
    seen_at TIMESTAMPTZ DEFAULT current_timestamp,
    record VARCHAR,
    field VARCHAR,
    severity VARCHAR NOT NULL DEFAULT 'error' CHECK (severity IN ('error', 'warning')),
    source_format VARCHAR
);
"""),
)

MIGRATIONS += (
    Migration(2, "coding status and coder reliability", """
CREATE TABLE coding_status (
    trajectory_id VARCHAR NOT NULL,
    code VARCHAR NOT NULL,
    coder VARCHAR NOT NULL,
    taxonomy_version VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('present', 'absent', 'not_applicable')),
    coded_at TIMESTAMPTZ DEFAULT current_timestamp
);
CREATE TABLE code_reliability (
    coder VARCHAR NOT NULL,
    annotator VARCHAR NOT NULL,
    code VARCHAR NOT NULL,
    taxonomy_version VARCHAR NOT NULL,
    n INTEGER NOT NULL,
    kappa DOUBLE,
    f1 DOUBLE,
    threshold DOUBLE NOT NULL,
    reliable BOOLEAN NOT NULL,
    computed_at TIMESTAMPTZ DEFAULT current_timestamp
);
"""),
)

LATEST_VERSION = MIGRATIONS[-1].version

TABLE_DOCS: dict[str, str] = {
    "tasks": "One row per task: instruction, authored tier and difficulty, language, scale.",
    "runs": "One row per run (job): agent, model, dataset, where it was read from.",
    "trajectories": "One row per attempt: outcome (passed/failed/error), harness_error, tokens, cost.",
    "steps": "Normalised steps: action read/edit/run/complete/message, path, command, output.",
    "test_results": "Per-test verdicts with tier and milestone.",
    "failure_codes": "Taxonomy codes assigned by coders, with evidence steps.",
    "labels": "Human labels per trajectory and code.",
    "plans": "Curriculum plans: allocation, weights, task mix, exported config.",
    "ingest_errors": "Quarantined input (severity error) and repaired input (severity warning).",
    "coding_status": "Per trajectory, code and coder: present, absent, or not_applicable (the coder abstained).",
    "code_reliability": "Coder-vs-annotator agreement per code; unreliable codes are ignored by the planner.",
    "schema_migrations": "Applied schema migrations.",
}
