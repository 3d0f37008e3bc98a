"""``Store``: threads in SQLite or PostgreSQL, for runs on threads
(``agent.run(..., store=store, thread_id=...)``)."""

from __future__ import annotations

import asyncio
from typing import Any, Coroutine, Dict, List, Mapping, Optional, TypeVar

from . import _core

T = TypeVar("T")


def _sync(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


class Store:
    """Threads in SQLite (``"sqlite:///parlance.db"``, ``"sqlite::memory:"``)
    or PostgreSQL (``"postgres://..."``). Opening migrates the schema; a
    store that cannot be opened raises ``StoreError`` here."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._core = _core.Store(url)

    async def create_thread(self, metadata: Optional[Mapping[str, Any]] = None) -> str:
        """A new thread (``metadata``: any JSON object); its id."""
        thread: str = await self._core.create_thread(dict(metadata) if metadata is not None else None)
        return thread

    async def messages(self, thread_id: str) -> List[Dict[str, Any]]:
        """The thread's messages, in order, as canonical dicts."""
        messages: List[Dict[str, Any]] = await self._core.messages(thread_id)
        return messages

    async def runs(self, thread_id: str) -> List[Dict[str, Any]]:
        """The thread's runs (id, status, usage, error, output...)."""
        runs: List[Dict[str, Any]] = await self._core.runs(thread_id)
        return runs

    async def delete_thread(self, thread_id: str) -> None:
        """Deletes a thread (refused while a run is active on it)."""
        await self._core.delete_thread(thread_id)

    def create_thread_sync(self, metadata: Optional[Mapping[str, Any]] = None) -> str:
        """``create_thread`` without an event loop."""
        return _sync(self.create_thread(metadata))

    def messages_sync(self, thread_id: str) -> List[Dict[str, Any]]:
        """``messages`` without an event loop."""
        return _sync(self.messages(thread_id))

    def runs_sync(self, thread_id: str) -> List[Dict[str, Any]]:
        """``runs`` without an event loop."""
        return _sync(self.runs(thread_id))

    def delete_thread_sync(self, thread_id: str) -> None:
        """``delete_thread`` without an event loop."""
        _sync(self.delete_thread(thread_id))

    def __repr__(self) -> str:
        return f"Store({self.url!r})"
