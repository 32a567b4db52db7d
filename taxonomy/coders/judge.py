"""An LLM judge over any OpenAI-compatible chat endpoint (a local vLLM server, a hosted API).

The taxonomy rubric is the first message of every request, byte for byte the same, so servers
that cache prompt prefixes (vLLM's prefix caching, hosted automatic caching) reuse it. The
answer must be JSON citing step ids; anything that names an unknown code, cites a step the
trajectory does not have, or claims a code without evidence is rejected, not stored.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from curriculab.taxonomy.coders.verifier import COMPLETION_CODES, TRIAL_CODES
from curriculab.taxonomy.taxonomy import Taxonomy
from curriculab.trajectory.errors import InputError

JUDGED_CODES_EXCLUDE = ("harness_failure", *COMPLETION_CODES, *TRIAL_CODES)
"""Codes the judge is not asked about: harness faults are known from run metadata, and the
verifier-derived codes (v3 on) follow exactly from the tests, not from reading behaviour."""


@dataclass
class JudgeConfig:
    """Where and how to ask the judge."""

    base_url: str
    """OpenAI-compatible base URL ending in /v1, e.g. http://localhost:8000/v1."""
    model: str
    """Model name the endpoint serves."""
    api_key: str | None = None
    """Bearer token, if the endpoint needs one."""
    timeout_s: float = 60.0
    """Seconds to wait for one response."""
    max_retries: int = 3
    """Further attempts after no answer (a refused connection, a timeout), a 429/5xx, or an answer that is not JSON."""
    backoff_s: float = 1.0
    """Wait before the first retry; doubles each time."""
    concurrency: int = 4
    """Trajectories judged at once."""
    temperature: float = 0.0
    """Sampling temperature; 0 for repeatable judgements."""

    def __post_init__(self) -> None:
        if not re.match(r"^https?://", self.base_url or ""):
            raise InputError(f"base_url {self.base_url!r} is not an http(s) URL. Pass e.g. http://localhost:8000/v1")
        self.base_url = self.base_url.rstrip("/")
        if not self.model:
            raise InputError("model is empty. Pass the model name the endpoint serves (see its /v1/models)")
        if self.timeout_s <= 0:
            raise InputError(f"timeout_s is {self.timeout_s}. Use a positive number of seconds")
        if self.max_retries < 0:
            raise InputError(f"max_retries is {self.max_retries}. Use 0 or more")
        if self.concurrency < 1:
            raise InputError(f"concurrency is {self.concurrency}. Use 1 or more")


@dataclass
class Finding:
    """One code the judge says is present, with its evidence."""

    code: str
    """Taxonomy code."""
    evidence_steps: list[int]
    """Step indices it cites."""
    rationale: str
    """Its one-line reason."""
    confidence: float | None
    """Its confidence in [0, 1], if given."""


@dataclass
class Verdict:
    """The judge's answer for one trajectory, after validation."""

    present: list[Finding] = field(default_factory=list)
    """Validated findings of present codes."""
    absent: list[str] = field(default_factory=list)
    """Codes it judged absent."""
    rejected: list[str] = field(default_factory=list)
    """Parts of the answer refused, with the reason."""
    error: str | None = None
    """Set when no usable answer came back at all."""


_RUBRICS: dict[str, str] = {}


def rubric(taxonomy: Taxonomy) -> str:
    """The static system prompt: every judged code with its definition and examples (built once)."""
    key = taxonomy.model_dump_json()
    if key not in _RUBRICS:
        _RUBRICS[key] = _build_rubric(taxonomy)
    return _RUBRICS[key]


def _build_rubric(taxonomy: Taxonomy) -> str:
    parts = [
        f"You code coding-agent trajectories against a fixed failure taxonomy ({taxonomy.version}).",
        "For every code below decide whether the trajectory shows it. Cite the [step] numbers that show it.",
        'Answer with one JSON object only: {"codes": [{"code": "<code>", "present": true|false, '
        '"evidence_steps": [<step numbers>], "rationale": "<one line>", "confidence": <0..1>}]}, one entry per code.',
        "",
    ]
    for code in taxonomy.codes:
        if code.code in JUDGED_CODES_EXCLUDE:
            continue
        parts.append(f"## {code.code}: {code.name}\n{code.definition}")
        parts.extend(f"- has it: {e}" for e in code.positive_examples)
        parts.extend(f"- does not: {e}" for e in code.negative_examples)
        parts.append("")
    return "\n".join(parts)


