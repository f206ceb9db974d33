from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class Seat(_message.Message):
    __slots__ = ("seat", "player", "bot", "name")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    seat: int
    player: str
    bot: bool
    name: str
    def __init__(self, seat: _Optional[int] = ..., player: _Optional[str] = ..., bot: _Optional[bool] = ..., name: _Optional[str] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("game_id", "id", "seat", "kind", "options", "min", "max", "declinable", "info_json", "version", "deadline_ms")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    MIN_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    DECLINABLE_FIELD_NUMBER: _ClassVar[int]
    INFO_JSON_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    id: int
    seat: int
    kind: str
    options: _containers.RepeatedScalarFieldContainer[str]
    min: int
    max: int
    declinable: bool
    info_json: str
    version: int
    deadline_ms: int
    def __init__(self, game_id: _Optional[str] = ..., id: _Optional[int] = ..., seat: _Optional[int] = ..., kind: _Optional[str] = ..., options: _Optional[_Iterable[str]] = ..., min: _Optional[int] = ..., max: _Optional[int] = ..., declinable: _Optional[bool] = ..., info_json: _Optional[str] = ..., version: _Optional[int] = ..., deadline_ms: _Optional[int] = ...) -> None: ...

class Answer(_message.Message):
    __slots__ = ("decision_id", "seat", "picks", "auto")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PICKS_FIELD_NUMBER: _ClassVar[int]
    AUTO_FIELD_NUMBER: _ClassVar[int]
    decision_id: int
    seat: int
    picks: _containers.RepeatedScalarFieldContainer[str]
    auto: bool
    def __init__(self, decision_id: _Optional[int] = ..., seat: _Optional[int] = ..., picks: _Optional[_Iterable[str]] = ..., auto: _Optional[bool] = ...) -> None: ...

class EventEnvelope(_message.Message):
    __slots__ = ("seq", "hash", "json")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    HASH_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    seq: int
    hash: bytes
    json: str
    def __init__(self, seq: _Optional[int] = ..., hash: _Optional[bytes] = ..., json: _Optional[str] = ...) -> None: ...
