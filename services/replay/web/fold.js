// The read side's fold of a viewer's entries (services/readside/fold.py), in the browser:
// foldEntry(fold, entry) takes the one envelope every channel sends ({seq, kind, ...}): an event
// folds into the view as services/rules/core/views.py apply(view, redactedEvent) does, a control
// entry says who plays a seat (托管), the seed reveal closes the log, every other kind is stepped
// over. Only already-redacted events reach the page; tests/browser/test_fold.py folds whole
// games of every ruleset here and with the server's fold and compares them after every entry.
"use strict";

function newView(viewer) {
  return { viewer, ruleset: "", seats: [], draw_count: 0, discard: [], current: -1, phase: "",
           round: 0, over: false, winners: [], seq: 0 };
}

function newSeat(i) {
  return { seat: i, general: "", role: "", hp: 0, max_hp: 0, alive: true, hand_count: 0,
           hand: [], equip: [], judge: [], chained: false, counters: {} };
}

function without(list, cards) { return list.filter((c) => !cards.includes(c)); }

function zoneRemove(v, zone, seat, cards, count) {
  if (zone === "draw") v.draw_count -= count;
  else if (zone === "discard") v.discard = without(v.discard, cards);
  else if (seat >= 0 && zone === "hand") {
    const s = v.seats[seat];
    s.hand_count -= count;
    // an unseen card left: any card we knew to be in that hand may be the one that went
    s.hand = cards.length || !count ? without(s.hand, cards) : [];
  } else if (seat >= 0 && zone === "equip") v.seats[seat].equip = without(v.seats[seat].equip, cards);
  else if (seat >= 0 && zone === "judge") v.seats[seat].judge = without(v.seats[seat].judge, cards);
}

function zoneAdd(v, zone, seat, cards, count) {
  if (zone === "draw") v.draw_count += count;
  else if (zone === "discard") v.discard.push(...cards);
  else if (seat >= 0 && zone === "hand") {
    v.seats[seat].hand_count += count;
    v.seats[seat].hand.push(...cards);
  } else if (seat >= 0 && zone === "equip") v.seats[seat].equip.push(...cards);
  else if (seat >= 0 && zone === "judge") v.seats[seat].judge.push(...cards);
}

function applyEvent(v, e) {
  v.seq += 1;
  const s = (i) => v.seats[i];
  switch (e.type) {
    case "cards_moved":
      zoneRemove(v, e.src, e.src_seat ?? -1, e.cards || [], e.count);
      zoneAdd(v, e.dst, e.dst_seat ?? -1, e.cards || [], e.count);
      break;
    case "damaged": s(e.target).hp = e.hp; break;
    case "hp_lost": case "recovered": s(e.seat).hp = e.hp; break;
    case "max_hp_changed": s(e.seat).max_hp = e.max_hp; s(e.seat).hp = e.hp; break;
    case "turn_started": v.current = e.seat; v.round = e.round; break;
    case "phase_started": v.phase = e.phase; break;
    case "died": s(e.seat).alive = false; s(e.seat).role = e.role; break;
    case "chain_toggled": s(e.seat).chained = e.chained; break;
    case "role_assigned": s(e.seat).role = e.role; break;
    case "role_learned": if (e.seat >= 0) s(e.seat).role = e.role; break;
    case "general_chosen":
      if (e.general) { s(e.seat).general = e.general; s(e.seat).hp = e.hp; s(e.seat).max_hp = e.max_hp; }
      break;
    case "counter_changed": s(e.seat).counters[e.counter] = e.value; break;
    case "deck_reshuffled": v.draw_count += e.count; v.discard = []; break;
    case "game_started":
      v.ruleset = e.ruleset;
      v.seats = Array.from({ length: e.players }, (_, i) => newSeat(i));
      v.draw_count = e.deck || 0;
      break;
    case "game_ended":
      v.over = true;
      v.winners = (e.winner_seats || []).slice();
      (e.roles || []).forEach((r, i) => { if (v.seats[i]) v.seats[i].role = r; });
      break;
    default: break;
  }
  return v;
}

function newFold(viewer) { return { view: newView(viewer), hosted: new Set(), closed: false }; }

// One envelope into the fold (in place; returns it): every kind a log can hold is accepted.
function foldEntry(f, x) {
  if (x.kind === "event") f.view = applyEvent(f.view, x.event);
  else if (x.kind === "control") (x.control.hosted ? f.hosted.add(x.control.seat) : f.hosted.delete(x.control.seat));
  else if (x.kind === "seed_reveal") f.closed = true;
  return f;
}
