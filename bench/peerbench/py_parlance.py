"""peerbench peer for the Python package (parlance-ai, imported as parlance).

Implements the harness's peer contract itself (flags, warm-up, timing,
one ``PEERBENCH_RESULT {json}`` line), so that nothing outside this
repository is imported: one prompt, the model asks for three parallel
``get_order`` calls (arguments validated by the Rust engine), the tools run
on this event loop, the model answers. See README.md beside this file.
"""

from __future__ import annotations

import time

T0 = time.perf_counter()  # before the framework's import

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
from typing import Any, Awaitable, Callable, Dict, List, Optional  # noqa: E402

import parlance  # noqa: E402
from parlance import Agent, OpenAI, tool  # noqa: E402

PROMPT = "What is the status of my orders A-1001, A-1002 and A-1003?"
SYSTEM = "You are an order-status assistant. Use the get_order tool to look up orders."
MODEL = "gpt-4o-mini"
API_KEY = "sk-mock"
EXPECTED = ("A-1001", "A-1002", "A-1003")
STATUSES = {"A-1001": "shipped", "A-1002": "processing", "A-1003": "delivered"}


class Track:
    in_flight = 0
    most = 0
    calls = 0
    sleep_s = 0.0


def build(args: argparse.Namespace) -> Callable[[], Awaitable[str]]:
    @tool(description="Look up one order by its id and return its status.")
    async def get_order(order_id: str) -> Dict[str, Any]:
        Track.calls += 1
        Track.in_flight += 1
        Track.most = max(Track.most, Track.in_flight)
        try:
            if Track.sleep_s:
                await asyncio.sleep(Track.sleep_s)
            return {"order_id": order_id, "status": STATUSES.get(order_id, "unknown"), "total_eur": 42.5, "items": 2}
        finally:
            Track.in_flight -= 1

    agent = Agent(
        MODEL,
        provider=OpenAI(base_url=args.base_url, api_key=API_KEY),
        instructions=SYSTEM,
        tools=[get_order],
    )

    async def run_once() -> str:
        r = await agent.run(PROMPT)
        return r.text

    async def run_streamed() -> str:
        async for event in agent.stream(PROMPT):
            if isinstance(event, parlance.RunCompleted):
                return event.response.text
        raise RuntimeError("the stream ended without RunCompleted")

    return run_streamed if args.stream else run_once


def pct(xs: List[float], p: float) -> Optional[float]:
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100.0 * (len(xs) - 1)))))]


def ok(text: Any) -> bool:
    return isinstance(text, str) and all(i in text for i in EXPECTED)


async def drive(args: argparse.Namespace, run_once: Callable[[], Awaitable[str]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    if args.mode == "import":
        return out
    if args.mode == "once":
        t = time.perf_counter()
        text = await run_once()
        out.update(run_ms=(time.perf_counter() - t) * 1000, ok=ok(text), answer=text,
                   max_tools_in_flight=Track.most, tool_calls=Track.calls)
        return out
    first_ms = None
    for i in range(max(1, args.warmup)):
        t = time.perf_counter()
        text = await run_once()
        if i == 0:
            first_ms = (time.perf_counter() - t) * 1000
            if not ok(text):
                raise SystemExit(f"peer answer check failed: {text!r}")
    Track.most = 0
    Track.calls = 0
    lat: List[float] = []
    oks = 0

    async def one() -> None:
        nonlocal oks
        t = time.perf_counter()
        text = await run_once()
        lat.append(time.perf_counter() - t)
        oks += ok(text)

    cpu0, t0 = time.process_time(), time.perf_counter()
    if args.mode == "seq":
        for _ in range(args.runs):
            await one()
    else:
        sem = asyncio.Semaphore(args.concurrency)

        async def guarded() -> None:
            async with sem:
                await one()

        await asyncio.gather(*(guarded() for _ in range(args.runs)))
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    ms = [x * 1000 for x in lat]
    out.update(
        runs=args.runs, ok_runs=oks, first_run_ms=first_ms, wall_s=wall, cpu_s=cpu,
        runs_per_s=args.runs / wall, per_run_ms=wall / args.runs * 1000, cpu_per_run_ms=cpu / args.runs * 1000,
        lat_ms={"mean": sum(ms) / len(ms), "p50": pct(ms, 50), "p90": pct(ms, 90), "p99": pct(ms, 99), "max": max(ms)},
        max_tools_in_flight=Track.most, tool_calls=Track.calls,
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--mode", choices=["import", "once", "seq", "conc"], required=True)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--stream", action="store_true")
    ap.add_argument("--tool-sleep-ms", type=float, default=0.0)
    args = ap.parse_args()
    Track.sleep_s = args.tool_sleep_ms / 1000.0
    run_once = build(args)
    import_s = time.perf_counter() - T0  # import + agent construction
    result = asyncio.run(drive(args, run_once))
    result.update(import_s=import_s, peer="parlance-py", mode=args.mode, stream=args.stream,
                  versions={"parlance-ai": parlance.__version__},
                  self_maxrss_kb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    sys.stdout.write("PEERBENCH_RESULT " + json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
