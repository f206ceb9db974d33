"""The Bot API as a channel of the non-interference harness (noninterference.py CHANNELS): the
HTTP bytes a bot account seated at seat V reads, its seat's view and its seat stream (entries and
decision messages), from the real router (services/play/botapi.py) over the side's read side
and engine. The server's clock (`now_ms`) is taken out: it is the only thing that differs
between two reads of the same game."""

from __future__ import annotations

import re

import redis.asyncio as aioredis

from services.play.accounts import Accounts, BotAccount
from services.play.botapi import BotApi, BotRouter
from services.play.botroutes import BOT_ROUTES
from services.play.clients import Engine, Matchmaker
from services.play.identity import Sessions
from services.play.service import Play
from services.readside.access import hmac_seat_check
from services.replay import Replay
from services.replay.http import HttpServer

TOKEN = "bot_non-interference"
_CLOCK = re.compile(rb'"now_ms":\d+')


class OneBot(Accounts):
    """Accounts holding one bot, player ``player``, whose token is TOKEN (no Redis needed)."""

    def __init__(self, client: aioredis.Redis, player: str) -> None:
        super().__init__(client, "non-interference")
        self.one = BotAccount(player, player, "test", 0)

    async def bot_of(self, token: str) -> BotAccount | None:
        return self.one if token == TOKEN else None

    async def announced(self, player: str, game: str) -> bool:
        return False


async def bot_api(side: object, viewer: int, last: int) -> list[bytes]:
    """What the bot sitting at seat ``viewer`` (its player id is the header's, ``pV``) reads
    over HTTP: its seat's view and its seat stream (nothing for a spectator: a bot is a seat)."""
    from .noninterference import GAME, SECRET, Side, _end, _get, _sse

    assert isinstance(side, Side)
    if viewer < 0 or (await side.games.get(GAME)).header.seats[viewer].bot:
        return []  # a spectator, or a built-in bot's seat: no bot account sits there
    replay = Replay(side.games.store, seat_check=hmac_seat_check(SECRET), secret=SECRET)
    client = aioredis.Redis()  # never asked: the seat's routes read the read side and engine
    engine = Engine([f"127.0.0.1:{side.grpc_port}"])
    play = Play(
        replay,
        Sessions(client, "non-interference", SECRET),
        Matchmaker("127.0.0.1:9", SECRET),
        engine,
    )
    router = BotRouter(play, BotApi(play, OneBot(client, f"p{viewer}"), SECRET, "ni"), BOT_ROUTES)
    http = HttpServer(replay, [router])
    port = await http.start()
    auth = f"Authorization: Bearer {TOKEN}\r\n"
    try:
        seat = f"/api/bot/games/{GAME}/seats/{viewer}"
        view = await _get(port, seat, auth)
        stream = await _sse(port, seat + "/stream", await _end(side, viewer, last), auth)
        assert b'"seat":%d' % viewer in view, view[:300]  # the channel answered, not refused
        return [_CLOCK.sub(b"", view), _CLOCK.sub(b"", stream)]
    finally:
        await http.close()
        await play.close()
        await replay.close()
        await client.aclose()
