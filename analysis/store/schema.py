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
    Migration(
        1,
        "pinned tables",
        """
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
""",
    ),
)

MIGRATIONS += (
    Migration(
        2,
        "coding status and coder reliability",
        """
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
""",
    ),
)

# Wilson bounds as SQL macros, so views and analysts' own queries give the same intervals.
_WILSON = """
CREATE MACRO wilson_low(k, n) AS CASE WHEN n = 0 THEN 0.0 ELSE greatest(0.0,
    ((k / n) + 1.959963984540054 ^ 2 / (2 * n) - 1.959963984540054 * sqrt((k / n) * (1 - k / n) / n
     + 1.959963984540054 ^ 2 / (4 * n * n))) / (1 + 1.959963984540054 ^ 2 / n)) END;
CREATE MACRO wilson_high(k, n) AS CASE WHEN n = 0 THEN 1.0 ELSE least(1.0,
    ((k / n) + 1.959963984540054 ^ 2 / (2 * n) + 1.959963984540054 * sqrt((k / n) * (1 - k / n) / n
     + 1.959963984540054 ^ 2 / (4 * n * n))) / (1 + 1.959963984540054 ^ 2 / n)) END;
"""

MIGRATIONS += (
    Migration(
        3,
        "measured difficulty tables and analyst views",
        _WILSON
        + """
CREATE TABLE irt_tasks (
    task_id VARCHAR PRIMARY KEY,
    difficulty DOUBLE NOT NULL,
    difficulty_se DOUBLE NOT NULL,
    discrimination DOUBLE NOT NULL,
    discrimination_se DOUBLE NOT NULL,
    n_attempts INTEGER NOT NULL,
    pass_rate DOUBLE NOT NULL,
    measured_tier VARCHAR,
    kind VARCHAR NOT NULL,
    fitted_at TIMESTAMPTZ DEFAULT current_timestamp
);
CREATE TABLE irt_models (
    model VARCHAR PRIMARY KEY,
    ability DOUBLE NOT NULL,
    ability_se DOUBLE NOT NULL,
    n_attempts INTEGER NOT NULL,
    pass_rate DOUBLE NOT NULL,
    kind VARCHAR NOT NULL,
    fitted_at TIMESTAMPTZ DEFAULT current_timestamp
);

-- Agent attempts only: harness errors are counted apart and never as failures.
CREATE VIEW v_attempts AS
SELECT t.trajectory_id, t.model, t.task_id, t.attempt, t.outcome, t.harness_error,
       coalesce(k.tier_authored, '(none)') AS tier, coalesce(k.task_type, '(none)') AS task_type,
       coalesce(k.language, '(none)') AS language
FROM trajectories t LEFT JOIN tasks k USING (task_id)
WHERE t.outcome IS NOT NULL;

CREATE VIEW v_pass_rates AS
WITH slices AS (
    SELECT model, 'overall' AS dimension, 'all' AS value, outcome FROM v_attempts
    UNION ALL SELECT model, 'task', task_id, outcome FROM v_attempts
    UNION ALL SELECT model, 'tier', tier, outcome FROM v_attempts
    UNION ALL SELECT model, 'task_type', task_type, outcome FROM v_attempts
    UNION ALL SELECT model, 'language', language, outcome FROM v_attempts
)
SELECT model, dimension, value,
       count(*) FILTER (outcome <> 'error') AS attempts,
       count(*) FILTER (outcome = 'passed') AS passes,
       count(*) FILTER (outcome = 'passed') / nullif(count(*) FILTER (outcome <> 'error'), 0) AS pass_rate,
       wilson_low(count(*) FILTER (outcome = 'passed'), count(*) FILTER (outcome <> 'error')) AS ci_low,
       wilson_high(count(*) FILTER (outcome = 'passed'), count(*) FILTER (outcome <> 'error')) AS ci_high,
       count(*) FILTER (outcome = 'error') AS harness_errors
FROM slices GROUP BY ALL;

CREATE VIEW v_failure_distribution AS
WITH failed AS (SELECT * FROM v_attempts WHERE outcome = 'failed'),
slices AS (
    SELECT model, 'overall' AS dimension, 'all' AS value, trajectory_id FROM failed
    UNION ALL SELECT model, 'tier', tier, trajectory_id FROM failed
    UNION ALL SELECT model, 'task_type', task_type, trajectory_id FROM failed
),
totals AS (SELECT model, dimension, value, count(*) AS failures FROM slices GROUP BY ALL)
SELECT f.coder, s.model, f.code, s.dimension, s.value, count(*) AS n, any_value(tot.failures) AS failures,
       count(*) / any_value(tot.failures) AS share,
       wilson_low(count(*), any_value(tot.failures)) AS ci_low, wilson_high(count(*), any_value(tot.failures)) AS ci_high
FROM slices s JOIN failure_codes f USING (trajectory_id) JOIN totals tot USING (model, dimension, value)
WHERE f.code <> 'harness_failure'
GROUP BY f.coder, s.model, f.code, s.dimension, s.value;

CREATE VIEW v_task_difficulty AS
SELECT k.task_id, k.task_type, k.language, k.tier_authored, k.difficulty_authored, i.measured_tier,
       i.difficulty, i.difficulty_se, i.discrimination, i.discrimination_se, i.n_attempts, i.pass_rate,
       k.tier_authored IS NOT NULL AND i.measured_tier IS NOT NULL AND k.tier_authored <> i.measured_tier AS misplaced
FROM irt_tasks i JOIN tasks k USING (task_id);

-- Which tasks still carry signal for which model: predicted p from the fit, p(1-p) the
-- expected-improvement bound; band 0.2 to 0.8 here, any band through informative_tasks(lo, hi).
CREATE MACRO informative_tasks(lo, hi) AS TABLE
SELECT a.model, a.task_id, count(*) FILTER (a.outcome <> 'error') AS attempts,
       count(*) FILTER (a.outcome = 'passed') AS passes,
       count(*) FILTER (a.outcome = 'passed') / nullif(count(*) FILTER (a.outcome <> 'error'), 0) AS observed_pass_rate,
       any_value(1 / (1 + exp(-i.discrimination * (m.ability - i.difficulty)))) AS predicted_pass_rate,
       any_value(1 / (1 + exp(-i.discrimination * (m.ability - i.difficulty)))
                 * (1 - 1 / (1 + exp(-i.discrimination * (m.ability - i.difficulty))))) AS signal,
       any_value(1 / (1 + exp(-i.discrimination * (m.ability - i.difficulty))) BETWEEN lo AND hi) AS in_band
FROM v_attempts a JOIN irt_tasks i USING (task_id) JOIN irt_models m USING (model)
GROUP BY a.model, a.task_id;
CREATE VIEW v_informative_tasks AS SELECT * FROM informative_tasks(0.2, 0.8);

-- First failing milestone per attempt ("succeeded at 1 and 2, failed at 3"); all-passed attempts
-- have first_failed NULL.
CREATE VIEW v_milestone_funnel AS
SELECT t.model, coalesce(k.task_type, '(none)') AS task_type, t.milestones_total,
       CASE WHEN t.milestones_passed < t.milestones_total THEN t.milestones_passed + 1 END AS first_failed_milestone,
       count(*) AS attempts
FROM trajectories t LEFT JOIN tasks k USING (task_id)
WHERE t.milestones_total > 0 AND t.outcome <> 'error'
GROUP BY ALL;

CREATE VIEW v_coder_agreement AS
SELECT coder, annotator, code, taxonomy_version, n, kappa, f1, threshold, reliable, computed_at
FROM code_reliability;
""",
    ),
)

