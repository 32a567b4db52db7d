"""Labelling: the path from no labels to failure codes the planner may act on. For one code, a
stratified queue of trajectories (the coder found it, judged it absent, near misses), each shown
with its evidence; the analyst marks present / absent / unsure with one key. Each label goes
through one write in a short-lived writer (the page holds no connection then) that also
recomputes the coder's agreement, pooled and per format family, so `code_reliability` and the next
plan follow every label. The planner reads a code per system (agent · model), through the labels on
that system's own format family: the page answers per system, naming the labels each family still
needs (filter the queue to a system's agent or model to label where it counts)."""

import pandas as pd
import streamlit as st

from curriculab.analysis import queries
from curriculab.analysis.labels import MIN_LABELS_RELIABLE, label_and_measure, planner_use, planner_use_per_system
from curriculab.dashboard.common import coder_and_version, db_path, filters, read, scope, store_ready, table
from curriculab.dashboard.viewer import show_trajectory
from curriculab.taxonomy.taxonomy import load_taxonomy

# button, keyboard shortcut, stored value (None: unsure, left out of agreement)
ANSWERS = (("Present", "p", True), ("Absent", "a", False), ("Unsure", "u", None))

st.title("Labelling")
if store_ready():
    coder, version = coder_and_version()
    if version is None:
        st.info(
            f"The coder `{coder}` has not coded this store. Run `curriculab code --coder {coder}`, then label its codes."
        )
    else:
        taxonomy = load_taxonomy(version)
        left, right = st.columns([1, 2])
        annotator = left.text_input(
            "Annotator",
            value=st.query_params.get("annotator", ""),
            key="label_annotator",
            help="Labels are kept per annotator; agreement is measured coder against annotator.",
        )
        codes = [c for c in taxonomy.code_names if c != "harness_failure"]
        code = right.selectbox("Code", codes, key="label_code")
        st.caption(f"**{code}**: {taxonomy.get(code).definition}")
        if not annotator.strip():
            st.info("Type your name as annotator to start labelling.")
        else:
            st.query_params["annotator"] = annotator.strip()
            reliability = read("code_reliability", coder=coder, taxonomy_version=taxonomy.version)
            mine = reliability[reliability["annotator"] == annotator.strip()]
            # the pooled row (family ''); the rows per format family are spoken of below
            row = next(iter(queries.records(mine[(mine["code"] == code) & (mine["family"] == "")])), None)
            labelled = read(
                "labels", annotator=annotator.strip(), taxonomy_version=taxonomy.version, include_unsure=True
            )
            done = labelled[labelled["code"] == code]
            columns = st.columns(3)
            columns[0].metric(
                f"Your labels on {code}",
                len(done),
                help=f"Unsure ones included; {MIN_LABELS_RELIABLE} present/absent labels are needed "
                "before agreement can make a code reliable.",
            )
            columns[1].metric(
                f"κ ({coder} against you)", "–" if row is None or row["kappa"] is None else f"{row['kappa']:.2f}"
            )
            # the planner reads each coder's code apart: with no coder chosen, say what it does with every one
            rows_of = {coder: queries.records(reliability[reliability["code"] == code])}
            yours = {coder: row}
            if "coder" not in filters():
                st.caption(f"Labels are measured against `{coder}`; choose a coder in the sidebar to label another's.")
                everyone = read("code_reliability", taxonomy_version=taxonomy.version)
                for other, part in everyone[everyone["code"] == code].groupby("coder"):
                    theirs = queries.records(part)
                    rows_of.setdefault(str(other), theirs)
                    yours.setdefault(str(other), next((r for r in theirs if r["annotator"] == annotator.strip()), None))
            for name, rows in rows_of.items():
                use = planner_use(rows, yours[name], code=code, taxonomy_version=taxonomy.version)
                st.markdown(f"**{code}** from `{name}`, over every format: {use.why}.")
            # the planner reads a code for one system at a time, through the labels on that system's own
            # format family and its own time: the answer that counts is per system
            shown = {
                queries.system_name(r["agent"], r["model"]) for r in queries.records(read("systems", scope=scope()))
            }
            formats = queries.records(read("failure_formats"))
            families = queries.format_families(formats, by="system")
            per_system = {
                name: {
                    system: by_code[code]
                    for system, by_code in planner_use_per_system(
                        rows,
                        formats,
                        queries.records(read("code_timeouts", coder=name, taxonomy_version=taxonomy.version)),
                        [code],
                        taxonomy_version=taxonomy.version,
                    ).items()
                    if system in shown
                }
                for name, rows in rows_of.items()
            }
            counted = {name: (sum(u.used for u in by.values()), len(by)) for name, by in per_system.items() if by}
            users = [f"{name}: {k} of {n} systems" for name, (k, n) in counted.items() if k]
            columns[2].metric(
                "For planning",
                (f"used ({'; '.join(users)})" if users else "not used") if counted else "no failures here",
                help="The planner's rule, per coder and system: each system's code is read through the labels "
                "on its own format family, and its own time.",
            )
            answers = [
                {
                    "coder": name,
                    "system": system,
                    "format_families": ", ".join(families.get(system, [])) or "(none)",
                    "for_planning": use.status,
                    "why": use.why,
                }
                for name, by in per_system.items()
                for system, use in sorted(by.items())
            ]
            if answers:
                table(
                    pd.DataFrame(answers),
                    "planner_use_per_system",
                    f"What the planner does with {code} for each system: it reads the labels on that system's own "
                    "format family (and its time); `why` says which labels that family still needs",
                )
            # the planner reads the family of the system it plans for: say where this annotator's labels vouch
            per_family = queries.records(mine[(mine["code"] == code) & (mine["family"] != "")])
            for measured in per_family:
                use = planner_use(
                    queries.records(reliability[reliability["code"] == code]),
                    measured,
                    code=code,
                    taxonomy_version=taxonomy.version,
                    family=measured["family"],
                )
                st.markdown(f"**{code}** from `{coder}` on `{measured['family']}` trajectories: {use.why}.")
            queue = read(
                "labelling_queue",
                code=code,
                coder=coder,
                taxonomy_version=taxonomy.version,
                annotator=annotator.strip(),
                scope=scope(),
            )
            if (
                queue.empty
                and done.empty
                and not read("coder_coverage", coder=coder, taxonomy_version=taxonomy.version, scope=scope())[
                    "coded_failures"
                ].sum()
            ):
                # an empty queue because the coder could judge nothing is not work done: say why, and what would fill it
                st.info(
                    f"Nothing to label: `{coder}` could judge none of these attempts (its rules need the agent's "
                    "actions; installed agents log only their verdicts). Labels would measure nothing here. The "
                    "verifier's codes (Failure modes page) come from the tests, exact, and need no labels; import "
                    "trajectories with logged actions to label the behavioural codes.",
                    icon=":material/visibility_off:",
                )
            elif queue.empty:
                st.success(f"Nothing left to label for {code} under these filters.")
            else:
                item = queries.records(queue.head(1))[0]
                st.subheader(f"Is `{code}` present? ({item['queued']:,} in the queue)")
                st.caption(
                    f"Sampled as **{item['stratum']}** · the coder says **{item['coder_says']}** · "
                    "press p (present), a (absent) or u (unsure)"
                )
                buttons = st.columns(len(ANSWERS))
                for column, (label, key, value) in zip(buttons, ANSWERS):
                    if column.button(
                        f"{label} ({key})",
                        key=f"label_{key}",
                        shortcut=key,
                        width="stretch",
                        type="primary" if value is not None else "secondary",
                    ):
                        try:
                            label_and_measure(
                                db_path(),
                                annotator=annotator,
                                trajectory_id=item["trajectory_id"],
                                code=code,
                                present=value,
                                coder=coder,
                                taxonomy_version=taxonomy.version,
                            )
                        except ValueError as exc:
                            st.error(str(exc))
                        else:
                            st.rerun()
                show_trajectory(item["trajectory_id"], highlight_code=code, key="label")
            if not mine.empty:
                every = queries.records(reliability)
                view = mine.assign(
                    family=[r["family"] or "all formats" for r in queries.records(mine)],
                    for_planning=[
                        planner_use([x for x in every if x["code"] == r["code"]], r, family=r["family"] or None).why
                        for r in queries.records(mine)
                    ],
                )
                table(
                    view[["code", "family", "n", "kappa", "f1", "reliable", "for_planning", "computed_at"]],
                    "my_reliability",
                    f"{coder} against {annotator.strip()}, per code: what the planner would now use",
                )
