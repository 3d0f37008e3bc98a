"""Providers as objects, for a base URL, key, headers or timeouts of your
own: ``Agent("gpt-4o-mini", provider=OpenAI(base_url=..., api_key=...))``
or ``OpenAI(...).model("gpt-4o-mini")``. A model string
(``"openai:gpt-4o-mini"``) reads the provider's key variable instead."""

from __future__ import annotations

from typing import Any, ClassVar, Dict, Mapping, Optional

from ._core import Model


class Provider:
    """The settings of one provider API; ``model(name)`` builds a model.

    Timeouts and backoffs are in seconds. ``retry`` is a dict
    (``max_retries``, ``initial_backoff``, ``max_backoff``,
    ``max_retry_after``) or ``max_retries`` alone; ``api_version`` and
    ``azure_ad_token`` are Azure's, ``region`` and ``aws_credentials``
    (``access_key_id``, ``secret_access_key``, ``session_token``)
    Bedrock's. The Rust core checks them all when a model is built."""

    name: ClassVar[str] = ""

    def __init__(
        self,
        *,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        api_key_env: Optional[str] = None,
        headers: Optional[Dict[str, str]] = None,
        user_agent: Optional[str] = None,
        connect_timeout: Optional[float] = None,
        first_byte_timeout: Optional[float] = None,
        idle_timeout: Optional[float] = None,
        retry: Optional[Mapping[str, Any]] = None,
        max_retries: Optional[int] = None,
        api_version: Optional[str] = None,
        azure_ad_token: Optional[str] = None,
        region: Optional[str] = None,
        aws_credentials: Optional[Mapping[str, str]] = None,
    ) -> None:
        self.base_url = base_url
        self.settings: Dict[str, Any] = {
            "base_url": base_url,
            "api_key": api_key,
            "api_key_env": api_key_env,
            "headers": dict(headers) if headers else None,
            "user_agent": user_agent,
            "connect_timeout": connect_timeout,
            "first_byte_timeout": first_byte_timeout,
            "idle_timeout": idle_timeout,
            "retry": dict(retry) if retry is not None else None,
            "max_retries": max_retries,
            "api_version": api_version,
            "azure_ad_token": azure_ad_token,
            "region": region,
            "aws_credentials": dict(aws_credentials) if aws_credentials is not None else None,
        }

    def model(self, name: str) -> Model:
        """The model ``name`` of this provider (``"gpt-4o-mini"``; a
        ``provider:`` prefix is allowed). A missing key is a
        ``ConfigError`` here, before any request."""
        prefix = f"{self.name}:"
        if name.startswith(prefix):
            name = name[len(prefix) :]
        return Model.build(self.name, name, {k: v for k, v in self.settings.items() if v is not None})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r})"


class OpenAI(Provider):
    """OpenAI's Chat Completions API (and any server that speaks it)."""

    name = "openai"


class OpenAIResponses(Provider):
    """OpenAI's Responses API."""

    name = "openai-responses"


class Anthropic(Provider):
    """Anthropic's Messages API."""

    name = "anthropic"


class Gemini(Provider):
    """Google's Gemini API."""

    name = "gemini"


class Azure(Provider):
    """Azure OpenAI: ``base_url`` of the resource, ``api_version``, and
    ``api_key`` or ``azure_ad_token``."""

    name = "azure"


class Bedrock(Provider):
    """Amazon Bedrock's Converse API: ``region``, ``aws_credentials``
    (or the ``AWS_*`` variables)."""

    name = "bedrock"


class Mistral(Provider):
    """Mistral's API."""

    name = "mistral"


class Ollama(Provider):
    """Ollama's own API (a local server)."""

    name = "ollama"
