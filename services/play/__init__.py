"""People play: the HTTP JSON + SSE API behind the web page (see README.md)."""
