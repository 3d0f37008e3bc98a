"""A Rust panic becomes a Python exception, never an abort: in a call, in
a future waited for with the GIL released, in a future awaited from
asyncio. The interpreter goes on afterwards."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from parlance import _core


def panic(how: str) -> Any:
    return _core._panic_for_tests(how)


@pytest.mark.parametrize("how", ["sync", "blocking"])
def test_a_panic_in_a_call_is_an_exception(how: str) -> None:
    with pytest.raises(BaseException) as e:
        panic(how)
    assert "deliberate panic" in str(e.value)
    assert type(e.value).__name__ == "PanicException"


def test_a_panic_in_an_awaited_future_is_an_exception() -> None:
    async def main() -> None:
        await panic("async")

    with pytest.raises(BaseException) as e:
        asyncio.run(main())
    assert "a bug in parlance's Rust core: deliberate panic (async)" in str(e.value)
    # Still alive: the next call works.
    from parlance import format

    format.validate([{"role": "user", "content": "hi"}])
