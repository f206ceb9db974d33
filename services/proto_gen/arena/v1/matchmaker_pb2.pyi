from services.proto_gen.arena.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EnqueueRequest(_message.Message):
    __slots__ = ("player", "mode", "players")
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    player: str
    mode: str
    players: int
    def __init__(self, player: _Optional[str] = ..., mode: _Optional[str] = ..., players: _Optional[int] = ...) -> None: ...

class Ticket(_message.Message):
    __slots__ = ("ticket_id", "player", "mode", "players", "enqueued_ms", "expires_ms")
    TICKET_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    ENQUEUED_MS_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_MS_FIELD_NUMBER: _ClassVar[int]
    ticket_id: str
    player: str
    mode: str
    players: int
    enqueued_ms: int
    expires_ms: int
    def __init__(self, ticket_id: _Optional[str] = ..., player: _Optional[str] = ..., mode: _Optional[str] = ..., players: _Optional[int] = ..., enqueued_ms: _Optional[int] = ..., expires_ms: _Optional[int] = ...) -> None: ...

class WatchTicketRequest(_message.Message):
    __slots__ = ("ticket_id", "player")
    TICKET_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    ticket_id: str
    player: str
    def __init__(self, ticket_id: _Optional[str] = ..., player: _Optional[str] = ...) -> None: ...

class TicketUpdate(_message.Message):
    __slots__ = ("state", "waited_ms", "game_id", "seat", "seat_token")
    class State(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        STATE_UNSPECIFIED: _ClassVar[TicketUpdate.State]
        WAITING: _ClassVar[TicketUpdate.State]
        MATCHED: _ClassVar[TicketUpdate.State]
        CANCELLED: _ClassVar[TicketUpdate.State]
        EXPIRED: _ClassVar[TicketUpdate.State]
    STATE_UNSPECIFIED: TicketUpdate.State
    WAITING: TicketUpdate.State
    MATCHED: TicketUpdate.State
    CANCELLED: TicketUpdate.State
    EXPIRED: TicketUpdate.State
    STATE_FIELD_NUMBER: _ClassVar[int]
    WAITED_MS_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    state: TicketUpdate.State
    waited_ms: int
    game_id: str
    seat: _common_pb2.Seat
    seat_token: str
    def __init__(self, state: _Optional[_Union[TicketUpdate.State, str]] = ..., waited_ms: _Optional[int] = ..., game_id: _Optional[str] = ..., seat: _Optional[_Union[_common_pb2.Seat, _Mapping]] = ..., seat_token: _Optional[str] = ...) -> None: ...

class CancelRequest(_message.Message):
    __slots__ = ("ticket_id", "player")
    TICKET_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    ticket_id: str
    player: str
    def __init__(self, ticket_id: _Optional[str] = ..., player: _Optional[str] = ...) -> None: ...

class CancelResponse(_message.Message):
    __slots__ = ("cancelled",)
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    cancelled: bool
    def __init__(self, cancelled: _Optional[bool] = ...) -> None: ...

class QueueStatusRequest(_message.Message):
    __slots__ = ("mode", "players")
    MODE_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    mode: str
    players: int
    def __init__(self, mode: _Optional[str] = ..., players: _Optional[int] = ...) -> None: ...

class QueueStatusResponse(_message.Message):
    __slots__ = ("waiting", "oldest_wait_ms")
    WAITING_FIELD_NUMBER: _ClassVar[int]
    OLDEST_WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    waiting: int
    oldest_wait_ms: int
    def __init__(self, waiting: _Optional[int] = ..., oldest_wait_ms: _Optional[int] = ...) -> None: ...

class LeaderboardRequest(_message.Message):
    __slots__ = ("mode", "limit", "offset")
    MODE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    mode: str
    limit: int
    offset: int
    def __init__(self, mode: _Optional[str] = ..., limit: _Optional[int] = ..., offset: _Optional[int] = ...) -> None: ...

class Rating(_message.Message):
    __slots__ = ("player", "mu", "sigma", "ordinal", "games")
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    ORDINAL_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    player: str
    mu: float
    sigma: float
    ordinal: float
    games: int
    def __init__(self, player: _Optional[str] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., ordinal: _Optional[float] = ..., games: _Optional[int] = ...) -> None: ...

class LeaderboardResponse(_message.Message):
    __slots__ = ("ratings",)
    RATINGS_FIELD_NUMBER: _ClassVar[int]
    ratings: _containers.RepeatedCompositeFieldContainer[Rating]
    def __init__(self, ratings: _Optional[_Iterable[_Union[Rating, _Mapping]]] = ...) -> None: ...

class ListModesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Mode(_message.Message):
    __slots__ = ("id", "ruleset", "players", "options_json", "bot_after_ms", "min_humans")
    ID_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    BOT_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    MIN_HUMANS_FIELD_NUMBER: _ClassVar[int]
    id: str
    ruleset: str
    players: int
    options_json: str
    bot_after_ms: int
    min_humans: int
    def __init__(self, id: _Optional[str] = ..., ruleset: _Optional[str] = ..., players: _Optional[int] = ..., options_json: _Optional[str] = ..., bot_after_ms: _Optional[int] = ..., min_humans: _Optional[int] = ...) -> None: ...

class ListModesResponse(_message.Message):
    __slots__ = ("modes",)
    MODES_FIELD_NUMBER: _ClassVar[int]
    modes: _containers.RepeatedCompositeFieldContainer[Mode]
    def __init__(self, modes: _Optional[_Iterable[_Union[Mode, _Mapping]]] = ...) -> None: ...
