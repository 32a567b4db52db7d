"""The `curriculab` commands, one module per stage. Each parses its arguments, calls one library
function and prints what it returned; the logic lives in the library."""

from curriculab.commands import app, coding, ingest, plan, problems, report, store, train

COMMANDS = (
    ingest.ingest,
    ingest.simulate,
    store.query,
    store.db,
    coding.code,
    coding.labels,
    coding.classifier,
    coding.agreement,
    report.report,
    report.difficulty,
    plan.plan,
    problems.reward,
    problems.problems,
    train.train,
    train.loop,
    train.model,
    app.dashboard,
    app.demo,
)
"""Every top-level command (groups carry their subcommands)."""