# One harness-error policy everywhere: an attempt with no verdict (`outcome = 'error'`) is left
# out of pass rates and failures; a verdict reached despite a harness fault (a test that passed
# after an agent timeout) stands, is counted, and is flagged. Failure shares are taken over the
# failures a coder could judge, with the coverage beside them.
MIGRATIONS += (
    Migration(
        4,
        "raw model names, opaque trajectories, coder coverage, flagged verdicts",
        """
ALTER TABLE trajectories ADD COLUMN model_raw VARCHAR;
ALTER TABLE trajectories ADD COLUMN actions_logged BOOLEAN DEFAULT true;
UPDATE trajectories SET model_raw = model, actions_logged = true;
UPDATE trajectories t SET model = coalesce(r.agent, t.run_id) || ' (model unknown)'
FROM runs r WHERE t.model IS NULL AND r.run_id = t.run_id;
UPDATE trajectories SET model = run_id || ' (model unknown)' WHERE model IS NULL;
ALTER TABLE coding_status ADD COLUMN reason VARCHAR;
ALTER TABLE code_reliability ADD COLUMN in_sample BOOLEAN DEFAULT false;

CREATE OR REPLACE VIEW v_attempts AS
SELECT t.trajectory_id, t.model, t.task_id, t.attempt, t.outcome, t.harness_error,
       coalesce(k.tier_authored, '(none)') AS tier, coalesce(k.task_type, '(none)') AS task_type,
       coalesce(k.language, '(none)') AS language,
       t.outcome <> 'error' AND t.harness_error IS NOT NULL AS flagged
FROM trajectories t LEFT JOIN tasks k USING (task_id)
WHERE t.outcome IS NOT NULL;

CREATE OR REPLACE VIEW v_pass_rates AS
WITH slices AS (
    SELECT model, 'overall' AS dimension, 'all' AS value, outcome, flagged FROM v_attempts
    UNION ALL SELECT model, 'task', task_id, outcome, flagged FROM v_attempts
    UNION ALL SELECT model, 'tier', tier, outcome, flagged FROM v_attempts
    UNION ALL SELECT model, 'task_type', task_type, outcome, flagged FROM v_attempts
    UNION ALL SELECT model, 'language', language, outcome, flagged FROM v_attempts
)
SELECT model, dimension, value,
       count(*) FILTER (outcome <> 'error') AS attempts,
       count(*) FILTER (outcome = 'passed') AS passes,
       count(*) FILTER (outcome = 'passed') / nullif(count(*) FILTER (outcome <> 'error'), 0) AS pass_rate,
       wilson_low(count(*) FILTER (outcome = 'passed'), count(*) FILTER (outcome <> 'error')) AS ci_low,
       wilson_high(count(*) FILTER (outcome = 'passed'), count(*) FILTER (outcome <> 'error')) AS ci_high,
       count(*) FILTER (outcome = 'error') AS harness_errors,
       count(*) FILTER (flagged) AS flagged
FROM slices GROUP BY ALL;

CREATE OR REPLACE VIEW v_failure_distribution AS
WITH failed AS (SELECT * FROM v_attempts WHERE outcome = 'failed'),
slices AS (
    SELECT model, 'overall' AS dimension, 'all' AS value, trajectory_id FROM failed
    UNION ALL SELECT model, 'tier', tier, trajectory_id FROM failed
    UNION ALL SELECT model, 'task_type', task_type, trajectory_id FROM failed
),
totals AS (SELECT model, dimension, value, count(*) AS failures FROM slices GROUP BY ALL),
counted AS (
    SELECT c.coder, c.taxonomy_version, s.model, c.code, s.dimension, s.value,
           count(*) FILTER (c.status = 'present') AS n,
           count(*) FILTER (c.status <> 'not_applicable') AS applied,
           any_value(tot.failures) AS failures
    FROM slices s JOIN coding_status c USING (trajectory_id) JOIN totals tot USING (model, dimension, value)
    WHERE c.code <> 'harness_failure'
    GROUP BY ALL
)
SELECT coder, taxonomy_version, model, code, dimension, value, n, applied, failures,
       n / nullif(applied, 0) AS share, applied / failures AS coverage,
       CASE WHEN applied > 0 THEN wilson_low(n, applied) END AS ci_low,
       CASE WHEN applied > 0 THEN wilson_high(n, applied) END AS ci_high
FROM counted;
""",
    ),
)