def judged_codes(taxonomy: Taxonomy) -> list[str]:
    return [c for c in taxonomy.code_names if c not in JUDGED_CODES_EXCLUDE]


def messages(taxonomy: Taxonomy, trajectory_id: str, rendered: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": rubric(taxonomy)},
        {"role": "user", "content": f"Trajectory {trajectory_id}:\n{rendered}"},
    ]


def _post(config: JudgeConfig, payload: dict[str, Any]) -> str:
    headers = {"Content-Type": "application/json"}
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    request = urllib.request.Request(
        f"{config.base_url}/chat/completions", data=json.dumps(payload).encode(), headers=headers, method="POST"
    )
    with urllib.request.urlopen(request, timeout=config.timeout_s) as response:
        body = json.loads(response.read())
    return body["choices"][0]["message"]["content"]


def _json_object(text: str) -> dict[str, Any]:
    fenced = re.search(r"```(?:json)?\s*(\{.*\})\s*```", text, re.S)
    doc = json.loads(fenced.group(1) if fenced else text)
    if not isinstance(doc, dict) or not isinstance(doc.get("codes"), list):
        raise ValueError('the answer has no "codes" list')
    return doc


def validate(doc: dict[str, Any], taxonomy: Taxonomy, step_ids: set[int]) -> Verdict:
    """Keep what is well-formed and grounded; reject the rest with a reason."""
    verdict = Verdict()
    allowed = set(judged_codes(taxonomy))
    seen: set[str] = set()
    for k, item in enumerate(doc["codes"]):
        if not isinstance(item, dict):
            verdict.rejected.append(f"codes[{k}]: not an object")
            continue
        code = item.get("code")
        if code not in allowed:
            verdict.rejected.append(f"codes[{k}]: unknown code {code!r}")
            continue
        if code in seen:
            verdict.rejected.append(f"codes[{k}]: {code} answered twice")
            continue
        present = item.get("present")
        if not isinstance(present, bool):
            verdict.rejected.append(f"codes[{k}]: {code}: present is {present!r}, not true/false")
            continue
        seen.add(code)
        if not present:
            verdict.absent.append(code)
            continue
        steps = item.get("evidence_steps")
        if (
            not isinstance(steps, list)
            or not steps
            or not all(isinstance(s, int) and not isinstance(s, bool) for s in steps)
        ):
            verdict.rejected.append(f"codes[{k}]: {code}: present without evidence_steps")
            seen.discard(code)
            continue
        unknown = [s for s in steps if s not in step_ids]
        if unknown:
            verdict.rejected.append(f"codes[{k}]: {code}: cites step(s) {unknown} the trajectory does not have")
            seen.discard(code)
            continue
        confidence = item.get("confidence")
        confidence = float(confidence) if isinstance(confidence, (int, float)) and 0 <= confidence <= 1 else None
        verdict.present.append(
            Finding(
                code=code,
                evidence_steps=sorted(set(steps)),
                rationale=str(item.get("rationale") or "")[:500],
                confidence=confidence,
            )
        )
    return verdict


def judge(
    config: JudgeConfig, taxonomy: Taxonomy, trajectory_id: str, rendered: str, step_ids: Sequence[int]
) -> Verdict:
    """Ask once (with retries) and validate the answer."""
    payload = {
        "model": config.model,
        "messages": messages(taxonomy, trajectory_id, rendered),
        "temperature": config.temperature,
        "response_format": {"type": "json_object"},
    }
    last_problem = ""
    for attempt in range(config.max_retries + 1):
        if attempt:
            time.sleep(config.backoff_s * 2 ** (attempt - 1))
        try:
            doc = _json_object(_post(config, payload))
        except urllib.error.HTTPError as exc:
            last_problem = f"HTTP {exc.code}"
            if exc.code not in (408, 409, 429) and exc.code < 500:
                break  # a request the server refuses will not succeed on retry
            continue
        except (TimeoutError, urllib.error.URLError, ConnectionError) as exc:
            last_problem = f"no answer ({getattr(exc, 'reason', exc)})"
            continue
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            last_problem = f"unusable answer ({exc})"
            continue
        return validate(doc, taxonomy, set(step_ids))
    return Verdict(error=f"{last_problem} after {attempt + 1} attempt(s)")
