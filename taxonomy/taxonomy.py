"""Load and validate a versioned failure taxonomy (`taxonomy/v1.yaml`, ...).

A later version names the version it replaces (`maps_from`) and maps every one of its codes to
one or more new codes, so labels and codes stored under the old version stay usable.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from curriculab.taxonomy.errors import TaxonomyError
from curriculab.taxonomy.versions import NEWEST, PACKAGE_DIR, read_yaml
from curriculab.trajectory.validation import first_problem
from curriculab.trajectory.vocabulary import TIERS, Tier

V1_CODES: tuple[str, ...] = (
    "skipped_verification",
    "misread_requirements",
    "no_plan_revision",
    "tool_misuse",
    "redundant_rework",
    "decoy_susceptibility",
    "contract_inconsistency",
    "reward_hacking",
    "harness_failure",
)
"""The pinned v1 codes, in the order taxonomy/v1.yaml lists them."""


class RemediationTarget(BaseModel):
    """What the planner does about a code: which test tiers exercise it, which problems address it."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    tiers: list[Tier] = Field(default_factory=list)
    """Test tiers whose tests exercise the missing skill; the planner shifts α and w toward them."""
    task_filters: list[str] = Field(default_factory=list)
    """Problems that address it: `has_tier:<tier>` (the problem has tests of that tier) or
    `min_tests:<n>` (at least n tests); the task mix favours them."""
    reward_term: Literal["format"] | None = None
    """A reward term the plan adds instead of (or beside) a tier shift: `format` pays for one
    closed code block that compiles and defines the entry point with the prompt's signature."""
    curriculum_effect: bool = True
    """False where no curriculum helps (verifier or infrastructure work): the plan says so."""
    note: str = ""
    """What the remediation is, in words."""

    @model_validator(mode="after")
    def _filters_known(self) -> RemediationTarget:
        for f in self.task_filters:
            kind, _, value = f.partition(":")
            if not ((kind == "has_tier" and value in TIERS) or (kind == "min_tests" and value.isdigit())):
                raise ValueError(f"task filter {f!r} is not has_tier:<tier> or min_tests:<n>")
        if self.curriculum_effect and not self.tiers and self.reward_term is None:
            raise ValueError("a target with a curriculum effect names at least one tier or a reward_term")
        return self


class Code(BaseModel):
    """One failure code."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    code: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    """Stable identifier, snake_case."""
    name: str
    """Human-readable name."""
    tier: str
    """foundational, intermediate, expert, efficiency or infra: how basic the missing skill is."""
    stage: str
    """planning, execution, verification, efficiency or infra: where in the work it shows."""
    definition: str = Field(min_length=20)
    """What a coder must see in the trajectory to assign the code."""
    positive_examples: list[str] = Field(min_length=1)
    """Short cases that have the code."""
    negative_examples: list[str] = Field(min_length=1)
    """Near misses that do not."""
    remediation: str = Field(min_length=10)
    """The kind of training data that addresses it."""
    target: RemediationTarget | None = None
    """The machine-readable remediation the planner uses (None: the planner ignores the code)."""


class Taxonomy(BaseModel):
    """A versioned set of failure codes."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    version: str = Field(pattern=r"^v\d+$")
    """Version label, `v1`, `v2`, ..."""
    description: str = ""
    """What the taxonomy is for."""
    tiers: list[str]
    """Allowed values of `Code.tier`."""
    stages: list[str]
    """Allowed values of `Code.stage`."""
    codes: list[Code] = Field(min_length=1)
    """The codes, in a stable order."""
    maps_from: str | None = None
    """The version this one replaces, if any."""
    mapping: dict[str, list[str]] = Field(default_factory=dict)
    """For each code of `maps_from`, the code(s) of this version it becomes."""
    redefined: list[str] = Field(default_factory=list)
    """Codes of `maps_from` whose meaning this version changed: stored codes still map, but a
    label judged the old meaning, so labels of these codes do not carry over."""

    @model_validator(mode="after")
    def _consistent(self) -> Taxonomy:
        seen: set[str] = set()
        for k, code in enumerate(self.codes):
            if code.code in seen:
                raise ValueError(f"codes[{k}].code: {code.code!r} appears twice; each code must be unique")
            seen.add(code.code)
            if code.tier not in self.tiers:
                raise ValueError(f"codes[{k}].tier: {code.tier!r} is not one of {self.tiers}")
            if code.stage not in self.stages:
                raise ValueError(f"codes[{k}].stage: {code.stage!r} is not one of {self.stages}")
        for old, new in self.mapping.items():
            unknown = [c for c in new if c not in seen]
            if unknown:
                raise ValueError(f"mapping.{old}: maps to {unknown}, which this version does not define")
        if self.mapping and not self.maps_from:
            raise ValueError("mapping: given without maps_from; name the version it maps from")
        unmapped = [c for c in self.redefined if c not in self.mapping]
        if unmapped:
            raise ValueError(f"redefined: {unmapped} are not codes of mapping; name codes of {self.maps_from}")
        return self

    @property
    def code_names(self) -> list[str]:
        return [c.code for c in self.codes]

    def get(self, code: str) -> Code:
        for c in self.codes:
            if c.code == code:
                return c
        raise KeyError(f"{code!r} is not a {self.version} code; known: {', '.join(self.code_names)}")

    def map_code(self, code: str, from_version: str) -> list[str]:
        """The code(s) of this version that `code` of `from_version` (this one or any older version
        on its `maps_from` chain) becomes."""
        if from_version == self.version:
            return [self.get(code).code]
        if not self.maps_from:
            raise KeyError(f"{self.version} maps from no older version, so not from {from_version}")
        previous = load_taxonomy(self.maps_from)
        return list(dict.fromkeys(new for old in previous.map_code(code, from_version) for new in self.mapping[old]))

    def labels_carried_from(self, from_version: str) -> dict[str, str]:
        """For an older version on the chain, the codes whose labels still judge one code of this
        version: each maps to exactly one code, at every step, and no step redefined it. A split
        code's label says nothing about which part; a redefined code's label judged another meaning."""
        if from_version == self.version:
            return {c: c for c in self.code_names}
        if not self.maps_from:
            return {}
        previous = load_taxonomy(self.maps_from)
        step = {old: new[0] for old, new in self.mapping.items() if len(new) == 1 and old not in self.redefined}
        return {old: step[mid] for old, mid in previous.labels_carried_from(from_version).items() if mid in step}

    @property
    def older_versions(self) -> list[str]:
        """The versions this one maps from, newest first (v3, v2, v1 for v4)."""
        return [self.maps_from, *load_taxonomy(self.maps_from).older_versions] if self.maps_from else []