# `other` joins the action vocabulary (a tool whose effect is unknown); DuckDB cannot alter a
# CHECK constraint, so `steps` is rebuilt with the new one. Harbor's original exception type is
# kept beside the harness_error it maps to; an agent's version is its own column.
MIGRATIONS += (
    Migration(
        5,
        "other action, exception types, agent versions",
        """
ALTER TABLE steps RENAME TO steps_v4;
CREATE TABLE steps (
    trajectory_id VARCHAR NOT NULL,
    step_idx INTEGER NOT NULL,
    source VARCHAR CHECK (source IN ('system', 'user', 'agent', 'env')),
    message VARCHAR,
    tool_name VARCHAR,
    action VARCHAR CHECK (action IN ('read', 'edit', 'run', 'complete', 'message', 'other')),
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
INSERT INTO steps SELECT * FROM steps_v4;
DROP TABLE steps_v4;
ALTER TABLE trajectories ADD COLUMN exception_type VARCHAR;
ALTER TABLE runs ADD COLUMN agent_version VARCHAR;
UPDATE runs SET agent_version = nullif(split_part(agent, '@', 2), 'unknown'), agent = split_part(agent, '@', 1)
WHERE agent LIKE '%@%';
""",
    ),
)

MIGRATIONS += (
    Migration(
        6,
        "training metrics",
        """
CREATE TABLE training_metrics (
    run_id VARCHAR NOT NULL,
    step INTEGER NOT NULL,
    name VARCHAR NOT NULL,
    value DOUBLE
);
""",
    ),
)

