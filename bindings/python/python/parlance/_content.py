"""``Content``: what a tool returns when the model should read more than
text or JSON — images, audio, files, several blocks — as canonical
content blocks (``docs/format.md``)."""

from __future__ import annotations

import base64
from typing import Any, Dict, List, Mapping, Optional, Union

Part = Union[str, "Content", Mapping[str, Any]]


def _data(data: Union[bytes, bytearray, memoryview, str]) -> str:
    if isinstance(data, str):
        return data  # already base64
    return base64.b64encode(bytes(data)).decode("ascii")


def _media(
    data: Union[bytes, bytearray, memoryview, str, None],
    url: Optional[str],
    media_type: Optional[str],
    **extra: Optional[str],
) -> Dict[str, Any]:
    m: Dict[str, Any] = {}
    if data is not None:
        m["data"] = _data(data)
    if url is not None:
        m["url"] = url
    if media_type is not None:
        m["media_type"] = media_type
    m.update({k: v for k, v in extra.items() if v is not None})
    return m


class Content:
    """Content blocks a tool returns: ``Content("The chart:",
    Content.image(png, "image/png"))``. Parts are strings (text blocks),
    other ``Content``s, or canonical block dicts; the Rust core checks each
    block (a malformed one fails the call, naming its path)."""

    __slots__ = ("blocks",)

    def __init__(self, *parts: Part) -> None:
        self.blocks: List[Dict[str, Any]] = []
        for p in parts:
            if isinstance(p, str):
                self.blocks.append({"type": "text", "text": p})
            elif isinstance(p, Content):
                self.blocks.extend(p.blocks)
            else:
                self.blocks.append(dict(p))

    @staticmethod
    def text(text: str) -> Content:
        """A text block."""
        return Content(text)

    @staticmethod
    def image(
        data: Union[bytes, bytearray, memoryview, str, None] = None,
        media_type: Optional[str] = None,
        *,
        url: Optional[str] = None,
        detail: Optional[str] = None,
    ) -> Content:
        """An image: its bytes (or base64 text) with ``media_type``, or a ``url``."""
        return Content({"type": "image", "image": _media(data, url, media_type, detail=detail)})

    @staticmethod
    def audio(
        data: Union[bytes, bytearray, memoryview, str, None] = None,
        media_type: Optional[str] = None,
        *,
        url: Optional[str] = None,
    ) -> Content:
        """An audio clip: its bytes with ``media_type`` (``audio/wav``...), or a ``url``."""
        return Content({"type": "audio", "audio": _media(data, url, media_type)})

    @staticmethod
    def file(
        data: Union[bytes, bytearray, memoryview, str, None] = None,
        media_type: Optional[str] = None,
        *,
        url: Optional[str] = None,
        filename: Optional[str] = None,
    ) -> Content:
        """A document or other file (``application/pdf``...)."""
        return Content({"type": "file", "file": _media(data, url, media_type, filename=filename)})

    @staticmethod
    def json(value: Any) -> Content:
        """A JSON block."""
        return Content({"type": "json", "json": value})

    def __repr__(self) -> str:
        kinds = ", ".join(str(b.get("type")) for b in self.blocks)
        return f"Content({kinds})"
