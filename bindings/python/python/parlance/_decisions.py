"""Decisions on calls that wait for approval: ``approve``, ``edit``,
``reject``, ``answer``.

A decision names the call by its request (``paused.pending[0]``) or by its
id; the request's digest goes with it, and the agent checks it against the
model's call before anything runs (a decision made for other arguments is
refused).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Union

from ._core import ApprovalRequest

Target = Union[ApprovalRequest, str]
DecisionKind = Literal["approved", "edited", "rejected", "answered"]


@dataclass(frozen=True)
class Decision:
    """One decision on one waiting call."""

    tool_call_id: str
    decision: DecisionKind
    digest: Optional[str] = None
    arguments: Optional[Dict[str, Any]] = None
    reason: Optional[str] = None
    content: Optional[List[Dict[str, Any]]] = None

    def to_dict(self, pending: Sequence[ApprovalRequest] = ()) -> Dict[str, Any]:
        """The canonical dict; a missing digest is the pending request's."""
        digest = self.digest
        if digest is None:
            # A call that is not pending has no digest: the agent's check
            # then says so ("no pending call has id ...", or already decided).
            digest = next((r.digest for r in pending if r.tool_call_id == self.tool_call_id), "none")
        out: Dict[str, Any] = {"tool_call_id": self.tool_call_id, "digest": digest, "decision": self.decision}
        if self.arguments is not None:
            out["arguments"] = self.arguments
        if self.reason is not None:
            out["reason"] = self.reason
        if self.content is not None:
            out["content"] = self.content
        return out


def _target(call: Target) -> tuple[str, Optional[str]]:
    if isinstance(call, ApprovalRequest):
        return call.tool_call_id, call.digest
    if isinstance(call, str):
        return call, None
    raise TypeError(f"a decision names an ApprovalRequest or a call id, got {type(call).__name__}")


def approve(call: Target) -> Decision:
    """The call runs as the model asked."""
    call_id, digest = _target(call)
    return Decision(call_id, "approved", digest)


def edit(call: Target, arguments: Mapping[str, Any]) -> Decision:
    """The call runs with these arguments instead (checked against the
    tool's schema again; invalid ones are refused with a ``DecisionError``)."""
    call_id, digest = _target(call)
    return Decision(call_id, "edited", digest, arguments=dict(arguments))


def reject(call: Target, reason: Optional[str] = None) -> Decision:
    """The call does not run; the model reads the reason."""
    call_id, digest = _target(call)
    return Decision(call_id, "rejected", digest, reason=reason)


def answer(call: Target, content: Union[str, List[Dict[str, Any]]]) -> Decision:
    """The call does not run; the reviewer's content is its result."""
    call_id, digest = _target(call)
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    return Decision(call_id, "answered", digest, content=blocks)


def to_dicts(decisions: Sequence[Union[Decision, Mapping[str, Any]]], pending: Sequence[ApprovalRequest]) -> List[Any]:
    """Decisions as canonical dicts (dicts pass as they are)."""
    out: List[Any] = []
    for d in decisions:
        out.append(d.to_dict(pending) if isinstance(d, Decision) else dict(d))
    return out