MIGRATIONS += (
    Migration(
        7,
        "plans keep the whole plan",
        """
ALTER TABLE plans ADD COLUMN plan JSON;
""",
    ),
)

# Verifier-derived codes read how each test ended, not only whether it passed; a code's
# reliability is either measured against people's labels or exact by construction (`verifier`).
MIGRATIONS += (
    Migration(
        8,
        "test status and detail, reliability method",
        """
ALTER TABLE test_results ADD COLUMN status VARCHAR;
ALTER TABLE test_results ADD COLUMN detail VARCHAR;
ALTER TABLE code_reliability ADD COLUMN method VARCHAR DEFAULT 'labels';
UPDATE code_reliability SET method = 'labels';
""",
    ),
)

# A no-op re-ingest should cost a stat per input, not a read: each input read cleanly is recorded
# with a signature of its files' sizes and modification times.
MIGRATIONS += (
    Migration(
        9,
        "ingest manifest",
        """
CREATE TABLE ingest_manifest (
    path VARCHAR PRIMARY KEY,
    signature VARCHAR NOT NULL,
    kind VARCHAR,
    trajectories INTEGER NOT NULL,
    seen_at TIMESTAMPTZ DEFAULT current_timestamp
);
""",
    ),
)

# An annotator may be unsure: the label is kept (the page does not offer the trajectory again) with
# `present` NULL, and left out of agreement.
MIGRATIONS += (
    Migration(
        10,
        "unsure labels",
        """
ALTER TABLE labels ALTER COLUMN present DROP NOT NULL;
""",
    ),
)

# A report should not refit: the held-out check is computed with the fit and stored beside it.
MIGRATIONS += (
    Migration(
        11,
        "held-out check with the fit",
        """
CREATE TABLE irt_checks (
    kind VARCHAR NOT NULL,
    held_out INTEGER NOT NULL,
    irt_log_loss DOUBLE NOT NULL,
    baseline_log_loss DOUBLE NOT NULL,
    irt_auc DOUBLE,
    baseline_auc DOUBLE,
    fitted_at TIMESTAMPTZ DEFAULT current_timestamp
);
""",
    ),
)

