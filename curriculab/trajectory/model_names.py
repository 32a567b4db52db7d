"""One model, one name: the same model reached through different providers is reported once.

`claude-haiku-4-5-20251001` (Anthropic), `anthropic/claude-haiku-4-5-20251001` (LiteLLM) and
`us.anthropic.claude-haiku-4-5-20251001-v1:0` (Bedrock) are one model. The store keeps the raw
name (`trajectories.model_raw`) and reports by the canonical one (`trajectories.model`).
Provider aliases (`claude-sonnet-4-0` is `claude-sonnet-4-20250514`) come from the shipped table
`model_aliases.yaml`. Names no rule can join (an Azure deployment name, a fine-tune's id) go in a
user alias file, which overrides the shipped table.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

MODEL_ALIASES_ENV = "CURRICULAB_MODEL_ALIASES"
"""Environment variable naming a YAML file `{raw name: canonical name}` applied before the rules."""

_BEDROCK_REGION = re.compile(r"^(us|eu|apac|ap|ca|global|us-gov)\.")
_BEDROCK_VENDOR = re.compile(r"^(anthropic|meta|amazon|mistral|cohere|ai21|deepseek|openai|qwen|writer)\.")
_BEDROCK_VERSION = re.compile(r"-v\d+(:\d+)?$")
_VERTEX_DATE = re.compile(r"@(\d{8})$")


SHIPPED_ALIASES = Path(__file__).with_name("model_aliases.yaml")
"""Provider aliases (`claude-sonnet-4-0`) and leaderboard spellings (`claude-4-sonnet`) to dated ids."""


@functools.lru_cache(maxsize=1)
def _shipped() -> dict[str, str]:
    import yaml

    return {str(k): str(v) for k, v in (yaml.safe_load(SHIPPED_ALIASES.read_text(encoding="utf-8")) or {}).items()}


@functools.lru_cache(maxsize=4)
def _aliases(path: str | None) -> dict[str, str]:
    if not path:
        return _shipped()
    import yaml

    try:
        doc = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(
            f"${MODEL_ALIASES_ENV} = {path}: cannot read it as a model alias file ({exc}). "
            "Write it as YAML `raw name: canonical name`, or unset the variable"
        ) from None
    if not isinstance(doc, dict):
        raise ValueError(f"${MODEL_ALIASES_ENV} = {path}: expected a mapping `raw name: canonical name`. Fix the file")
    return {**_shipped(), **{str(k): str(v) for k, v in doc.items()}}


@functools.lru_cache(maxsize=65536)
def _canonical(raw: str, aliases_path: str | None) -> str:
    aliases = _aliases(aliases_path)
    if raw in aliases:
        return aliases[raw]
    name = raw.strip().rsplit("/", 1)[-1]  # provider routes: anthropic/…, openrouter/google/…, models/…
    if _BEDROCK_VENDOR.match(_BEDROCK_REGION.sub("", name)):  # Bedrock ids: [region.]vendor.model-vN:M
        name = _BEDROCK_VERSION.sub("", _BEDROCK_VENDOR.sub("", _BEDROCK_REGION.sub("", name)))
    name = _VERTEX_DATE.sub(r"-\1", name)  # Vertex: claude-sonnet-4@20250514
    return aliases.get(name, name)


def canonical_model(raw: str | None) -> str | None:
    """The canonical name of a model as a source names it (None stays None)."""
    if raw is None or not raw.strip():
        return None
    return _canonical(raw, os.environ.get(MODEL_ALIASES_ENV))
