"""A Python client of `rewind serve` (standard library only, Python 3.9+).

    from rewind_client import RewindClient, Ok

    with RewindClient.spawn("/path/to/workspace") as rewind:
        session = rewind.create_session({"title": "my agent", "cwd": "/path/to/workspace"})
        ...

One method per server method (generated from `rewind serve --schema` into `_methods.py`, by
`generate.py`); each answers `Ok(value)` or `Refused(refusal)`, and raises `RewindError` (with a
`tag`) only when the server could not answer.
"""
from ._client import RewindClient
from ._outcome import Ok, Outcome, Refusal, Refused, RewindError

__all__ = ["Ok", "Outcome", "Refusal", "Refused", "RewindClient", "RewindError"]