# An outcome code never sits on a passed attempt: harness_failure (an attempt that *failed* for
# reasons outside the agent) was once coded wherever a harness error was named, passes included
# (a Terminal-Bench trial resolved before its agent timed out). Stores coded before are corrected.
MIGRATIONS += (
    Migration(
        12,
        "no harness_failure on a pass",
        """
DELETE FROM failure_codes WHERE code = 'harness_failure'
    AND trajectory_id IN (SELECT trajectory_id FROM trajectories WHERE outcome = 'passed');
UPDATE coding_status SET status = 'absent' WHERE code = 'harness_failure' AND status = 'present'
    AND trajectory_id IN (SELECT trajectory_id FROM trajectories WHERE outcome = 'passed');
""",
    ),
)

# Actions are logged only where the agent has a step: trials stored with none (a leaderboard
# submission's results without a keystroke log) said `actions_logged`, and the rules said "absent"
# on them without having seen anything. Such trials are marked, and those verdicts withdrawn.
MIGRATIONS += (
    Migration(
        13,
        "no actions logged without an agent step",
        """
UPDATE trajectories SET actions_logged = false WHERE actions_logged
    AND trajectory_id NOT IN (SELECT trajectory_id FROM steps WHERE source = 'agent');
UPDATE coding_status SET status = 'not_applicable', reason = 'installed agent: actions not logged'
    WHERE coder = 'rules' AND code <> 'harness_failure' AND status = 'absent'
    AND trajectory_id IN (SELECT trajectory_id FROM trajectories WHERE NOT actions_logged);
""",
    ),
)

# Task health: a task no system ever solved (or every system always solved) may be broken or
# trivial; it is kept out of difficulty fits and task mixes until a person marks it checked.
MIGRATIONS += (
    Migration(
        14,
        "tasks checked after a health flag",
        """
CREATE TABLE IF NOT EXISTS task_checks (
    task_id VARCHAR PRIMARY KEY,
    note VARCHAR,
    checked_at TIMESTAMPTZ DEFAULT current_timestamp
);
""",
    ),
)

# The C-d that closes an agent's recording is the harness's even when no tests recording follows
# (a trial cut short): three real trials whose only "agent" step was that key were judged by the
# rules as if the agent had acted. Stored ones are re-attributed and those verdicts withdrawn.
MIGRATIONS += (
    Migration(
        15,
        "a closing C-d is the harness's",
        """
UPDATE steps SET source = 'env' WHERE source = 'agent' AND command = 'C-d'
    AND (trajectory_id, step_idx) IN (SELECT trajectory_id, max(step_idx) FROM steps GROUP BY trajectory_id);
UPDATE trajectories SET actions_logged = false WHERE actions_logged
    AND trajectory_id NOT IN (SELECT trajectory_id FROM steps WHERE source = 'agent');
DELETE FROM failure_codes WHERE coder = 'rules' AND code <> 'harness_failure'
    AND trajectory_id IN (SELECT trajectory_id FROM trajectories WHERE NOT actions_logged);
UPDATE coding_status SET status = 'not_applicable', reason = 'installed agent: actions not logged'
    WHERE coder = 'rules' AND code <> 'harness_failure' AND status <> 'not_applicable'
    AND trajectory_id IN (SELECT trajectory_id FROM trajectories WHERE NOT actions_logged);
""",
    ),
)

# Steps are read into actions by one shell reading (tree-sitter's bash grammar) since reading 2: a
# trajectory records the reading that made its steps, and those stored before are read again by the
# next ingest of their files (the manifest forgets them, so the files are opened, not skipped), their
# steps and codes replaced.
MIGRATIONS += (
    Migration(
        16,
        "the reading that made a trajectory's steps",
        """
ALTER TABLE trajectories ADD COLUMN IF NOT EXISTS reading INTEGER;
DELETE FROM ingest_manifest;
""",
    ),
)

