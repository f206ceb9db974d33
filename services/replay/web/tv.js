// TV (#/tv): a featured live game, as a spectator sees it, with its chart; when it ends, the next
// one. The server picks it by a stated rule (GET /api/tv: the live game with the most seats
// alive, then the closest on its chart, then the one furthest along), shown above the table.
"use strict";

Object.assign(WORDS.zh, {
  "tv.title": "电视", "tv.rule": "选台规则：{rule}", "tv.none": "现在没有进行中的对局：稍后再来。",
  "tv.next": "对局结束：{s} 秒后换到下一局", "tv.now": "正在播放：{game}",
});
Object.assign(WORDS.en, {
  "tv.title": "TV", "tv.rule": "picked by: {rule}", "tv.none": "No game is being played now: the next one shows here.",
  "tv.next": "game over: the next game in {s} s", "tv.now": "on now: {game}",
});

const TV_POLL_MS = 3000;
const TV_LINGER_MS = 6000; // the end stays on screen this long

async function tv() {
  const here = page;
  const pick = await getJSON("/api/tv");
  if (!here.live) return;
  const timers = [];
  const stopTv = () => timers.forEach((x) => clearTimeout(x) || clearInterval(x));
  if (!pick.game) {
    app.innerHTML = `<section class="tv tv-empty"><p class="tv-none"></p><p class="tv-rule"></p></section>`;
    q(".tv-none").textContent = t("tv.none");
    q(".tv-rule").textContent = t("tv.rule", { rule: pick.rule });
    q("#title").textContent = t("tv.title");
    timers.push(setTimeout(() => { if (here.live) route(); }, TV_POLL_MS));
    stopCurrent = stopTv;
    return;
  }
  await ROUTES.live(["live", pick.game], new URLSearchParams());
  if (!here.live) return;
  q("#title").textContent = `${t("tv.title")} · ${pick.game}`;
  const banner = document.createElement("div");
  banner.className = "tv-banner";
  banner.id = "tv-banner";
  banner.dataset.game = pick.game;
  banner.innerHTML = `<b class="tv-now"></b> <span class="tv-rule"></span> <span class="tv-next"></span>`;
  banner.querySelector(".tv-now").textContent = t("tv.now", { game: pick.game });
  banner.querySelector(".tv-rule").textContent = t("tv.rule", { rule: pick.rule });
  const table = q(".table-page");
  if (table) table.parentNode.insertBefore(banner, table);
  const liveStop = stopCurrent;
  stopCurrent = () => { liveStop(); stopTv(); };
  const watch = setInterval(async () => {
    let info = null;
    try { info = await getJSON(`/api/games/${encodeURIComponent(pick.game)}`); } catch (err) { info = { over: true }; }
    if (!here.live || !info.over) return;
    clearInterval(watch);
    let left = Math.round(TV_LINGER_MS / 1000);
    const say = () => { banner.querySelector(".tv-next").textContent = t("tv.next", { s: left }); };
    say();
    const tick = setInterval(() => { left = Math.max(0, left - 1); say(); }, 1000);
    timers.push(tick, setTimeout(() => { if (here.live) route(); }, TV_LINGER_MS));
  }, TV_POLL_MS);
  timers.push(watch);
}

addRoute("tv", () => tv());
