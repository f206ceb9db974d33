from services.proto_gen.arena.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListGamesRequest(_message.Message):
    __slots__ = ("ruleset", "player", "limit", "page_token")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ruleset: str
    player: str
    limit: int
    page_token: str
    def __init__(self, ruleset: _Optional[str] = ..., player: _Optional[str] = ..., limit: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class GameSummary(_message.Message):
    __slots__ = ("game_id", "ruleset", "seats", "start_ms", "end_ms", "winners", "rules_version", "finished")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    START_MS_FIELD_NUMBER: _ClassVar[int]
    END_MS_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    RULES_VERSION_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    ruleset: str
    seats: _containers.RepeatedCompositeFieldContainer[_common_pb2.Seat]
    start_ms: int
    end_ms: int
    winners: _containers.RepeatedScalarFieldContainer[int]
    rules_version: str
    finished: bool
    def __init__(self, game_id: _Optional[str] = ..., ruleset: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[_common_pb2.Seat, _Mapping]]] = ..., start_ms: _Optional[int] = ..., end_ms: _Optional[int] = ..., winners: _Optional[_Iterable[int]] = ..., rules_version: _Optional[str] = ..., finished: _Optional[bool] = ...) -> None: ...

class ListGamesResponse(_message.Message):
    __slots__ = ("games", "next_page_token")
    GAMES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedCompositeFieldContainer[GameSummary]
    next_page_token: str
    def __init__(self, games: _Optional[_Iterable[_Union[GameSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetGameRequest(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class GetEventsRequest(_message.Message):
    __slots__ = ("game_id", "from_seq", "upto_seq", "viewer")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    UPTO_SEQ_FIELD_NUMBER: _ClassVar[int]
    VIEWER_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    from_seq: int
    upto_seq: int
    viewer: int
    def __init__(self, game_id: _Optional[str] = ..., from_seq: _Optional[int] = ..., upto_seq: _Optional[int] = ..., viewer: _Optional[int] = ...) -> None: ...

class GetEventsResponse(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_common_pb2.EventEnvelope]
    def __init__(self, events: _Optional[_Iterable[_Union[_common_pb2.EventEnvelope, _Mapping]]] = ...) -> None: ...

class StreamGameRequest(_message.Message):
    __slots__ = ("game_id", "from_seq", "viewer", "delay_ms")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    VIEWER_FIELD_NUMBER: _ClassVar[int]
    DELAY_MS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    from_seq: int
    viewer: int
    delay_ms: int
    def __init__(self, game_id: _Optional[str] = ..., from_seq: _Optional[int] = ..., viewer: _Optional[int] = ..., delay_ms: _Optional[int] = ...) -> None: ...

class VerifyRequest(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class VerifyResponse(_message.Message):
    __slots__ = ("ok", "entries", "divergence_seq", "divergence_kind", "reason")
    OK_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    DIVERGENCE_SEQ_FIELD_NUMBER: _ClassVar[int]
    DIVERGENCE_KIND_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ok: bool
    entries: int
    divergence_seq: int
    divergence_kind: str
    reason: str
    def __init__(self, ok: _Optional[bool] = ..., entries: _Optional[int] = ..., divergence_seq: _Optional[int] = ..., divergence_kind: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...