# Plans of two kinds: a code-model plan over problems and an agent's plan over terminal tasks, told
# apart by `kind`, each holding only its own fields. Task plans stored before carried the problem-plan
# fields empty (their group size inside `thresholds`); they are rewritten in the new shape, ids kept
# (a plan's id hashes its content in the shape it had before kinds, `planner.plan._PlanCommon.content_id`).
MIGRATIONS += (
    Migration(
        17,
        "plans of two kinds",
        """
ALTER TABLE plans ADD COLUMN IF NOT EXISTS kind VARCHAR;
UPDATE plans SET kind = CASE WHEN plan->>'$.problems' LIKE 'tasks:%' THEN 'tasks' ELSE 'problems' END
    WHERE kind IS NULL;
UPDATE plans SET plan = json_merge_patch(plan, json_object('kind', 'problems'))
    WHERE kind = 'problems' AND plan->>'$.kind' IS NULL;
UPDATE plans SET plan = json_merge_patch(plan, json_object(
        'kind', 'tasks', 'group_size', (plan->>'$.thresholds.group_size')::INTEGER, 'capability', NULL, 'band', NULL,
        'schedule', NULL, 'start_tier', NULL, 'weights', NULL, 'alpha_bias', NULL, 'thresholds', NULL, 'dynamic', NULL))
    WHERE kind = 'tasks' AND plan->>'$.kind' IS NULL;
""",
    ),
)

