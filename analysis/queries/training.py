"""Plans, training runs, their metrics and their rollouts' codes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from curriculab.analysis.store import Store

if TYPE_CHECKING:  # reads return DataFrames, but DuckDB imports pandas only when one is made:
    import pandas as pd  # ingest's readers import the read API and never make one
from curriculab.analysis.queries.core import TRAINING_AGENT, TRAINING_RUN, SqlRead, Statement, _where


def plans(store: Store, *, target_model: str | None = None) -> pd.DataFrame:
    """Stored curriculum plans, newest first.

    Columns: plan_id, created_at, target_model, strategy, allocation, weights, task_mix, reasons, config_yaml
    (the plan.yaml text), plan (the whole plan as JSON), kind (problems or tasks).
    """
    where, params = _where({"target_model": "target_model"}, target_model=target_model)
    return store.frame(f"select * from plans{where} order by created_at desc", params)


def training_curves(store: Store, *, run_id: str | None = None, name: str | None = None) -> pd.DataFrame:
    """Training metrics per logging step (loss, kl, reward, pass_rate/<tier>, alpha/<tier>).

    Columns: run_id, step, name, value. Empty until a training run has logged.
    """
    where, params = _where({"run_id": "run_id", "name": "name"}, run_id=run_id, name=name)
    return store.frame(
        f"select run_id, step, name, value from training_metrics{where} order by run_id, name, step", params
    )


@SqlRead
def training_runs(store: Store, *, run_id: str | None = None) -> Statement:
    """Per training run (GRPO rollouts, agent `curriculab-grpo`, and agentic runs, whose episodes
    are the agent's own, `curriculab-terminal`): what it generated and how it went.

    Columns: run_id, model (the base model), rollout_models (the store names of its rollouts,
    e.g. `<M>@round2`), rollouts, failed, passed, pass_rate (every test passed), mean_reward,
    steps (logged), zero_std_share (mean `frac_reward_zero_std`: groups with no gradient),
    final_reward (the last logged step's mean reward), agent (whose rollouts or episodes).
    """
    where, params = _where({"run_id": "r.run_id"}, run_id=run_id)
    return (
        f"""
        with training as (select r.run_id from runs r where {TRAINING_RUN.format(agent="r.agent", run_id="r.run_id")}),
        rollouts as (  -- the training runs' trajectories alone: most of a store is evaluations
            select t.run_id, string_agg(distinct t.model, ', ' order by t.model) as rollout_models, count(*) as rollouts,
                   count(*) filter (t.outcome = 'failed') as failed, count(*) filter (t.outcome = 'passed') as passed,
                   avg(t.reward) as mean_reward
            from trajectories t where t.run_id in (select run_id from training) group by 1),
        metrics as (
            select run_id, count(distinct step) as steps,
                   avg(value) filter (name = 'frac_reward_zero_std') as zero_std_share,
                   arg_max(value, step) filter (name = 'reward') as final_reward
            from training_metrics group by 1)
        select r.run_id, r.model, o.rollout_models, o.rollouts, o.failed, o.passed,
               o.passed / nullif(o.passed + o.failed, 0) as pass_rate, o.mean_reward, m.steps, m.zero_std_share,
               m.final_reward, r.agent
        from runs r join rollouts o using (run_id) left join metrics m using (run_id){where}
        order by r.started_at nulls last, r.run_id""",
        [TRAINING_AGENT, *params],
    )


@SqlRead
def rollout_codes(store: Store, *, run_id: str | None = None) -> Statement:
    """The exact coders' failure codes over each training run's failed rollouts: the verifier's,
    and in agentic episodes the environment's process codes.

    Columns: run_id, code, n (failed rollouts with it), failures (failed rollouts judged),
    share, ci_low, ci_high (Wilson 95%), coder. Codes present at least once, largest share first.
    """
    where, params = _where({"run_id": "t.run_id"}, after_where=True, run_id=run_id)
    return (
        f"""
        select t.run_id, c.code, count(*) filter (c.status = 'present') as n,
               count(*) filter (c.status <> 'not_applicable') as failures,
               n / nullif(failures, 0) as share, wilson_low(n, failures) as ci_low, wilson_high(n, failures) as ci_high,
               c.coder
        from coding_status c join trajectories t using (trajectory_id)
        where c.coder in ('verifier', 'environment') and t.outcome = 'failed'
              and t.run_id in (select r.run_id from runs r where {TRAINING_RUN.format(agent="r.agent", run_id="r.run_id")})
              {where}
        group by all having n > 0 order by t.run_id, share desc, c.code""",
        [TRAINING_AGENT, *params],
    )


@SqlRead
def episode_codes(store: Store, trajectory_prefix: str = "", *, coder: str = "rules") -> Statement:
    """One coder's codes over the failed trajectories whose id starts with `trajectory_prefix`
    (an agentic training run's episodes are named `<run_id>-…`; "" for all).

    Columns: code, n (failed episodes with it), failures (failed episodes judged), share, ci_low,
    ci_high (Wilson 95%). Codes judged at least once, largest share first.
    """
    return (
        """
        select c.code, count(*) filter (c.status = 'present') as n,
               count(*) filter (c.status <> 'not_applicable') as failures,
               n / nullif(failures, 0) as share, wilson_low(n, failures) as ci_low, wilson_high(n, failures) as ci_high
        from coding_status c join trajectories t using (trajectory_id)
        where c.coder = ? and t.outcome = 'failed' and starts_with(t.trajectory_id, ?)
        group by all having failures > 0 order by share desc, c.code""",
        [coder, trajectory_prefix],
    )
