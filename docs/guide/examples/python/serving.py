# A client of `parlance serve` (the configuration above): one run of the
# "support" agent, then the same thread again. Plain HTTP and JSON; the
# answer is the same canonical response as a run in-process.
import json
import os
import urllib.request
from typing import Any

from parlance import Response

BASE = os.environ.get("PARLANCE_URL", "http://127.0.0.1:8080")


def post(path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        BASE + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request) as reply:
        return json.load(reply)


thread = post("/v1/threads", {"metadata": {"customer": "ada"}})["id"]
r = Response.from_dict(post("/v1/runs", {"agent": "support", "input": "Where is A-1001?", "thread_id": thread}))
print(r.status, r.text)
again = post("/v1/runs", {"agent": "support", "input": "Thanks!", "thread_id": thread})
print(again["status"], again["output"])