# Reading 3 (`hashes.READING`): a call of several commands (`javac … && java …`, keystrokes) keeps its
# status as the call's (`call_exit_code`, `call_error` on each of its steps), its parts' own statuses
# unknown, never given to the last part. Identities come from the files' own content: a Claude Code
# session is `claude-code/<sessionId>` and a Codex rollout `codex/<id>` (each its own run, its agent
# fixed: the folder they were kept in named both before, and a later file in the same folder took
# the run's agent), and a trajectory of a SWE-bench submission (`<submission>/trajs/…`) is keyed by
# the submission, not by `trajs`. A Claude Code file is named by its session's id, which its lines
# carry; a resumed session's file starts with lines of the earlier session, whose id the code before
# took: the name decides, as the reader now does. Stored trajectories move to their new ids with
# every row that names them (steps, tests, codes, statuses, labels); where two stored copies of one
# session meet, the one ingested last is kept (labels of both are kept). The manifest is forgotten
# so that the next ingest reads every file again.
MIGRATIONS += (
    Migration(
        18,
        "call status, identities from content",
        """
ALTER TABLE steps ADD COLUMN IF NOT EXISTS call_exit_code INTEGER;
ALTER TABLE steps ADD COLUMN IF NOT EXISTS call_error BOOLEAN;
UPDATE steps SET call_exit_code = exit_code, call_error = error_observed
    WHERE call_exit_code IS NULL AND call_error IS NULL;
CREATE TEMP TABLE _moved AS
SELECT old_id, new_id, old_run, new_run, agent,
       row_number() OVER (PARTITION BY new_id ORDER BY ingested_at DESC NULLS LAST, old_id) AS rank
FROM (
    SELECT trajectory_id AS old_id, run_id AS old_run, ingested_at,
           CASE source_format
               WHEN 'claude-code' THEN 'claude-code/' || coalesce(nullif(regexp_extract(source_path, '([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})[.]jsonl$', 1), ''), task_id)
               WHEN 'codex-cli' THEN 'codex/' || task_id
               ELSE regexp_extract(source_path, '([^/]+)/trajs/[^/]+(/[^/]+)?$', 1) || '/' || substr(trajectory_id, 7)
           END AS new_id,
           CASE source_format
               WHEN 'claude-code' THEN 'claude-code/' || coalesce(nullif(regexp_extract(source_path, '([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})[.]jsonl$', 1), ''), task_id)
               WHEN 'codex-cli' THEN 'codex/' || task_id
               ELSE regexp_extract(source_path, '([^/]+)/trajs/[^/]+(/[^/]+)?$', 1)
           END AS new_run,
           CASE source_format WHEN 'claude-code' THEN 'claude-code' WHEN 'codex-cli' THEN 'codex' END AS agent
    FROM trajectories
    WHERE source_format IN ('claude-code', 'codex-cli')
       OR (source_format IN ('mini-swe-agent', 'swe-agent') AND trajectory_id LIKE 'trajs/%'
           AND regexp_matches(source_path, '[^/]+/trajs/[^/]+(/[^/]+)?$'))
)
WHERE new_id <> old_id;
INSERT OR IGNORE INTO runs BY NAME
SELECT * EXCLUDE (new_run, moved_agent) REPLACE (new_run AS run_id, coalesce(moved_agent, agent) AS agent)
FROM (
    SELECT DISTINCT ON (m.new_run) r.*, m.new_run, m.agent AS moved_agent
    FROM _moved m JOIN runs r ON r.run_id = m.old_run WHERE m.rank = 1 ORDER BY m.new_run
);
DELETE FROM steps WHERE trajectory_id IN (SELECT old_id FROM _moved WHERE rank > 1);
DELETE FROM test_results WHERE trajectory_id IN (SELECT old_id FROM _moved WHERE rank > 1);
DELETE FROM failure_codes WHERE trajectory_id IN (SELECT old_id FROM _moved WHERE rank > 1);
DELETE FROM coding_status WHERE trajectory_id IN (SELECT old_id FROM _moved WHERE rank > 1);
UPDATE steps SET trajectory_id = m.new_id FROM _moved m WHERE steps.trajectory_id = m.old_id;
UPDATE test_results SET trajectory_id = m.new_id FROM _moved m WHERE test_results.trajectory_id = m.old_id;
UPDATE failure_codes SET trajectory_id = m.new_id FROM _moved m WHERE failure_codes.trajectory_id = m.old_id;
UPDATE coding_status SET trajectory_id = m.new_id FROM _moved m WHERE coding_status.trajectory_id = m.old_id;
UPDATE labels SET trajectory_id = m.new_id FROM _moved m WHERE labels.trajectory_id = m.old_id;
INSERT INTO trajectories BY NAME
SELECT * EXCLUDE (old_id, new_id, old_run, new_run, agent, rank) REPLACE (new_id AS trajectory_id, new_run AS run_id)
FROM trajectories t JOIN _moved m ON t.trajectory_id = m.old_id WHERE m.rank = 1;
DELETE FROM trajectories WHERE trajectory_id IN (SELECT old_id FROM _moved);
DELETE FROM runs WHERE run_id IN (SELECT old_run FROM _moved)
    AND run_id NOT IN (SELECT run_id FROM trajectories);
DROP TABLE _moved;
DELETE FROM ingest_manifest;
""",
    ),
)

# Reliability is per format family (curriculab.trajectory.vocabulary.format_family): agreement
# measured on one agent's logs does not vouch for another's. Earlier rows were measured over every
# format at once: the pooled family ''.
MIGRATIONS += (
    Migration(
        19,
        "reliability per format family",
        """
ALTER TABLE code_reliability ADD COLUMN IF NOT EXISTS family VARCHAR DEFAULT '';
UPDATE code_reliability SET family = '' WHERE family IS NULL;
CREATE OR REPLACE VIEW v_coder_agreement AS
SELECT coder, annotator, code, taxonomy_version, n, kappa, f1, threshold, reliable, computed_at, family
FROM code_reliability;
""",
    ),
)

