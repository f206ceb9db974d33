"""Bot players: policies that answer decisions from a seat's view, and the bot worker."""