def load_taxonomy(source: str | Path | None = None) -> Taxonomy:
    """Load a taxonomy by version name (`v4`, from this package; None: the newest) or from a YAML path."""
    source = source or NEWEST
    if isinstance(source, str) and source in _SHIPPED:  # `planner_use` asks hundreds of times per report
        return _SHIPPED[source]
    taxonomy = _load(_path(source))
    if isinstance(source, str) and not source.endswith((".yaml", ".yml")):
        _SHIPPED[source] = taxonomy
    return taxonomy


_SHIPPED: dict[str, Taxonomy] = {}
"""The package's versions by name, once loaded (their files do not change while a process runs)."""


def _path(source: str | Path) -> Path:
    path = (
        PACKAGE_DIR / f"{source}.yaml"
        if isinstance(source, str) and not str(source).endswith((".yaml", ".yml"))
        else Path(source)
    )
    return path.resolve()


@functools.lru_cache(maxsize=16)
def _load(path: Path) -> Taxonomy:
    try:
        doc = read_yaml(path)
    except FileNotFoundError:
        raise TaxonomyError(
            f"taxonomy file {path}: not found. Pass a version shipped with curriculab (v1 … {NEWEST}) or an existing YAML file"
        ) from None
    except yaml.YAMLError as exc:
        raise TaxonomyError(
            f"taxonomy file {path}: invalid YAML ({str(exc).splitlines()[0]}). Fix the file's syntax"
        ) from None
    try:
        taxonomy = Taxonomy.model_validate(doc)
    except ValidationError as exc:
        first = first_problem(exc)
        raise TaxonomyError(
            f"taxonomy file {path}: {first.where or '(root)'}: {first.message}. Fix that entry"
        ) from None
    if taxonomy.maps_from:
        previous = load_taxonomy(taxonomy.maps_from) if taxonomy.maps_from != taxonomy.version else None
        if previous is None:
            raise TaxonomyError(
                f"taxonomy file {path}: maps_from: a version cannot map from itself. Name the previous version"
            )
        missing = [c for c in previous.code_names if c not in taxonomy.mapping]
        if missing:
            raise TaxonomyError(
                f"taxonomy file {path}: mapping: no mapping for {previous.version} code(s) {missing}. "
                f"Map every {previous.version} code to at least one {taxonomy.version} code"
            )
    return taxonomy
