"""Providers as objects, for a base URL, key, headers or timeouts of your
own: ``Agent("gpt-4o-mini", provider=OpenAI(base_url=..., api_key=...))``
or ``OpenAI(...).model("gpt-4o-mini")``. A model string
(``"openai:gpt-4o-mini"``) reads the provider's key variable instead."""

from __future__ import annotations

from typing import ClassVar, Dict, Optional

from ._core import Model


class Provider:
    """The settings of one provider API; ``model(name)`` builds a model."""

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
    ) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.api_key_env = api_key_env
        self.headers = dict(headers or {})
        self.user_agent = user_agent
        self.connect_timeout = connect_timeout
        self.first_byte_timeout = first_byte_timeout
        self.idle_timeout = idle_timeout

    def model(self, name: str) -> Model:
        """The model ``name`` of this provider (``"gpt-4o-mini"``; a
        ``provider:`` prefix is allowed). A missing key is a
        ``ConfigError`` here, before any request."""
        prefix = f"{self.name}:"
        if name.startswith(prefix):
            name = name[len(prefix):]
        return Model.build(
            self.name,
            name,
            base_url=self.base_url,
            api_key=self.api_key,
            api_key_env=self.api_key_env,
            headers=list(self.headers.items()) or None,
            user_agent=self.user_agent,
            connect_timeout=self.connect_timeout,
            first_byte_timeout=self.first_byte_timeout,
            idle_timeout=self.idle_timeout,
        )

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
