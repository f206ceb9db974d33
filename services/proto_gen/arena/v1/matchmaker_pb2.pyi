from services.proto_gen.arena.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EnqueueRequest(_message.Message):
    __slots__ = ("player", "mode", "players", "name", "table")
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    player: str
    mode: str
    players: int
    name: str
    table: str
    def __init__(self, player: _Optional[str] = ..., mode: _Optional[str] = ..., players: _Optional[int] = ..., name: _Optional[str] = ..., table: _Optional[str] = ...) -> None: ...

class Ticket(_message.Message):
    __slots__ = ("ticket_id", "player", "mode", "players", "enqueued_ms", "expires_ms", "table")
    TICKET_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    ENQUEUED_MS_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_MS_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    ticket_id: str
    player: str
    mode: str
    players: int
    enqueued_ms: int
    expires_ms: int
    table: str
    def __init__(self, ticket_id: _Optional[str] = ..., player: _Optional[str] = ..., mode: _Optional[str] = ..., players: _Optional[int] = ..., enqueued_ms: _Optional[int] = ..., expires_ms: _Optional[int] = ..., table: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("modes", "bot_levels")
    MODES_FIELD_NUMBER: _ClassVar[int]
    BOT_LEVELS_FIELD_NUMBER: _ClassVar[int]
    modes: _containers.RepeatedCompositeFieldContainer[Mode]
    bot_levels: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, modes: _Optional[_Iterable[_Union[Mode, _Mapping]]] = ..., bot_levels: _Optional[_Iterable[str]] = ...) -> None: ...

class TableSettings(_message.Message):
    __slots__ = ("ruleset", "players", "options_json", "bot_after_ms", "bot_level", "time_limit_ms", "hosted_after")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    BOT_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    BOT_LEVEL_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_MS_FIELD_NUMBER: _ClassVar[int]
    HOSTED_AFTER_FIELD_NUMBER: _ClassVar[int]
    ruleset: str
    players: int
    options_json: str
    bot_after_ms: int
    bot_level: str
    time_limit_ms: int
    hosted_after: int
    def __init__(self, ruleset: _Optional[str] = ..., players: _Optional[int] = ..., options_json: _Optional[str] = ..., bot_after_ms: _Optional[int] = ..., bot_level: _Optional[str] = ..., time_limit_ms: _Optional[int] = ..., hosted_after: _Optional[int] = ...) -> None: ...

class Table(_message.Message):
    __slots__ = ("table_id", "settings", "creator", "created_ms", "waiting")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    CREATOR_FIELD_NUMBER: _ClassVar[int]
    CREATED_MS_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    settings: TableSettings
    creator: str
    created_ms: int
    waiting: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, table_id: _Optional[str] = ..., settings: _Optional[_Union[TableSettings, _Mapping]] = ..., creator: _Optional[str] = ..., created_ms: _Optional[int] = ..., waiting: _Optional[_Iterable[str]] = ...) -> None: ...

class CreateTableRequest(_message.Message):
    __slots__ = ("player", "name", "settings")
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    player: str
    name: str
    settings: TableSettings
    def __init__(self, player: _Optional[str] = ..., name: _Optional[str] = ..., settings: _Optional[_Union[TableSettings, _Mapping]] = ...) -> None: ...

class CreateTableResponse(_message.Message):
    __slots__ = ("table", "ticket")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    TICKET_FIELD_NUMBER: _ClassVar[int]
    table: Table
    ticket: Ticket
    def __init__(self, table: _Optional[_Union[Table, _Mapping]] = ..., ticket: _Optional[_Union[Ticket, _Mapping]] = ...) -> None: ...

class ListTablesRequest(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: int
    def __init__(self, limit: _Optional[int] = ...) -> None: ...

class ListTablesResponse(_message.Message):
    __slots__ = ("tables",)
    TABLES_FIELD_NUMBER: _ClassVar[int]
    tables: _containers.RepeatedCompositeFieldContainer[Table]
    def __init__(self, tables: _Optional[_Iterable[_Union[Table, _Mapping]]] = ...) -> None: ...
