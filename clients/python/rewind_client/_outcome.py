"""Answers of `rewind serve`, as Python values.

Every call answers an Outcome: `Ok(value)` or `Refused(refusal)`. A refusal is an expected "no"
(a session that does not exist, a token already used, a conflict) with a `kind` to switch on and a
message a person can act on; it is a value, never raised. What is not an answer — the server
could not run the call (bad params, an engine error, a cancelled call, a server that went away) —
raises `RewindError`, whose `tag` names it (`InvalidParams`, `StoreError`, `Cancelled`, …).
"""
from dataclasses import dataclass
from typing import Any, Generic, Optional, TypeVar, Union

T = TypeVar("T")


@dataclass(frozen=True)
class Refusal:
    kind: str
    message: str
    details: Any = None


@dataclass(frozen=True)
class Ok(Generic[T]):
    value: T

    @property
    def ok(self) -> bool:
        return True


@dataclass(frozen=True)
class Refused:
    refusal: Refusal

    @property
    def ok(self) -> bool:
        return False


Outcome = Union[Ok[Any], Refused]

# JSON-RPC error codes (docs/server.md, "Errors") and the tag each gets when the server sends none.
_CODE_TAGS = {
    -32700: "ParseError",
    -32600: "InvalidRequest",
    -32601: "MethodNotFound",
    -32602: "InvalidParams",
    -32000: "EngineError",
    -32603: "InternalError",
    -32800: "Cancelled",
}


class RewindError(Exception):
    """The server could not answer the call with an Outcome. `tag` says what kind of failure."""

    def __init__(self, code: int, message: str, tag: str, data: Any = None) -> None:
        super().__init__(f"{tag}: {message}")
        self.code = code
        self.message = message
        self.tag = tag
        self.data = data

    @classmethod
    def from_rpc(cls, error: Any) -> "RewindError":
        code = error.get("code", -32603) if isinstance(error, dict) else -32603
        message = str(error.get("message", "")) if isinstance(error, dict) else str(error)
        data = error.get("data") if isinstance(error, dict) else None
        tag: Optional[str] = data.get("tag") if isinstance(data, dict) and isinstance(data.get("tag"), str) else None
        return cls(code, message, tag or _CODE_TAGS.get(code, "RpcError"), data)


def outcome_of(result: Any) -> Outcome:
    """A JSON-RPC result (the encoded Outcome) as `Ok` or `Refused`."""
    if isinstance(result, dict) and result.get("ok") is True:
        return Ok(result.get("value"))
    if isinstance(result, dict) and result.get("ok") is False and isinstance(result.get("refusal"), dict):
        r = result["refusal"]
        return Refused(Refusal(str(r.get("kind", "")), str(r.get("message", "")), r.get("details")))
    raise RewindError(-32603, f"the server answered something that is not an Outcome: {result!r}", "BadAnswer")
