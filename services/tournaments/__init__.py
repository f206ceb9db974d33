"""Tournaments: what one is (spec.py), its journal and files (journal.py), the loop that plays it
through a running platform (runner.py), telling bot accounts where they sit (seating.py), its
standings (standings.py) and the matches it publishes (matches.py). `arena tournament`
(services/platform/tournament.py) and the web server (services/play/tournaments.py) host the
same loop over the same files."""
