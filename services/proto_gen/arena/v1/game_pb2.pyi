from services.proto_gen.arena.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DeterminizeRequest(_message.Message):
    __slots__ = ("game_id", "seat_token", "decision_id", "worlds")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    WORLDS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat_token: str
    decision_id: int
    worlds: _containers.RepeatedCompositeFieldContainer[World]
    def __init__(self, game_id: _Optional[str] = ..., seat_token: _Optional[str] = ..., decision_id: _Optional[int] = ..., worlds: _Optional[_Iterable[_Union[World, _Mapping]]] = ...) -> None: ...

class World(_message.Message):
    __slots__ = ("seed", "roles")
    class RolesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: str
        def __init__(self, key: _Optional[int] = ..., value: _Optional[str] = ...) -> None: ...
    SEED_FIELD_NUMBER: _ClassVar[int]
    ROLES_FIELD_NUMBER: _ClassVar[int]
    seed: int
    roles: _containers.ScalarMap[int, str]
    def __init__(self, seed: _Optional[int] = ..., roles: _Optional[_Mapping[int, str]] = ...) -> None: ...

class DeterminizeResponse(_message.Message):
    __slots__ = ("states",)
    STATES_FIELD_NUMBER: _ClassVar[int]
    states: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, states: _Optional[_Iterable[bytes]] = ...) -> None: ...

class CreateGameRequest(_message.Message):
    __slots__ = ("match_id", "ruleset", "seats", "options_json", "time_limit_ms", "hosted_after", "issued_at_ms", "nonce", "signature")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_MS_FIELD_NUMBER: _ClassVar[int]
    HOSTED_AFTER_FIELD_NUMBER: _ClassVar[int]
    ISSUED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    NONCE_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    ruleset: str
    seats: _containers.RepeatedCompositeFieldContainer[_common_pb2.Seat]
    options_json: str
    time_limit_ms: int
    hosted_after: int
    issued_at_ms: int
    nonce: str
    signature: bytes
    def __init__(self, match_id: _Optional[str] = ..., ruleset: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[_common_pb2.Seat, _Mapping]]] = ..., options_json: _Optional[str] = ..., time_limit_ms: _Optional[int] = ..., hosted_after: _Optional[int] = ..., issued_at_ms: _Optional[int] = ..., nonce: _Optional[str] = ..., signature: _Optional[bytes] = ...) -> None: ...

class CreateGameResponse(_message.Message):
    __slots__ = ("game_id", "created", "version")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    created: bool
    version: int
    def __init__(self, game_id: _Optional[str] = ..., created: _Optional[bool] = ..., version: _Optional[int] = ...) -> None: ...

class SubmitActionRequest(_message.Message):
    __slots__ = ("game_id", "seat_token", "decision_id", "picks")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    PICKS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat_token: str
    decision_id: int
    picks: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, game_id: _Optional[str] = ..., seat_token: _Optional[str] = ..., decision_id: _Optional[int] = ..., picks: _Optional[_Iterable[str]] = ...) -> None: ...

class SubmitActionResponse(_message.Message):
    __slots__ = ("duplicate", "version", "answer", "next", "over")
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    NEXT_FIELD_NUMBER: _ClassVar[int]
    OVER_FIELD_NUMBER: _ClassVar[int]
    duplicate: bool
    version: int
    answer: _common_pb2.Answer
    next: _common_pb2.Decision
    over: bool
    def __init__(self, duplicate: _Optional[bool] = ..., version: _Optional[int] = ..., answer: _Optional[_Union[_common_pb2.Answer, _Mapping]] = ..., next: _Optional[_Union[_common_pb2.Decision, _Mapping]] = ..., over: _Optional[bool] = ...) -> None: ...

class SubmitActionsRequest(_message.Message):
    __slots__ = ("actions",)
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[SubmitActionRequest]
    def __init__(self, actions: _Optional[_Iterable[_Union[SubmitActionRequest, _Mapping]]] = ...) -> None: ...

class SubmitActionResult(_message.Message):
    __slots__ = ("code", "reason", "response")
    CODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    code: int
    reason: str
    response: SubmitActionResponse
    def __init__(self, code: _Optional[int] = ..., reason: _Optional[str] = ..., response: _Optional[_Union[SubmitActionResponse, _Mapping]] = ...) -> None: ...

class SubmitActionsResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[SubmitActionResult]
    def __init__(self, results: _Optional[_Iterable[_Union[SubmitActionResult, _Mapping]]] = ...) -> None: ...

class BotSessionRequest(_message.Message):
    __slots__ = ("answers",)
    ANSWERS_FIELD_NUMBER: _ClassVar[int]
    answers: _containers.RepeatedCompositeFieldContainer[BotAnswer]
    def __init__(self, answers: _Optional[_Iterable[_Union[BotAnswer, _Mapping]]] = ...) -> None: ...

class BotAnswer(_message.Message):
    __slots__ = ("tag", "action")
    TAG_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    tag: int
    action: SubmitActionRequest
    def __init__(self, tag: _Optional[int] = ..., action: _Optional[_Union[SubmitActionRequest, _Mapping]] = ...) -> None: ...

class BotSessionResponse(_message.Message):
    __slots__ = ("decisions", "results")
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    decisions: _containers.RepeatedScalarFieldContainer[bytes]
    results: _containers.RepeatedCompositeFieldContainer[BotAnswerResult]
    def __init__(self, decisions: _Optional[_Iterable[bytes]] = ..., results: _Optional[_Iterable[_Union[BotAnswerResult, _Mapping]]] = ...) -> None: ...

class BotAnswerResult(_message.Message):
    __slots__ = ("tag", "result")
    TAG_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    tag: int
    result: SubmitActionResult
    def __init__(self, tag: _Optional[int] = ..., result: _Optional[_Union[SubmitActionResult, _Mapping]] = ...) -> None: ...

class GetViewRequest(_message.Message):
    __slots__ = ("game_id", "seat_token")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat_token: str
    def __init__(self, game_id: _Optional[str] = ..., seat_token: _Optional[str] = ...) -> None: ...

class GetViewResponse(_message.Message):
    __slots__ = ("version", "viewer", "events", "pending", "over")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    VIEWER_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    OVER_FIELD_NUMBER: _ClassVar[int]
    version: int
    viewer: int
    events: _containers.RepeatedCompositeFieldContainer[_common_pb2.EventEnvelope]
    pending: _common_pb2.Decision
    over: bool
    def __init__(self, version: _Optional[int] = ..., viewer: _Optional[int] = ..., events: _Optional[_Iterable[_Union[_common_pb2.EventEnvelope, _Mapping]]] = ..., pending: _Optional[_Union[_common_pb2.Decision, _Mapping]] = ..., over: _Optional[bool] = ...) -> None: ...

class StreamViewRequest(_message.Message):
    __slots__ = ("game_id", "seat_token", "from_seq", "upto_seq")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    UPTO_SEQ_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat_token: str
    from_seq: int
    upto_seq: int
    def __init__(self, game_id: _Optional[str] = ..., seat_token: _Optional[str] = ..., from_seq: _Optional[int] = ..., upto_seq: _Optional[int] = ...) -> None: ...

class GetDecisionRequest(_message.Message):
    __slots__ = ("game_id", "seat_token")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat_token: str
    def __init__(self, game_id: _Optional[str] = ..., seat_token: _Optional[str] = ...) -> None: ...

class SetHostedRequest(_message.Message):
    __slots__ = ("game_id", "seat_token", "hosted", "resign", "level", "level_only")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    HOSTED_FIELD_NUMBER: _ClassVar[int]
    RESIGN_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    LEVEL_ONLY_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat_token: str
    hosted: bool
    resign: bool
    level: str
    level_only: bool
    def __init__(self, game_id: _Optional[str] = ..., seat_token: _Optional[str] = ..., hosted: _Optional[bool] = ..., resign: _Optional[bool] = ..., level: _Optional[str] = ..., level_only: _Optional[bool] = ...) -> None: ...

class SetHostedResponse(_message.Message):
    __slots__ = ("version", "hosted")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    HOSTED_FIELD_NUMBER: _ClassVar[int]
    version: int
    hosted: bool
    def __init__(self, version: _Optional[int] = ..., hosted: _Optional[bool] = ...) -> None: ...

class GetDecisionResponse(_message.Message):
    __slots__ = ("over", "decision", "version")
    OVER_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    over: bool
    decision: _common_pb2.Decision
    version: int
    def __init__(self, over: _Optional[bool] = ..., decision: _Optional[_Union[_common_pb2.Decision, _Mapping]] = ..., version: _Optional[int] = ...) -> None: ...