# Time and transcripts (issue #68): the agent's own start and end beside the trial's (the trial's also
# count setting up the environment and running the tests), and where a run keeps the agent's terminal
# (an asciinema recording, the final screen): paths, not bytes. Inputs are opened again by the next
# ingest (`hashes.READING` 3 re-reads them), which fills the new columns of trajectories stored before.
MIGRATIONS += (
    Migration(
        20,
        "agent times and terminal recordings",
        """
ALTER TABLE trajectories ADD COLUMN IF NOT EXISTS agent_started_at TIMESTAMPTZ;
ALTER TABLE trajectories ADD COLUMN IF NOT EXISTS agent_ended_at TIMESTAMPTZ;
ALTER TABLE trajectories ADD COLUMN IF NOT EXISTS recording VARCHAR;
ALTER TABLE trajectories ADD COLUMN IF NOT EXISTS panes VARCHAR;
DELETE FROM ingest_manifest;
""",
    ),
)

LATEST_VERSION = MIGRATIONS[-1].version

TABLE_DOCS: dict[str, str] = {
    "tasks": "One row per task: instruction, authored tier and difficulty, language, scale.",
    "runs": "One row per run (job): agent and agent_version, model, dataset, where it was read from.",
    "trajectories": "One row per attempt: outcome (passed/failed/error), harness_error (exception_type as the source named it), canonical model (model_raw as read), tokens, cost, the reading that made its steps, the agent's own start and end (agent_started_at, agent_ended_at) and where the run keeps its terminal (recording: an asciinema file; panes: the final screen).",
    "steps": "Normalised steps: action read/edit/run/complete/message/other, path, command, output; exit_code and error_observed are the step's own (NULL where the log gives one status for a whole command line), call_exit_code and call_error the tool call's.",
    "test_results": "Per-test verdicts with tier and milestone; status and detail say how a test ended where the verifier reports it.",
    "failure_codes": "Taxonomy codes assigned by coders, with evidence steps.",
    "labels": 'Human labels per trajectory and code; present NULL is an annotator\'s "unsure" (left out of agreement).',
    "plans": "Curriculum plans: allocation, weights, task mix, reasons, the plan.yaml text (config_yaml), the whole plan (plan) and its kind (problems or tasks).",
    "ingest_errors": "Quarantined input (severity error) and repaired input (severity warning).",
    "coding_status": "Per trajectory, code and coder: present, absent, or not_applicable (the coder abstained).",
    "code_reliability": "Per coder, code and format family: agreement with an annotator (method labels; family '' pools every format), or exact by construction (method verifier, environment); the planner reads the family of the system it plans for.",
    "irt_tasks": "Measured task difficulty b, discrimination a (with standard errors) and measured tier from the last fit.",
    "irt_models": "Measured model ability θ (with standard error) from the last fit.",
    "task_checks": "Tasks a person checked after task health flagged them (never or always solved): kept in difficulty fits and task mixes again.",
    "irt_checks": "The last fit's held-out check: each (model, task)'s last repeated attempt predicted by a fit without it, against the task's pass rate (log-loss, AUC).",
    "v_attempts": "View: attempts with their task's tier, type and language (no trajectories without a verdict).",
    "v_pass_rates": "View: per model and slice (overall, task, tier, task_type, language): pass rate with Wilson 95% interval; verdicts reached despite a harness fault count and are flagged.",
    "v_failure_distribution": "View: per coder, model, code and slice: count, share of the failures the coder could judge, coverage, Wilson interval.",
    "v_task_difficulty": "View: measured vs authored difficulty per task; misplaced when the tiers disagree.",
    "v_informative_tasks": "View: per model and task, predicted pass rate and p(1-p); in_band for 0.2-0.8.",
    "v_milestone_funnel": "View: first failing milestone per model and task type.",
    "v_coder_agreement": "View: coder agreement per code, annotator and format family, with reliability.",
    "training_metrics": "Training curves: one row per logging step and metric (loss, kl, reward, pass_rate/<tier>, alpha/<tier>).",
    "schema_migrations": "Applied schema migrations.",
    "ingest_manifest": "Inputs read cleanly: path, a signature of their files' sizes and modification times, trajectories; an unchanged input is skipped after one stat.",
}
