"""The v1 taxonomy: every pinned code, fully described; bad files give clear errors; v2 maps v1."""

import pytest

from curriculab.taxonomy.taxonomy import V1_CODES, TaxonomyError, load_taxonomy

V1_TIERS = {
    "skipped_verification": "foundational",
    "misread_requirements": "intermediate",
    "no_plan_revision": "intermediate",
    "tool_misuse": "intermediate",
    "redundant_rework": "efficiency",
    "decoy_susceptibility": "expert",
    "contract_inconsistency": "expert",
    "reward_hacking": "infra",
    "harness_failure": "infra",
}


def test_v1_has_every_pinned_code_with_its_tier_and_full_description():
    v1 = load_taxonomy("v1")
    assert v1.version == "v1" and tuple(v1.code_names) == V1_CODES
    for code in v1.codes:
        assert code.tier == V1_TIERS[code.code]
        assert code.stage in v1.stages and code.definition and code.remediation
        assert code.positive_examples and code.negative_examples


def write(tmp_path, text, name="tax.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_bad_files_name_the_entry_and_the_fix(tmp_path):
    v1 = load_taxonomy("v1").model_dump()
    import yaml

    bad = dict(v1, codes=[dict(v1["codes"][0], tier="expertish")] + v1["codes"][1:])
    path = write(tmp_path, yaml.safe_dump(bad))
    with pytest.raises(TaxonomyError) as err:
        load_taxonomy(path)
    assert str(err.value) == (
        f"taxonomy file {path}: (root): codes[0].tier: 'expertish' is not one of {v1['tiers']}. Fix that entry"
    )
    missing = dict(v1, codes=[{k: v for k, v in v1["codes"][0].items() if k != "remediation"}])
    path = write(tmp_path, yaml.safe_dump(missing), "missing.yaml")
    with pytest.raises(TaxonomyError, match=r"codes\[0\]\.remediation: Field required\. Fix that entry"):
        load_taxonomy(path)
    with pytest.raises(TaxonomyError, match="invalid YAML"):
        load_taxonomy(write(tmp_path, "codes: [unclosed", "broken.yaml"))
    with pytest.raises(TaxonomyError, match="not found"):
        load_taxonomy(tmp_path / "nope.yaml")


def test_a_v2_must_map_every_v1_code(tmp_path):
    import yaml

    v1 = load_taxonomy("v1").model_dump()
    codes = v1["codes"] + [dict(v1["codes"][0], code="unverified_claim", name="Unverified claim")]
    mapping = {c: [c] for c in V1_CODES}
    mapping["skipped_verification"] = ["skipped_verification", "unverified_claim"]
    v2 = dict(v1, version="v2", codes=codes, maps_from="v1", mapping=mapping)
    taxonomy = load_taxonomy(write(tmp_path, yaml.safe_dump(v2), "v2.yaml"))
    assert taxonomy.map_code("skipped_verification", "v1") == ["skipped_verification", "unverified_claim"]
    assert taxonomy.map_code("tool_misuse", "v1") == ["tool_misuse"]
    partial = dict(v2, mapping={c: [c] for c in V1_CODES[:-1]})
    with pytest.raises(TaxonomyError, match=r"no mapping for v1 code\(s\) \['harness_failure'\]"):
        load_taxonomy(write(tmp_path, yaml.safe_dump(partial), "v2b.yaml"))
    dangling = dict(v2, mapping={**mapping, "tool_misuse": ["no_such_code"]})
    with pytest.raises(TaxonomyError, match=r"mapping\.tool_misuse: maps to \['no_such_code'\]"):
        load_taxonomy(write(tmp_path, yaml.safe_dump(dangling), "v2c.yaml"))


def test_v2_adds_premature_stop_and_maps_every_v1_code_to_itself():
    from curriculab.taxonomy.taxonomy import V1_CODES, load_taxonomy

    v2 = load_taxonomy("v2")
    assert v2.maps_from == "v1" and v2.code_names == [*V1_CODES, "premature_stop"]
    assert all(v2.map_code(code, "v1") == [code] for code in V1_CODES)
    stop = v2.get("premature_stop")
    assert stop.positive_examples and len(stop.negative_examples) >= 2 and stop.tier and stop.stage


def test_v4_redefines_harness_failure_as_an_infrastructure_fault():
    v3, v4 = load_taxonomy("v3"), load_taxonomy("v4")
    assert v4.maps_from == "v3" and v4.code_names == v3.code_names
    assert v4.older_versions == ["v3", "v2", "v1"]
    assert (
        v4.redefined == ["harness_failure"]
        and v4.get("harness_failure").definition != v3.get("harness_failure").definition
    )
    assert (
        "agent timeout" in v4.get("harness_failure").definition
        and "outcome error" in v4.get("harness_failure").definition
    )
    # every older code is still readable as a v4 code, through the whole chain
    assert all(v4.map_code(code, "v1") == [code] for code in V1_CODES)
    # a label judged a meaning: v1's harness_failure labels do not judge v4's; every other v1 label carries
    carried = v4.labels_carried_from("v1")
    assert set(carried) == set(V1_CODES) - {"harness_failure"} and all(k == v for k, v in carried.items())
    assert v4.labels_carried_from("v4")["harness_failure"] == "harness_failure"
    assert "premature_stop" in v4.labels_carried_from("v2") and "premature_stop" not in carried


def test_v5_says_a_check_is_what_the_shell_executed():
    v4, v5 = load_taxonomy("v4"), load_taxonomy("v5")
    assert v5.maps_from == "v4" and v5.code_names == v4.code_names
    assert v5.older_versions == ["v4", "v3", "v2", "v1"] and v5.redefined == []
    sharpened = v5.get("skipped_verification").definition
    assert "only if it was executed" in sharpened and "true || pytest" in sharpened
    assert sharpened.startswith(v4.get("skipped_verification").definition.rstrip("."))
    # a labeller read what ran: every v4 label carries over, harness_failure's too
    assert v5.labels_carried_from("v4") == {code: code for code in v4.code_names}


def test_v6_is_the_default_and_reads_every_behavioural_code_by_its_general_reading_rules():
    from curriculab.taxonomy.taxonomy import NEWEST

    v5, v6 = load_taxonomy("v5"), load_taxonomy()
    assert NEWEST == v6.version == "v6" and v6.maps_from == "v5" and v6.code_names == v5.code_names
    assert v6.older_versions == ["v5", "v4", "v3", "v2", "v1"]
    # the reading rules settle what labellers found ambiguous
    rules = " ".join(v6.description.split())
    assert "a refused edit" in rules and "is no change" in rules and "1 failed, 2 passed" in rules
    assert "for agents that have no such tool, the final message" in rules and "is a stop" in rules
    npr = " ".join(v6.get("no_plan_revision").definition.split())
    assert "any change counts as a change, whether or not it addresses the error" in npr
    assert "whatever harmless commands are prepended" in npr
    assert "A resent refused edit is no_plan_revision, not this code" in " ".join(
        v6.get("redundant_rework").definition.split()
    )
    # sharpened codes keep their labels; reward_hacking is redefined (v5 counted any edit of an existing test)
    assert v6.redefined == ["reward_hacking"]
    carried = v6.labels_carried_from("v5")
    assert set(carried) == set(v5.code_names) - {"reward_hacking"} and all(k == v for k, v in carried.items())
    hacking = " ".join(v6.get("reward_hacking").definition.split())
    assert "existed before the agent touched them" in hacking and "is not weakening" in hacking
    # the codes the rules emit read sharper (what the blind labellers settled included); the rest are v5's
    changed = {c for c in v5.code_names if v5.get(c) != v6.get(c)}
    assert changed == {
        "skipped_verification",
        "no_plan_revision",
        "redundant_rework",
        "tool_misuse",
        "reward_hacking",
        "harness_failure",
        "premature_stop",
    }
    assert "keeping an exact assertion, is not weakening" in " ".join(v6.get("reward_hacking").definition.split())


def test_a_redefined_code_must_be_one_the_mapping_names(tmp_path):
    import yaml

    v4 = load_taxonomy("v4").model_dump()
    with pytest.raises(TaxonomyError, match=r"redefined: \['no_such_code'\] are not codes of mapping"):
        load_taxonomy(write(tmp_path, yaml.safe_dump(dict(v4, redefined=["no_such_code"])), "v5.yaml"))


def test_the_planners_view_of_every_shipped_version_is_the_validated_taxonomys(tmp_path):
    from curriculab.taxonomy.targets import PlannerTarget, planner_view
    from curriculab.taxonomy.versions import PACKAGE_DIR

    shipped = sorted(p.stem for p in PACKAGE_DIR.glob("v*.yaml") if p.stem[1:].isdigit())
    assert len(shipped) >= 6
    for version in shipped:
        full = load_taxonomy(version)
        expected = {
            c.code: None
            if c.target is None
            else PlannerTarget(c.target.curriculum_effect, tuple(c.target.tiers), c.target.note)
            for c in full.codes
        }
        view = planner_view(version)
        assert (view.version, list(view.targets.items())) == (full.version, list(expected.items())), version
    # a file that is not a shipped version is read (and validated) by load_taxonomy
    v1 = load_taxonomy("v1").model_dump()
    import yaml

    off = dict(v1, codes=[dict(v1["codes"][0], target={"curriculum_effect": False, "note": "none here"})])
    path = write(tmp_path, yaml.safe_dump(off))
    assert planner_view(str(path)).targets == {v1["codes"][0]["code"]: PlannerTarget(False, (), "none here")}
    with pytest.raises(TaxonomyError, match="not found"):
        planner_view("v99")
