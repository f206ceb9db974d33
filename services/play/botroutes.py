"""The Bot API's routes (handled by botapi.BotHttp, by name) and the organisers' account routes;
routes.py adds them to its table (`served="bot"`: this router serves them, not the play API's),
so they are in the same OpenAPI document."""

from __future__ import annotations

from . import botschema, schema
from .apiroute import ApiRoute as Route
from .apiroute import Param

BOT_SEAT = "/api/bot/games/{game}/seats/{seat}"
BOT_SEAT_ERRORS = (400, 401, 403, 404, 503)


def _make() -> list[Route]:
    lang = Param(
        "lang",
        "the language of prompts and labels: zh or en (default: the Accept-Language, else en)",
        {"type": "string", "enum": ["zh", "en"]},
    )
    FROM = Param(  # noqa: N806
        "from",
        "the last entry already held (0: from the start); Last-Event-ID takes its place",
        {"type": "integer", "minimum": 0},
    )
    routes = [
        Route(
            "bot_me",
            "GET",
            "/api/bot/me",
            "The bot the token belongs to: its live seats, the table it waits at, its ratings",
            response=botschema.BotMe,
            auth="bot",
            errors=(401, 503),
        ),
        Route(
            "bot_events",
            "GET",
            "/api/bot/events",
            "Where the bot is seated, live: every seat a tournament or a table gives it. While this "
            "stream is open, the table the bot waits at is kept (a ticket nobody watches expires)",
            auth="bot",
            errors=(400, 401),
            events=(
                "`id: ID` + `event: seated` + `data: SeatNotice` per seat (ID resumes: "
                "Last-Event-ID, or `after`); comments (`: keep-alive`) every 15 s"
            ),
            query=(
                Param(
                    "after",
                    "the last `id` already seen (default 0: every seat kept, the newest 1,000)",
                    {"type": "string"},
                ),
            ),
        ),
        Route(
            "bot_games",
            "GET",
            "/api/bot/games",
            "The bot's seats in games that are not over",
            response=botschema.BotSeats,
            auth="bot",
            errors=(401, 503),
        ),
        Route(
            "bot_seat_view",
            "GET",
            BOT_SEAT,
            "The seat's view now (own hand, role and general; every seat's public state), its "
            "pending decision with labelled options, whether its built-in bot plays it (托管)",
            response=schema.SeatView,
            auth="bot",
            errors=BOT_SEAT_ERRORS,
            query=(lang,),
        ),
        Route(
            "bot_seat_stream",
            "GET",
            BOT_SEAT + "/stream",
            "The seat's log entries (redacted for the seat) from `from`, live, each batch followed "
            "by `event: decision` when the seat's pending decision changed: the seat stream of "
            "the play API, for a bot's seat",
            auth="bot",
            errors=BOT_SEAT_ERRORS,
            events=(
                "`id: N` + `data: ENTRY` per entry (N the seat's position; ENTRY one of HeaderEntry, "
                "EventEntry, AnswerEntry, RevealEntry, ControlEntry, OtherEntry, told apart by "
                "`kind`); `event: decision` + `data: SeatMessage`; `event: end` after the last "
                'entry; `event: refused` + `data: {"error"}` if the stream must stop'
            ),
            query=(FROM, lang),
        ),
        Route(
            "bot_answer",
            "POST",
            BOT_SEAT + "/answer",
            "Answer the seat's pending decision (checked by the engine like a person's; sent twice, "
            "applied once)",
            schema.Answer,
            schema.Answered,
            auth="bot",
            errors=(*BOT_SEAT_ERRORS, 409, 415, 429),
        ),
        Route(
            "bot_hosting",
            "POST",
            BOT_SEAT + "/hosted",
            "托管: let the seat's built-in bot play it (true; at `level`, one of /api/modes "
            "`bot_levels`, if given, else the level chosen before, else the table's), or take the "
            "seat back (false) after time-outs put it on 托管",
            schema.Hosting,
            schema.Hosted,
            auth="bot",
            errors=(*BOT_SEAT_ERRORS, 409, 415),
        ),
        Route(
            "bot_join",
            "POST",
            "/api/bot/tables/{table}/join",
            "Wait at an open table (one at a time; the bot may play any number of games at once)",
            response=schema.Joined,
            auth="bot",
            errors=(401, 404, 409, 503),
        ),
        Route(
            "bot_quickplay",
            "POST",
            "/api/bot/quickplay",
            "Wait at an open table with these ruleset, size and options, or open one",
            schema.QuickPlay,
            schema.Joined,
            auth="bot",
            errors=(400, 401, 409, 415, 503),
        ),
        Route(
            "bot_leave",
            "DELETE",
            "/api/bot/ticket",
            "Stop waiting at the table",
            response=botschema.BotMe,
            auth="bot",
            errors=(401, 409, 503),
        ),
        Route(
            "create_bot_account",
            "POST",
            "/api/bot-accounts",
            "Issue a bot account (organisers): its player id and token, shown once",
            botschema.NewBotAccount,
            botschema.IssuedBot,
            201,
            auth="organiser",
            errors=(400, 401, 415),
        ),
        Route(
            "bot_accounts",
            "GET",
            "/api/bot-accounts",
            "The newest bot accounts (ids and names: what a tournament may enter)",
            response=botschema.BotAccounts,
            errors=(503,),
        ),
        Route(
            "organiser",
            "GET",
            "/api/organiser",
            "Who an organiser token belongs to (the page's sign-in check)",
            response=botschema.Organiser,
            auth="organiser",
            errors=(401,),
        ),
    ]
    return routes


BOT_ROUTES = _make()
"""The Bot API's and the organisers' account routes (routes.py lists them too, for its OpenAPI document)."""
BOT_STREAM_TYPES = (botschema.SeatNotice,)
"""Bodies the Bot API's streams send (for the document's components)."""
