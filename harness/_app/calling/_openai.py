"""``openai:MODEL``: a compaction prompt sent to an OpenAI-compatible chat-completions endpoint.

The prompt template (``--prompt FILE``, default ``harness/summarizers/compaction_prompt.txt``)
has three placeholders, filled by plain replacement: ``{budget}`` (tokens),
``{transcript}`` (the messages to compact, one chat message as JSON per line)
and ``{obligations}`` (with ``--protocol rich``, the tagged obligations, one
fact as JSON per line; empty otherwise). The whole text is sent as one user
message; the answer's text is the post-compaction context. The API key is
read from the environment (``OPENAI_API_KEY``, or the variable ``--api-key-env``
names) at each request and sent only in the ``Authorization`` header; it is
never part of a cache key, and redacted from everything written.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from harness._base._codec import fact_to_dict
from harness._base._errors import InfraError, SpecError
from harness._base._wire import Usage, usage_count
from harness._app.calling._remote import Endpoint, JsonPoster
from harness._app.calling._transport import Answer, Loaded, Setup, checked_answer

__all__ = ["OPENAI_BASE_URL", "API_KEY_ENV", "DEFAULT_PROMPT", "OpenAITransport", "render_prompt"]

OPENAI_BASE_URL = "https://api.openai.com/v1"
API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_PROMPT = Path(__file__).resolve().parents[2] / "summarizers" / "compaction_prompt.txt"
_MAX_PROMPT_BYTES = 1024 * 1024


def render_prompt(template: str, request, protocol: str) -> str:
    """The template with ``{budget}``, ``{transcript}`` and ``{obligations}`` filled in."""
    transcript = "\n".join(json.dumps(m, ensure_ascii=False) for m in request.messages())
    obligations = "\n".join(json.dumps(fact_to_dict(f), ensure_ascii=False) for f in request.tags) \
        if protocol == "rich" else ""
    return (template.replace("{budget}", str(request.budget)).replace("{obligations}", obligations)
            .replace("{transcript}", transcript))


class OpenAITransport:
    """One chat completion per compaction; usage figures are collected from each answer."""

    def __init__(self, spec: str, setup: Setup):
        self._spec = spec
        self._setup = setup
        self.model = spec.removeprefix("openai:")
        if not self.model:
            raise SpecError(f"--summarizer {spec!r}: expected openai:MODEL (for example openai:gpt-4o-mini)")
        self.base_url = (setup.base_url or OPENAI_BASE_URL).rstrip("/")
        self._endpoint = Endpoint.parse(self.base_url + "/chat/completions", option="--base-url")
        self._key_env = setup.api_key_env or API_KEY_ENV
        self._prompt_file = Path(setup.prompt) if setup.prompt else DEFAULT_PROMPT
        self._template = _read_prompt(self._prompt_file, given=setup.prompt is not None)
        self._poster = JsonPoster(self._endpoint, retries=setup.retries, redactor=setup.redactor)
        self.protocol = setup.protocol or setup.recorded_protocol or "messages"

    pid = None

    def load(self) -> Loaded:
        if self.base_url == OPENAI_BASE_URL and not os.environ.get(self._key_env):
            raise SpecError(f"--summarizer {self._spec!r}: set {self._key_env} to your API key (it is read from the "
                            f"environment only, and never written anywhere)")
        self._endpoint.check_reachable(self._setup.load_timeout, option=f"--base-url {self.base_url!r}")
        material = json.dumps({"model": self.model, "base_url": self.base_url, "prompt": self._template})
        return Loaded(self.protocol, hashlib.sha256(material.encode()).hexdigest())

    def call(self, request, timeout: float) -> Answer:
        body = {"model": self.model,
                "messages": [{"role": "user", "content": render_prompt(self._template, request, self.protocol)}]}
        key = os.environ.get(self._key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        data, retries = self._poster.post(body, timeout, headers)
        text, usage = _completion(data)
        return checked_answer({"messages": text}, self._setup, usage=usage, retries=retries)

    def close(self) -> None:
        self._poster.close()


def _read_prompt(path: Path, *, given: bool) -> str:
    option = f"--prompt {str(path)!r}" if given else f"the default prompt {str(path)!r}"
    try:
        if path.stat().st_size > _MAX_PROMPT_BYTES:
            raise SpecError(f"{option}: larger than {_MAX_PROMPT_BYTES:,} bytes; is it the right file?")
        template = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(f"{option}: no such file") from None
    except UnicodeDecodeError:
        raise SpecError(f"{option}: not UTF-8 text") from None
    except OSError as exc:
        raise SpecError(f"{option}: cannot read it ({exc.strerror or exc})") from None
    if "{transcript}" not in template:
        raise SpecError(f"{option}: has no {{transcript}} placeholder, so the model would never see the "
                        f"conversation (placeholders: {{transcript}}, {{budget}}, {{obligations}})")
    return template


def _completion(data) -> tuple[str, Usage | None]:
    """The answer's text and usage; anything but a chat completion with text is ``malformed``."""
    try:
        message = data["choices"][0]["message"]
        text = message["content"]
    except (KeyError, IndexError, TypeError):
        raise InfraError("malformed", "expected a chat completion with choices[0].message.content, got "
                                      f"{_excerpt(data)}") from None
    if not isinstance(text, str):
        refusal = message.get("refusal") if isinstance(message, dict) else None
        raise InfraError("malformed", f"choices[0].message.content is {type(text).__name__}, not text"
                                      + (f" (the model refused: {str(refusal)[:200]})" if refusal else ""))
    raw = data.get("usage") if isinstance(data, dict) else None
    usage = None
    if isinstance(raw, dict):
        usage = Usage(usage_count(raw.get("prompt_tokens")), usage_count(raw.get("completion_tokens")))
    return text, usage


def _excerpt(data) -> str:
    try:
        return json.dumps(data)[:300]
    except RecursionError:  # json.loads read it, but the encoder, called deeper, runs out of stack
        return f"a {type(data).__name__} nested too deeply to show"
