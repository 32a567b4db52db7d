"""A chat format in which a model calls the terminal's `bash` tool, for models whose own template
cannot render tool calls (SmolLM2-135M-Instruct's ChatML template drops them; the tiny test model
has none).

ChatML turns (`<|im_start|>role ... <|im_end|>`, what SmolLM2 was trained on) with the tools listed
in the system turn as JSON, a call written as `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`
inside the assistant turn, and the tool's answer as a `tool` turn. TRL needs three things of it
(trl 1.16 `chat_template_utils`): `supports_tool_calling` (a call and its answer survive
rendering), prefix preservation (earlier turns render the same whatever follows: the trainer cuts
the tool's answer out of the rendering), and a response template to parse calls from generated
text. `add_response_schema` only knows TRL's own templates, so `enable_tool_calling` sets ours.
"""

from __future__ import annotations

from typing import Any

TOOL_CALL_OPEN, TOOL_CALL_CLOSE = "<tool_call>", "</tool_call>"
TURN_START, TURN_END = "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = (TURN_START, TURN_END, TOOL_CALL_OPEN, TOOL_CALL_CLOSE)
"""Tokens the format needs whole (the tiny model's tokenizer is trained with them)."""

SYSTEM_PROMPT = (
    "You are an agent working in a Linux terminal. Solve the task by running commands with the bash tool, "
    "check your work, then say you are done."
)
"""The system turn when the conversation brings none."""

TOOL_CHAT_TEMPLATE = (
    "{% if messages and messages[0].role == 'system' %}{% set system = messages[0].content %}"
    "{% else %}{% set system = '" + SYSTEM_PROMPT + "' %}{% endif %}"
    "<|im_start|>system\n{{ system }}"
    "{% if tools %}\n\nTools (JSON schemas):{% for tool in tools %}{{ '\\n' }}{{ tool | tojson }}{% endfor %}"
    "{{ '\\n' }}"
    'Call one as <tool_call>{"name": NAME, "arguments": {...}}</tool_call>.{% endif %}<|im_end|>\n'
    "{% for message in messages %}"
    "{% if message.role == 'system' and loop.first %}"
    "{% elif message.role == 'assistant' %}<|im_start|>assistant\n{% generation %}{{ message.content or '' }}"
    "{% for call in message.tool_calls or [] %}"
    "{% if call.function is defined %}{% set call = call.function %}{% endif %}"
    '<tool_call>{"name": "{{ call.name }}", "arguments": {{ call.arguments | tojson }}}</tool_call>'
    "{% endfor %}<|im_end|>\n{% endgeneration %}"
    "{% else %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""The Jinja chat template (prefix-preserving: a turn's rendering never depends on later turns)."""

RESPONSE_TEMPLATE: dict[str, Any] = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open": TOOL_CALL_OPEN,
            "close_pattern": r"</tool_call>\s*",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"<\|im_end\|>\s*", "content": "text"},
    },
}
"""How transformers' `parse_response` reads an assistant turn back (the new-style response template)."""


def enable_tool_calling(tokenizer: Any) -> Any:
    """Give `tokenizer` the tool-calling template and its response template; the end of a turn is
    its end-of-sequence token (generation stops there). Returns the same tokenizer."""
    tokenizer.chat_template = TOOL_CHAT_TEMPLATE
    tokenizer.response_template = RESPONSE_TEMPLATE
    if TURN_END in tokenizer.get_vocab():
        tokenizer.eos_token = TURN_END
    return tokenizer
